package qlab.pipeline.report;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Rectangle;
import java.awt.geom.Ellipse2D;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.annotations.XYTextAnnotation;
import org.jfree.chart.axis.LogAxis;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.axis.ValueAxis;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.chart.ui.TextAnchor;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;
import org.jfree.svg.SVGGraphics2D;
import org.jfree.svg.SVGUtils;
import qlab.pipeline.pareto.ParetoFrontier;
import qlab.pipeline.results.ResultRow;
import qlab.pipeline.sensitivity.AllocatedMixes;

/**
 * The sweep's charts, drawn with JFreeChart and written as PNG and SVG: quality and speed against
 * bits per weight with the Pareto frontier drawn as a labelled line, and batched throughput against
 * batch size.
 */
public final class SweepCharts {

    public static final int WIDTH = 900;
    public static final int HEIGHT = 560;

    /** A chart written to disk. */
    public record Chart(String name, String title, Path png, Path svg) {
    }

    private static final Color POINTS = new Color(0x90, 0xa4, 0xae);
    private static final Color FRONTIER = new Color(0xd8, 0x43, 0x15);

    private SweepCharts() {
    }

    /** Writes every chart for which {@code rows} have data into {@code dir}. */
    public static List<Chart> write(Path dir, List<ResultRow> rows) throws IOException {
        return write(dir, rows, new AllocatedMixes(List.of()));
    }

    /**
     * As {@link #write(Path, List)}, the quality charts drawing each family of quantization in its own
     * marker (uniform formats, llama.cpp recipes, allocated mixes, other mixes) and each allocated mix's
     * predicted KL beside its measured one.
     */
    public static List<Chart> write(Path dir, List<ResultRow> rows, AllocatedMixes allocated) throws IOException {
        System.setProperty("java.awt.headless", "true");
        Files.createDirectories(dir);
        List<Chart> charts = new ArrayList<>();
        JFreeChart kl = frontierChart(rows, ParetoFrontier.BPW_KL, "bits per weight", "mean KL divergence (nats)", true,
                allocated);
        if (kl != null && !allocated.mixes().isEmpty()) {
            addPredictions(kl, rows, allocated);
        }
        add(charts, dir, "kl_vs_bpw", "KL divergence vs bits per weight", kl);
        add(charts, dir, "ppl_vs_bpw", "Perplexity vs bits per weight",
                frontierChart(rows, ParetoFrontier.BPW_PPL, "bits per weight", "perplexity", false, allocated));
        add(charts, dir, "decode_tps_vs_bpw", "Decode tokens/s vs bits per weight", speedChart(rows));
        add(charts, dir, "batch_scaling", "Batched throughput vs batch size", batchChart(rows));
        return charts;
    }

    private static void add(List<Chart> charts, Path dir, String name, String title, JFreeChart chart)
            throws IOException {
        if (chart == null) {
            return;
        }
        charts.add(save(dir, name, title, chart));
    }

