package qlab.pipeline.report;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import qlab.pipeline.results.ResultRow;

class SweepReportTest {

    @TempDir
    Path dir;

    private static ResultRow row(String id, String format, double bpw, double kl, double tps, String status,
                                 String reason) {
        Map<Integer, Double> batch = new TreeMap<>(Map.of(1, tps, 4, tps * 3));
        boolean ok = status.equals("ok");
        return new ResultRow("run1", 1L, id, "tiny", "h", format, 32, Map.of("attn", "q8_0"), null, "f32", "f32", 2,
                ok ? bpw : null, 1000L, ok ? 12 * (1 + kl) : null, null, ok ? kl : null, null, null, null, null,
                ok ? tps : null, null, null, ok ? batch : null, null, status, reason,
                ResultRow.Machine.UNKNOWN, null, null, null, null, null);
    }

    @Test
    void chartsAndASelfContainedReport() throws Exception {
        List<ResultRow> rows = new ArrayList<>();
        rows.add(row("a", "q8_0", 8.5, 0.001, 30, "ok", null));
        rows.add(row("b", "q4_0", 4.5, 0.02, 50, "ok", null));
        rows.add(row("c", "q4_8", 4.6, 0.03, 45, "ok", null));
        rows.add(row("d", "q2_0", 2.5, 0.4, 70, "ok", null));
        rows.add(row("e", "b1_0", 1.5, 0, 0, "failed", "quality: ArithmeticException: ppl is NaN"));
        Path report = SweepReport.write(dir, rows, "unit <test>");

        assertEquals(dir.resolve("report.html"), report);
        String html = Files.readString(report);
        assertTrue(html.contains("<title>qlab sweep: unit &lt;test&gt;</title>"), "title escaped");
        assertTrue(html.contains("<table class=\"frontier\" id=\"pareto_bpw_kl\">"));
        assertTrue(html.contains("<table class=\"frontier\" id=\"pareto_tps_kl\">"));
        // The frontier (bpw, KL) is d, b, a; c is dominated by b.
        int d = html.indexOf("q2_0/32+attn=q8_0 t2");
        int b = html.indexOf("q4_0/32+attn=q8_0 t2");
        int a = html.indexOf("q8_0/32+attn=q8_0 t2");
        assertTrue(d > 0 && d < b && b < a, "frontier rows in order of bits per weight");
        assertTrue(html.contains("ppl is NaN"), "failed rows and their reasons are listed");
        assertEquals(4, html.split("data:image/png;base64,", -1).length - 1, "four charts embedded");
        assertFalse(html.contains("http://") || html.contains("https://") || html.contains("<script"),
                "nothing to fetch: the page opens offline");
        for (String chart : List.of("kl_vs_bpw", "ppl_vs_bpw", "decode_tps_vs_bpw", "batch_scaling")) {
            assertTrue(Files.size(dir.resolve("charts/" + chart + ".png")) > 1000, chart);
            String svg = Files.readString(dir.resolve("charts/" + chart + ".svg"));
            assertTrue(svg.contains("<svg xmlns='http://www.w3.org/2000/svg'"), chart);
            assertTrue(svg.contains("Pareto frontier") || chart.equals("batch_scaling"), chart + " legend");
        }
    }

    @Test
    void noChartsWithoutData() throws Exception {
        Path report = SweepReport.write(dir, List.of(row("e", "b1_0", 1.5, 0, 0, "skipped", "no")), "empty");
        String html = Files.readString(report);
        assertTrue(html.contains("No ok rows with both bits_per_weight and kl_mean."));
        assertFalse(html.contains("data:image/png"));
    }

    static ResultRow quality(String id, String format, Map<String, String> overrides, double bpw, double kl) {
        return new ResultRow("run1", 1L, id, "tiny", "h", format, 32, overrides, null, "f32", "f32", 1, bpw, 1000L,
                12 * (1 + kl), null, kl, 0.0001, null, null, null, 40.0, null, null, null, null, "ok", null,
                ResultRow.Machine.UNKNOWN, null, null, null, null, null);
    }

    @Test
    void allocatedMixesPredictedBesideMeasuredAndSensitivityRowsLeftOut() throws Exception {
        List<ResultRow> rows = List.of(
                quality("ref", "f32", Map.of(), 32, 0.0),
                quality("probe", "f32", Map.of("L0.q", "q4_0"), 30.2, 0.004),
                quality("u4", "q4_0", Map.of(), 4.5, 0.05),
                quality("u8", "q8_0", Map.of(), 8.5, 0.002),
                quality("recipe", "Q4_K_M", Map.of(), 4.9, 0.02),
                quality("hand", "q4_0", Map.of("attn", "q8_0"), 5.5, 0.03),
                quality("alloc", "q4_0", Map.of("emb", "q8_0", "L0.q", "q5_0"), 5.0, 0.012));
        new qlab.pipeline.sensitivity.SensitivityTable("f32", "h", List.of(
                new qlab.pipeline.sensitivity.SensitivityTable.Entry("L0.q", "f32", 32, 10, 40, 0, null, 0, null),
                new qlab.pipeline.sensitivity.SensitivityTable.Entry("L0.q", "q4_0", 32, 10, 6, 0.004, null, 0.004, "probe")))
                .write(qlab.pipeline.sensitivity.SensitivityTable.file(dir));
        new qlab.pipeline.sensitivity.AllocatedMixes(List.of(new qlab.pipeline.sensitivity.AllocatedMixes.Mix("5.0", 500,
                "q4_0/g32+emb=q8_0/g32+L0.q=q5_0/g32", "q4_0+L0.q=q5_0+emb=q8_0", 32, 499, 4.99, 0.010)))
                .write(qlab.pipeline.sensitivity.AllocatedMixes.file(dir));
        String html = Files.readString(SweepReport.write(dir, rows, "mixed"));
        assertTrue(html.contains("1 rows of the sensitivity sweep"), html);
        assertFalse(html.contains("L0.q=q4_0"), "the single-group row is not charted or listed");
        assertTrue(html.contains("<td class=\"t\">5.0</td><td>4.990</td><td>0.010000</td><td>0.012000 ± 0.000100</td><td>1.20</td>"),
                html);
        assertTrue(html.contains("<td class=\"t\">Q4_K_M/32: 4.900, 0.020000 ± 0.000100 (mix lower)</td>"), html);
        assertTrue(html.contains("<b>5.0</b>: default q4_0/g32; L0.q → q5_0/g32; emb → q8_0/g32"), html);
        String svg = Files.readString(dir.resolve("charts/kl_vs_bpw.svg"));
        for (String family : List.of("uniform formats", "llama.cpp recipes", "allocated mixes", "other mixes",
                "allocated mixes, predicted", "allocated, budget 5.0")) {
            assertTrue(svg.contains(family), family);
        }
    }
}
