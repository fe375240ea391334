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
        return new ResultRow("run1", 1L, id, "tiny", "h", format, 32, Map.of("attn", "q8_0"), null, "f32", 2,
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
}