    /** Writes {@code chart} as {@code dir/name.png} and {@code dir/name.svg} (each through a temporary file). */
    public static Chart save(Path dir, String name, String title, JFreeChart chart) throws IOException {
        System.setProperty("java.awt.headless", "true");
        chart.setTitle(title);
        Path png = dir.resolve(name + ".png");
        Path svg = dir.resolve(name + ".svg");
        Path pngTmp = dir.resolve("." + name + ".png.tmp");
        ChartUtils.saveChartAsPNG(pngTmp.toFile(), chart, WIDTH, HEIGHT);
        Files.move(pngTmp, png, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        SVGGraphics2D g = new SVGGraphics2D(WIDTH, HEIGHT);
        // Unique def ids let several charts be inlined into one HTML page without clashing.
        g.setDefsKeyPrefix(name + "_");
        chart.draw(g, new Rectangle(0, 0, WIDTH, HEIGHT));
        Path svgTmp = dir.resolve("." + name + ".svg.tmp");
        SVGUtils.writeToSVG(svgTmp.toFile(), g.getSVGElement());
        Files.move(svgTmp, svg, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        return new Chart(name, title, png, svg);
    }

    /** All candidate rows as grey points, the frontier as a labelled line; null when there are none. */
    static JFreeChart frontierChart(List<ResultRow> rows, ParetoFrontier.Criterion c, String xLabel,
                                    String yLabel, boolean logY) {
        return frontierChart(rows, c, xLabel, yLabel, logY, new AllocatedMixes(List.of()));
    }

    static JFreeChart frontierChart(List<ResultRow> rows, ParetoFrontier.Criterion c, String xLabel,
                                    String yLabel, boolean logY, AllocatedMixes allocated) {
        List<ResultRow> candidates = ParetoFrontier.candidates(rows, c);
        if (candidates.isEmpty()) {
            return null;
        }
        List<ResultRow> frontier = ParetoFrontier.frontier(rows, c);
        // An allocated mix's plan is too long for a chart: it is labelled by its budget (the report lists the plan).
        Function<ResultRow, String> label = r -> allocated.of(r).map(m -> "allocated, budget " + m.budget())
                .orElseGet(() -> c.label(r));
        JFreeChart chart = scatterWithFrontier(candidates, frontier, c.x().value(), c.y().value(), label, xLabel,
                yLabel, logY);
        splitByFamily(chart, candidates, c.x().value(), c.y().value(), allocated);
        return chart;
    }

    /** Families of quantization drawn apart on the quality charts, each with its own marker. */
    public enum Family {
        UNIFORM("uniform formats", new Ellipse2D.Double(-3.5, -3.5, 7, 7), new Color(0x60, 0x7d, 0x8b)),
        RECIPE("llama.cpp recipes", new Rectangle(-4, -4, 8, 8), new Color(0x2e, 0x7d, 0x32)),
        ALLOCATED("allocated mixes", triangle(5), new Color(0x15, 0x65, 0xc0)),
        MIX("other mixes", diamond(5), new Color(0x8e, 0x24, 0xaa));

        final String title;
        final java.awt.Shape shape;
        final Color color;

        Family(String title, java.awt.Shape shape, Color color) {
            this.title = title;
            this.shape = shape;
            this.color = color;
        }

        public String title() {
            return title;
        }

        public static Family of(ResultRow r, AllocatedMixes allocated) {
            if (allocated.of(r).isPresent()) {
                return ALLOCATED;
            }
            if (!r.tensorOverrides().isEmpty()) {
                return MIX;
            }
            return qlab.quant.ggml.LlamaRecipe.byName(r.format()).isPresent() ? RECIPE : UNIFORM;
        }
    }

    private static java.awt.Shape triangle(double r) {
        java.awt.geom.Path2D.Double p = new java.awt.geom.Path2D.Double();
        p.moveTo(0, -r);
        p.lineTo(r, r * 0.8);
        p.lineTo(-r, r * 0.8);
        p.closePath();
        return p;
    }

    private static java.awt.Shape diamond(double r) {
        java.awt.geom.Path2D.Double p = new java.awt.geom.Path2D.Double();
        p.moveTo(0, -r);
        p.lineTo(r, 0);
        p.lineTo(0, r);
        p.lineTo(-r, 0);
        p.closePath();
        return p;
    }

    /** Replaces the chart's single series of points by one series per family present. */
    private static void splitByFamily(JFreeChart chart, List<ResultRow> candidates, Function<ResultRow, Double> x,
                                      Function<ResultRow, Double> y, AllocatedMixes allocated) {
        XYPlot plot = chart.getXYPlot();
        XYSeriesCollection data = (XYSeriesCollection) plot.getDataset();
        XYSeries frontier = data.getSeries(1);
        data.removeAllSeries();
        Map<Family, XYSeries> byFamily = new java.util.EnumMap<>(Family.class);
        for (ResultRow r : candidates) {
            Family f = Family.of(r, allocated);
            byFamily.computeIfAbsent(f, k -> new XYSeries(k.title(), false, true)).add(x.apply(r), y.apply(r));
        }
        XYLineAndShapeRenderer renderer = (XYLineAndShapeRenderer) plot.getRenderer();
        int i = 0;
        for (Map.Entry<Family, XYSeries> e : byFamily.entrySet()) {
            data.addSeries(e.getValue());
            renderer.setSeriesLinesVisible(i, false);
            renderer.setSeriesShape(i, e.getKey().shape);
            renderer.setSeriesPaint(i, e.getKey().color);
            i++;
        }
        data.addSeries(frontier);
        renderer.setSeriesLinesVisible(i, true);
        renderer.setSeriesShapesVisible(i, false);
        renderer.setSeriesPaint(i, FRONTIER);
        renderer.setSeriesStroke(i, new BasicStroke(2f));
    }

    /** Each measured allocated mix's predicted KL as a hollow triangle at the same bits per weight. */
    private static void addPredictions(JFreeChart chart, List<ResultRow> rows, AllocatedMixes allocated) {
        XYSeries predicted = new XYSeries("allocated mixes, predicted", false, true);
        for (ResultRow r : rows) {
            if (r.ok() && r.bitsPerWeight() != null && r.klMean() != null) {
                allocated.of(r).filter(m -> m.predictedKl() > 0) // the KL axis is logarithmic
                        .ifPresent(m -> predicted.add(r.bitsPerWeight().doubleValue(), m.predictedKl()));
            }
        }
        if (predicted.isEmpty()) {
            return;
        }
        XYPlot plot = chart.getXYPlot();
        XYSeriesCollection data = (XYSeriesCollection) plot.getDataset();
        data.addSeries(predicted);
        XYLineAndShapeRenderer renderer = (XYLineAndShapeRenderer) plot.getRenderer();
        int i = data.getSeriesCount() - 1;
        renderer.setSeriesLinesVisible(i, false);
        renderer.setSeriesShape(i, triangle(5));
        renderer.setSeriesShapesFilled(i, false);
        renderer.setSeriesPaint(i, Family.ALLOCATED.color);
    }

    static JFreeChart speedChart(List<ResultRow> rows) {
        List<ResultRow> candidates = rows.stream().filter(ResultRow::ok)
                .filter(r -> r.bitsPerWeight() != null && r.decodeTpsMedian() != null).toList();
        if (candidates.isEmpty()) {
            return null;
        }
        // Highlight the rows on the speed/quality frontier: the configs worth their speed.
        List<ResultRow> frontier = ParetoFrontier.frontier(rows, ParetoFrontier.TPS_KL).stream()
                .filter(candidates::contains).sorted(java.util.Comparator.comparingDouble(ResultRow::bitsPerWeight))
                .toList();
        return scatterWithFrontier(candidates, frontier, ResultRow::bitsPerWeight, ResultRow::decodeTpsMedian,
                ResultRow::label, "bits per weight", "decode tokens/s (median)", false);
    }

    private static JFreeChart scatterWithFrontier(List<ResultRow> candidates, List<ResultRow> frontier,
                                                  Function<ResultRow, Double> x, Function<ResultRow, Double> y,
                                                  Function<ResultRow, String> label, String xLabel, String yLabel, boolean logY) {
        XYSeries all = new XYSeries("configs", false, true);
        candidates.forEach(r -> all.add(x.apply(r), y.apply(r)));
        XYSeries front = new XYSeries("Pareto frontier", false, true);
        frontier.forEach(r -> front.add(x.apply(r), y.apply(r)));
        XYSeriesCollection data = new XYSeriesCollection();
        data.addSeries(all);
        data.addSeries(front);

        NumberAxis xAxis = new NumberAxis(xLabel);
        xAxis.setAutoRangeIncludesZero(false);
        boolean positive = candidates.stream().allMatch(r -> y.apply(r) > 0);
        ValueAxis yAxis;
        if (logY && positive) {
            LogAxis log = new LogAxis(yLabel);
            log.setSmallestValue(1e-9);
            yAxis = log;
        } else {
            NumberAxis lin = new NumberAxis(yLabel);
            lin.setAutoRangeIncludesZero(false);
            yAxis = lin;
        }
        XYLineAndShapeRenderer renderer = new XYLineAndShapeRenderer();
        renderer.setSeriesLinesVisible(0, false);
        renderer.setSeriesShape(0, new Ellipse2D.Double(-3, -3, 6, 6));
        renderer.setSeriesPaint(0, POINTS);
        renderer.setSeriesLinesVisible(1, true);
        renderer.setSeriesShape(1, new Ellipse2D.Double(-4.5, -4.5, 9, 9));
        renderer.setSeriesPaint(1, FRONTIER);
        renderer.setSeriesStroke(1, new BasicStroke(2f));
        XYPlot plot = new XYPlot(data, xAxis, yAxis, renderer);
        plot.setBackgroundPaint(Color.WHITE);
        plot.setDomainGridlinePaint(new Color(0xdd, 0xdd, 0xdd));
        plot.setRangeGridlinePaint(new Color(0xdd, 0xdd, 0xdd));
        Font font = new Font(Font.SANS_SERIF, Font.PLAIN, 11);
        for (ResultRow r : frontier) {
            XYTextAnnotation text = new XYTextAnnotation("  " + label.apply(r), x.apply(r), y.apply(r));
            text.setFont(font);
            text.setTextAnchor(TextAnchor.BOTTOM_LEFT);
            text.setPaint(FRONTIER.darker());
            plot.addAnnotation(text);
        }
        return new JFreeChart(null, JFreeChart.DEFAULT_TITLE_FONT, plot, true);
    }

    /** Tokens/s per batch size, one line per config (at most the 12 fastest at the largest batch). */
    static JFreeChart batchChart(List<ResultRow> rows) {
        List<ResultRow> batched = new ArrayList<>(rows.stream().filter(ResultRow::ok)
                .filter(r -> r.batchTps() != null && !r.batchTps().isEmpty()).toList());
        if (batched.isEmpty()) {
            return null;
        }
        batched.sort(java.util.Comparator.comparingDouble(SweepCharts::atLargestBatch).reversed());
        XYSeriesCollection data = new XYSeriesCollection();
        for (ResultRow r : batched.subList(0, Math.min(12, batched.size()))) {
            XYSeries s = new XYSeries(r.label(), true, false);
            for (Map.Entry<Integer, Double> e : r.batchTps().entrySet()) {
                s.add(e.getKey(), e.getValue());
            }
            try {
                data.addSeries(s);
            } catch (IllegalArgumentException duplicateLabel) {
                // The same config measured in several runs: its first (fastest) line is enough.
            }
        }
        NumberAxis xAxis = new NumberAxis("batch size");
        xAxis.setStandardTickUnits(NumberAxis.createIntegerTickUnits());
        NumberAxis yAxis = new NumberAxis("tokens/s, all sequences");
        XYLineAndShapeRenderer renderer = new XYLineAndShapeRenderer(true, true);
        XYPlot plot = new XYPlot(data, xAxis, yAxis, renderer);
        plot.setBackgroundPaint(Color.WHITE);
        plot.setDomainGridlinePaint(new Color(0xdd, 0xdd, 0xdd));
        plot.setRangeGridlinePaint(new Color(0xdd, 0xdd, 0xdd));
        return new JFreeChart(null, JFreeChart.DEFAULT_TITLE_FONT, plot, true);
    }

    private static double atLargestBatch(ResultRow r) {
        return r.batchTps().entrySet().stream().max(Map.Entry.comparingByKey()).orElseThrow().getValue();
    }
}
