package qlab.quant.checkpoint;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import qlab.engine.QlabException;
import qlab.engine.model.ModelConfig;
import qlab.engine.synthetic.SyntheticPreset;

class QuantPlanSelectorTest {

    private static final ModelConfig TINY = SyntheticPreset.TINY.config();

    private static String layer(int i, String matrix) {
        return "model.layers." + i + "." + matrix + ".weight";
    }

    /** The format of every matrix of the tiny model under {@code plan}, by name. */
    private static Map<String, String> formats(String plan) {
        Map<String, String> m = new TreeMap<>();
        for (QuantPlan.Assignment a : QuantPlan.parse(plan).explain(TINY, false)) {
            m.put(a.tensor(), a.format().toString());
        }
        return m;
    }

    @Test
    void oneMatrixOfOneLayer() {
        Map<String, String> f = formats("q4_0+L1.down=q8_0");
        assertEquals("q8_0", f.get(layer(1, "mlp.down_proj")));
        assertEquals("q4_0", f.get(layer(0, "mlp.down_proj")));
        assertEquals("q4_0", f.get(layer(1, "mlp.up_proj")));
        assertEquals(1, f.values().stream().filter("q8_0"::equals).count());
    }

    @Test
    void mostSpecificSelectorWins() {
        // Layer 0 in q5_0, except its v in q8_0; v elsewhere in q4_1; attention's q/k/v elsewhere in f16.
        Map<String, String> f = formats("q4_0+attn-qkv=f16+v=q4_1+L0=q5_0+L0.v=q8_0");
        assertEquals("q8_0", f.get(layer(0, "self_attn.v_proj")));
        assertEquals("q5_0", f.get(layer(0, "self_attn.q_proj")));
        assertEquals("q5_0", f.get(layer(0, "mlp.gate_proj")));
        assertEquals("q4_1", f.get(layer(1, "self_attn.v_proj")));
        assertEquals("f16", f.get(layer(1, "self_attn.k_proj")));
        assertEquals("q4_0", f.get(layer(1, "self_attn.o_proj")));
        assertEquals("q4_0", f.get("model.embed_tokens.weight"));
    }

    @Test
    void layerShorthandsCoverTheirKinds() {
        Map<String, String> f = formats("q4_0+L1.mlp=q8_0+L0.attn=f16");
        assertEquals("q8_0", f.get(layer(1, "mlp.gate_proj")));
        assertEquals("q8_0", f.get(layer(1, "mlp.down_proj")));
        assertEquals("q4_0", f.get(layer(1, "self_attn.o_proj")));
        assertEquals("f16", f.get(layer(0, "self_attn.o_proj")));
        assertEquals("f16", f.get(layer(0, "self_attn.k_proj")));
    }

    @Test
    void canonicalTextRoundTripsAndKeepsTheRoleForm() {
        QuantPlan p = QuantPlan.parse("q4_0+L1.down=q8_0+emb=q8_0+L0=q5_0+attn=q8_0+v=f16");
        assertEquals("q4_0+attn-qkv=q8_0+attn-o=q8_0+emb=q8_0+v=f16+L0=q5_0+L1.down=q8_0", p.toString());
        assertEquals(p, QuantPlan.parse(p.toString()));
        assertEquals(formats(p.toString()), formats("q4_0+L1.down=q8_0+emb=q8_0+L0=q5_0+attn=q8_0+v=f16"));
    }

    @Test
    void badSelectorsAreUserErrors() {
        String unknown = assertThrows(QlabException.class, () -> QuantPlan.parse("q4_0+L1.qq=q8_0")).getMessage();
        assertTrue(unknown.startsWith("unknown tensor selector \"qq\""), unknown);
        String emb = assertThrows(QlabException.class, () -> QuantPlan.parse("q4_0+L1.emb=q8_0")).getMessage();
        assertTrue(emb.contains("\"L1.emb\": a layer holds no emb matrix"), emb);
        String tooDeep = assertThrows(QlabException.class, () -> QuantPlan.parse("q4_0+L7.q=q8_0").explain(TINY, false))
                .getMessage();
        assertEquals("format mix \"q4_0+L7.q=q8_0\": L7.q names layer 7, but the model has 2 layers (0 to 1)", tooDeep);
        assertTrue(QuantPlan.isSelector("L12.mlp-down"));
        assertTrue(!QuantPlan.isSelector("L.q"));
    }
}
