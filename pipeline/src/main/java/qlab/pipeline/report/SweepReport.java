package qlab.pipeline.report;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.Set;
import qlab.pipeline.sensitivity.AllocatedMixes;
import qlab.pipeline.sensitivity.SensitivityTable;
import qlab.pipeline.pareto.FrontierTable;
import qlab.pipeline.pareto.ParetoFrontier;
import qlab.pipeline.pareto.ResultHistory;
import qlab.pipeline.results.ResultRow;

/**
 * {@code report.html}: one self-contained page (charts embedded as base64 PNG, no scripts, no
 * external files) with the charts, the frontier tables and every config's latest row. It opens
 * offline in any browser. The charts are also written next to it as PNG and SVG.
 */
public final class SweepReport {

    private SweepReport() {
    }

    /**
     * Writes {@code dir/report.html} and {@code dir/charts/*}; returns the report's path. When the
     * directory holds a sensitivity sweep, its single-group rows are left out of the charts and
     * frontiers (they are in {@code tables/sensitivity.parquet}), and the mixes {@code qlab allocate}
     * chose are listed with their predicted and measured KL.
     */
    public static Path write(Path dir, List<ResultRow> allRows, String title) {
        try {
            Set<String> probes = SensitivityTable.probeIds(List.of(dir));
            List<ResultRow> rows = ResultHistory.latest(allRows).stream().filter(r -> !probes.contains(r.configId())).toList();
            AllocatedMixes allocated = AllocatedMixes.find(List.of(dir));
            List<SweepCharts.Chart> charts = SweepCharts.write(dir.resolve("charts"), rows, allocated);
            String html = html(rows, allRows, charts, title, allocated, probes.size());
            Path report = dir.resolve("report.html");
            Path tmp = dir.resolve(".report.html.tmp");
            Files.writeString(tmp, html, StandardCharsets.UTF_8);
            Files.move(tmp, report, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            return report;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the report in " + dir, e);
        }
    }

    static String html(List<ResultRow> rows, List<ResultRow> allRows, List<SweepCharts.Chart> charts, String title)
            throws IOException {
        return html(rows, allRows, charts, title, new AllocatedMixes(List.of()), 0);
    }

    static String html(List<ResultRow> rows, List<ResultRow> allRows, List<SweepCharts.Chart> charts, String title,
                       AllocatedMixes allocated, int probes) throws IOException {
        StringBuilder h = new StringBuilder();
        h.append("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>qlab sweep: ")
                .append(esc(title)).append("</title>\n<style>\n")
                .append("body{font-family:system-ui,sans-serif;margin:2em;max-width:1200px;color:#222}\n")
                .append("table{border-collapse:collapse;margin:1em 0;font-size:.9em}\n")
                .append("th,td{border:1px solid #ccc;padding:.25em .6em;text-align:right}\n")
                .append("td.t,th.t{text-align:left}\nth{background:#f3f3f3}\n")
                .append("img{max-width:100%;border:1px solid #eee}\n.failed{color:#b00}.skipped{color:#777}\n")
                .append("</style></head><body>\n");
        h.append("<h1>qlab sweep: ").append(esc(title)).append("</h1>\n");
        Map<String, Integer> byStatus = new TreeMap<>();
        rows.forEach(r -> byStatus.merge(r.status(), 1, Integer::sum));
        long runs = allRows.stream().map(ResultRow::runId).distinct().count();
        h.append("<p>").append(rows.size()).append(" configs from ").append(runs).append(" run(s), ")
                .append(allRows.size()).append(" rows in all. Status of each config's latest row: ");
        byStatus.forEach((s, n) -> h.append(esc(s)).append(' ').append(n).append("; "));
        h.append("</p>\n");
        if (probes > 0) {
            h.append("<p>").append(probes).append(" rows of the sensitivity sweep (one tensor group quantized, the rest at ")
                    .append("the reference) are in tables/sensitivity.parquet and not shown below.</p>\n");
        }
        allocatedMixes(h, rows, allocated);

        for (ParetoFrontier.Criterion c : ParetoFrontier.ALL) {
            List<ResultRow> frontier = ParetoFrontier.frontier(rows, c);
            h.append("<h2>Pareto frontier: ").append(esc(c.title())).append("</h2>\n");
            if (frontier.isEmpty()) {
                h.append("<p>No ok rows with both ").append(c.x().column()).append(" and ")
                        .append(c.y().column()).append(".</p>\n");
                continue;
            }
            h.append("<table class=\"frontier\" id=\"").append(c.column()).append("\"><tr>");
            String[] header = FrontierTable.header();
            for (int i = 0; i < header.length; i++) {
                h.append(i == 0 || i == header.length - 1 ? "<th class=\"t\">" : "<th>").append(esc(header[i])).append("</th>");
            }
            h.append("</tr>\n");
            for (ResultRow r : frontier) {
                String[] cells = FrontierTable.cells(r, c);
                h.append("<tr>");
                for (int i = 0; i < cells.length; i++) {
                    h.append(i == 0 || i == cells.length - 1 ? "<td class=\"t\">" : "<td>").append(esc(cells[i])).append("</td>");
                }
                h.append("</tr>\n");
            }
            h.append("</table>\n");
        }

        for (SweepCharts.Chart chart : charts) {
            h.append("<h2>").append(esc(chart.title())).append("</h2>\n<img alt=\"").append(esc(chart.title()))
                    .append("\" src=\"data:image/png;base64,")
                    .append(Base64.getEncoder().encodeToString(Files.readAllBytes(chart.png())))
                    .append("\">\n");
        }

        h.append("<h2>All configs</h2>\n<table><tr><th class=\"t\">config</th><th class=\"t\">status</th>")
                .append("<th>bits/w</th><th>file bytes</th><th>ppl</th><th>kl_mean</th><th>kl_p99</th>")
                .append("<th>top1</th><th>prefill tok/s</th><th>decode tok/s</th><th class=\"t\">reason</th></tr>\n");
        for (ResultRow r : rows) {
            h.append("<tr class=\"").append(esc(r.status())).append("\"><td class=\"t\">").append(esc(r.label()))
                    .append("</td><td class=\"t\">").append(esc(r.status())).append("</td>")
                    .append(td(r.bitsPerWeight(), "%.3f")).append(td(r.fileBytes() == null ? null : r.fileBytes().doubleValue(), "%.0f"))
                    .append(td(r.ppl(), "%.3f")).append(td(r.klMean(), "%.5f")).append(td(r.klP99(), "%.4f"))
                    .append(td(r.top1Agree(), "%.4f")).append(td(r.prefillTps(), "%.1f"))
                    .append(td(r.decodeTpsMedian(), "%.1f"))
                    .append("<td class=\"t\">").append(esc(r.statusReason() == null ? "" : r.statusReason()))
                    .append("</td></tr>\n");
        }
        h.append("</table>\n</body></html>\n");
        return h.toString();
    }

    /**
     * The allocated mixes: budget, size, predicted KL (the sum of the groups' measured increases) and
     * measured KL of the same mix, which checks the additivity the prediction assumes; then each
     * mix's plan as group → format.
     */
    private static void allocatedMixes(StringBuilder h, List<ResultRow> rows, AllocatedMixes allocated) {
        if (allocated.mixes().isEmpty()) {
            return;
        }
        h.append("<h2>Allocated mixes: predicted vs measured KL</h2>\n<table id=\"allocated\"><tr><th class=\"t\">budget</th>")
                .append("<th>bits/w</th><th>predicted KL</th><th>measured KL ± se</th><th>measured / predicted</th>")
                .append("<th>decode tok/s</th><th class=\"t\">lowest KL of no more bits/w, not allocated</th>")
                .append("<th class=\"t\">plan</th></tr>\n");
        for (AllocatedMixes.Mix m : allocated.mixes()) {
            ResultRow measured = allocated.measured(m, rows).orElse(null);
            h.append("<tr><td class=\"t\">").append(esc(m.budget())).append("</td>")
                    .append(td(m.bitsPerWeight(), "%.3f")).append(td(m.predictedKl(), "%.6f"));
            if (measured == null) {
                h.append("<td>not measured yet</td><td></td><td></td><td></td>");
            } else {
                h.append("<td>").append(String.format(Locale.ROOT, "%.6f", measured.klMean()))
                        .append(measured.klSe() == null ? "" : String.format(Locale.ROOT, " ± %.6f", measured.klSe()))
                        .append("</td>").append(td(m.predictedKl() > 0 ? measured.klMean() / m.predictedKl() : null, "%.2f"))
                        .append(td(measured.decodeTpsMedian(), "%.1f"))
                        .append("<td class=\"t\">").append(esc(rival(allocated, measured, rows))).append("</td>");
            }
            h.append("<td class=\"t\">").append(esc(m.plan())).append("</td></tr>\n");
        }
        h.append("</table>\n<h3>Allocated plans, group by group</h3>\n");
        for (AllocatedMixes.Mix m : allocated.mixes()) {
            qlab.quant.checkpoint.QuantPlan plan = qlab.quant.checkpoint.QuantPlan.parse(m.plan());
            h.append("<p><b>").append(esc(m.budget())).append("</b>: default ").append(esc(new qlab.quant.checkpoint.QuantPlan(
                    plan.format(), plan.group(), Map.of()).toString()));
            plan.overrides().entrySet().stream()
                    .sorted(Map.Entry.comparingByKey(java.util.Comparator.comparing(qlab.quant.checkpoint.QuantPlan.Selector::id)))
                    .forEach(e -> h.append("; ").append(esc(e.getKey().id())).append(" → ").append(esc(e.getValue().toString())));
            h.append("</p>\n");
        }
    }

    /** The config a measured mix is compared with, its bits per weight and KL, and whether the mix is lower. */
    static String rival(AllocatedMixes allocated, ResultRow measured, List<ResultRow> rows) {
        return allocated.bestRival(measured, rows).map(r -> String.format(Locale.ROOT, "%s: %.3f, %.6f%s (mix %s)",
                        MarkdownReport.config(r), r.bitsPerWeight(), r.klMean(),
                        r.klSe() == null ? "" : String.format(Locale.ROOT, " ± %.6f", r.klSe()),
                        measured.klMean() < r.klMean() ? "lower" : "not lower"))
                .orElse("none measured");
    }

    private static String td(Double v, String format) {
        return "<td>" + (v == null ? "" : String.format(Locale.ROOT, format, v)) + "</td>";
    }

    static String esc(String s) {
        if (s == null) {
            return "";
        }
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }
}
