package qlab.pipeline.matrix;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import qlab.pipeline.CalibrationSet;
import qlab.pipeline.KvCacheChoice;
import qlab.pipeline.QuantSpec;

/**
 * The cross product formats × group sizes × importance matrices × activations × KV cache types × threads,
 * canonicalised and deduplicated by config id.
 *
 * <p>Canonicalisation: a group size means nothing to a mix of per-row formats (f32, f16, bf16, int8),
 * so such configs carry no group size; an importance matrix means nothing to a mix of float formats,
 * so such configs carry none, and have no int8-activation path either (only integer formats have
 * one), so they take f32 activations. Different axis values can therefore give the same config, which is
 * kept once. A group size that some grouped format of the mix does not support gives a config that
 * is kept with its reason as a skipped row, never dropped.
 *
 * @param configs    distinct configs in axis order, runnable and skipped
 * @param duplicates how many combinations collapsed into an earlier config
 */
public record MatrixExpansion(List<SweepConfig> configs, int duplicates) {

    public static MatrixExpansion expand(SweepMatrix m) {
        Map<String, SweepConfig> byId = new LinkedHashMap<>();
        int duplicates = 0;
        for (FormatChoice format : mixes(m)) {
            for (int group : m.groupSizes()) {
                for (String imatrix : m.imatrices()) {
                    for (Activations activations : m.activations()) {
                        for (KvCacheChoice kvCache : m.kvCaches()) {
                            for (int threads : m.threads()) {
                                SweepConfig c = config(m, format, group, imatrix, activations, kvCache, threads);
                                if (byId.putIfAbsent(c.configId(), c) != null) {
                                    duplicates++;
                                }
                            }
                        }
                    }
                }
            }
        }
        return new MatrixExpansion(List.copyOf(byId.values()), duplicates);
    }

    /**
     * The mixes to run: the formats axis of an ordinary sweep; for a sensitivity sweep the reference
     * alone, then each group in each candidate format with the rest at the reference.
     */
    static List<FormatChoice> mixes(SweepMatrix m) {
        Sensitivity s = m.sensitivity();
        if (s == null) {
            return m.formats();
        }
        List<FormatChoice> mixes = new ArrayList<>();
        mixes.add(new FormatChoice(s.reference(), Map.of()));
        for (Sensitivity.TensorGroup g : s.groups(Sensitivity.modelConfig(m.model()))) {
            for (FormatChoice candidate : m.formats()) {
                if (!candidate.base().equals(s.reference())) {
                    mixes.add(new FormatChoice(s.reference(), Map.of(g.id(), candidate.base())));
                }
            }
        }
        return mixes;
    }

    public long runnable() {
        return configs.stream().filter(c -> !c.skipped()).count();
    }

    private static SweepConfig config(SweepMatrix m, FormatChoice format, int group, String imatrix,
                                      Activations activations, KvCacheChoice kvCache, int threads) {
        List<String> mix = new ArrayList<>();
        mix.add(format.base());
        mix.addAll(format.overrides().values());

        boolean anyGrouped = false;
        boolean anyQuantized = false;
        String skip = null;
        for (int i = 0; i < mix.size(); i++) {
            String name = mix.get(i);
            FormatCatalog.Traits t = FormatCatalog.traits(name)
                    .orElseThrow(() -> new IllegalStateException("format " + name + " passed parsing but is unknown"));
            anyQuantized |= t.quantized();
            if (t.perRow()) {
                continue;
            }
            anyGrouped = true;
            if (skip == null && !t.groupSizes().contains(group)) {
                String who = i == 0 ? name : "override " + overrideOf(format, name) + "=" + name;
                skip = who + " supports group size " + sizes(t.groupSizes()) + ", not " + group;
            }
        }
        Integer groupSize = anyGrouped ? group : null;
        CalibrationSet calibration = imatrix.equals(SweepMatrix.NO_IMATRIX) || !anyQuantized
                ? null : m.calibration().get(imatrix);
        Activations act = anyQuantized ? activations : Activations.F32;
        QuantSpec quant = new QuantSpec(format.base(), groupSize, format.overrides());
        List<Measurement> measurements = m.measurements().stream().sorted().toList();
        String id = ConfigId.of(m.model(), quant, calibration, act, kvCache, threads, m.eval(), m.throughput(),
                measurements);
        return new SweepConfig(id, m.model(), quant, calibration, act, kvCache, threads, m.eval(), m.throughput(),
                measurements, skip);
    }

    private static String overrideOf(FormatChoice format, String name) {
        return format.overrides().entrySet().stream().filter(e -> e.getValue().equals(name))
                .map(Map.Entry::getKey).findFirst().orElse("?");
    }

    private static String sizes(List<Integer> sizes) {
        if (sizes.size() == 1) {
            return sizes.get(0) + " only";
        }
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < sizes.size(); i++) {
            sb.append(i == 0 ? "" : i == sizes.size() - 1 ? " or " : ", ").append(sizes.get(i));
        }
        return sb.toString();
    }
}
