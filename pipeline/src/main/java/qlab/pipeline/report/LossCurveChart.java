package qlab.pipeline.report;

import java.awt.BasicStroke;
import java.awt.Color;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

/**
 * A training run's loss curve, drawn like the sweep's charts: the train loss of every step (thin,
 * grey), its moving average, and the validation losses (points joined by a line).
 */
public final class LossCurveChart {

    /** A loss (nats per token) after {@code step} steps. */
    public record Point(int step, double loss) {}

    private static final Color RAW = new Color(0xb0, 0xbe, 0xc5);
    private static final Color SMOOTH = new Color(0x37, 0x47, 0x4f);
    private static final Color VALIDATION = new Color(0xd8, 0x43, 0x15);

    private LossCurveChart() {}

    /** Writes {@code dir/name.png} and {@code dir/name.svg}. */
    public static SweepCharts.Chart write(Path dir, String name, String title, List<Point> train,
                                          List<Point> validation, int window) throws IOException {
        return SweepCharts.save(dir, name, title, chart(train, validation, window));
    }

    static JFreeChart chart(List<Point> train, List<Point> validation, int window) {
        XYSeries raw = new XYSeries("train loss", false, true);
        XYSeries smooth = new XYSeries("train loss, mean of " + window + " steps", false, true);
        double sum = 0;
        for (int i = 0; i < train.size(); i++) {
            Point p = train.get(i);
            raw.add(p.step(), p.loss());
            sum += p.loss();
            if (i >= window) {
                sum -= train.get(i - window).loss();
            }
            smooth.add(p.step(), sum / Math.min(i + 1, window));
        }
        XYSeries val = new XYSeries("validation loss", false, true);
        validation.forEach(p -> val.add(p.step(), p.loss()));
        XYSeriesCollection data = new XYSeriesCollection();
        data.addSeries(raw);
        data.addSeries(smooth);
        data.addSeries(val);
        NumberAxis x = new NumberAxis("step");
        x.setStandardTickUnits(NumberAxis.createIntegerTickUnits());
        NumberAxis y = new NumberAxis("loss (nats per token)");
        y.setAutoRangeIncludesZero(false);
        XYLineAndShapeRenderer renderer = new XYLineAndShapeRenderer(true, false);
        renderer.setSeriesPaint(0, RAW);
        renderer.setSeriesStroke(0, new BasicStroke(1f));
        renderer.setSeriesPaint(1, SMOOTH);
        renderer.setSeriesStroke(1, new BasicStroke(2f));
        renderer.setSeriesPaint(2, VALIDATION);
        renderer.setSeriesStroke(2, new BasicStroke(2f));
        renderer.setSeriesShapesVisible(2, true);
        XYPlot plot = new XYPlot(data, x, y, renderer);
        plot.setBackgroundPaint(Color.WHITE);
        plot.setDomainGridlinePaint(new Color(0xdd, 0xdd, 0xdd));
        plot.setRangeGridlinePaint(new Color(0xdd, 0xdd, 0xdd));
        return new JFreeChart(null, JFreeChart.DEFAULT_TITLE_FONT, plot, true);
    }
}
