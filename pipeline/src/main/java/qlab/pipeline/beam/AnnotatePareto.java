package qlab.pipeline.beam;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.GroupByKey;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.WithKeys;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.TypeDescriptors;
import qlab.pipeline.pareto.ParetoFrontier;
import qlab.pipeline.results.ConfigOutcome;
import qlab.pipeline.results.ResultRow;

/**
 * Frontier membership columns. The frontier is taken over this run's ok rows together with the ok
 * rows already in the results directory (a resumed run has only the remaining configs), so the
 * columns say whether a row was on the frontier when it was written; {@code qlab pareto} recomputes
 * frontiers over whatever set of files it is given.
 */
public final class AnnotatePareto extends PTransform<PCollection<ConfigOutcome>, PCollection<ConfigOutcome>> {

    /** The coordinates of an earlier ok row that take part in the frontiers. */
    public record Point(Double bitsPerWeight, Double klMean, Double ppl, Double decodeTps) implements Serializable {
        public static Point of(ResultRow r) {
            return new Point(r.bitsPerWeight(), r.klMean(), r.ppl(), r.decodeTpsMedian());
        }

        static Point of(ConfigOutcome o) {
            return new Point(o.checkpoint() == null ? null : o.checkpoint().bitsPerWeight(),
                    o.quality() == null ? null : o.quality().klMean(),
                    o.quality() == null ? null : o.quality().ppl(),
                    o.throughput() == null ? null : o.throughput().decodeTpsMedian());
        }
    }

    private final ArrayList<Point> earlier;

    public AnnotatePareto(List<Point> earlier) {
        this.earlier = new ArrayList<>(earlier);
    }

    @Override
    public PCollection<ConfigOutcome> expand(PCollection<ConfigOutcome> input) {
        return input
                .apply("OneKey", WithKeys.<String, ConfigOutcome>of("all").withKeyType(TypeDescriptors.strings()))
                .setCoder(Outcomes.KEYED)
                .apply("AllRows", GroupByKey.create())
                .apply("Frontiers", ParDo.of(new ParetoFn(earlier)))
                .setCoder(Outcomes.CODER);
    }

    static final class ParetoFn extends DoFn<KV<String, Iterable<ConfigOutcome>>, ConfigOutcome> {
        private final ArrayList<Point> earlier;

        ParetoFn(ArrayList<Point> earlier) {
            this.earlier = earlier;
        }

        @ProcessElement
        public void process(@Element KV<String, Iterable<ConfigOutcome>> group, OutputReceiver<ConfigOutcome> out) {
            List<ConfigOutcome> rows = new ArrayList<>();
            group.getValue().forEach(rows::add);
            List<Point> points = new ArrayList<>();
            for (ConfigOutcome o : rows) {
                points.add(o.status() == ConfigOutcome.Status.OK ? Point.of(o) : new Point(null, null, null, null));
            }
            points.addAll(earlier);
            boolean[] bpwKl = members(points, Point::bitsPerWeight, ParetoFrontier.BPW_KL, Point::klMean);
            boolean[] bpwPpl = members(points, Point::bitsPerWeight, ParetoFrontier.BPW_PPL, Point::ppl);
            boolean[] tpsKl = members(points, Point::decodeTps, ParetoFrontier.TPS_KL, Point::klMean);
            for (int i = 0; i < rows.size(); i++) {
                Point p = points.get(i);
                out.output(rows.get(i).withPareto(
                        flag(bpwKl[i], p.bitsPerWeight(), p.klMean()),
                        flag(bpwPpl[i], p.bitsPerWeight(), p.ppl()),
                        flag(tpsKl[i], p.decodeTps(), p.klMean())));
            }
        }

        /** Null when the row lacks a coordinate: membership was not measurable, not false. */
        private static Boolean flag(boolean member, Double x, Double y) {
            return x == null || y == null ? null : member;
        }

        private static boolean[] members(List<Point> points, Function<Point, Double> x,
                                         ParetoFrontier.Criterion c, Function<Point, Double> y) {
            double[] xs = new double[points.size()];
            double[] ys = new double[points.size()];
            for (int i = 0; i < xs.length; i++) {
                Double xv = x.apply(points.get(i));
                Double yv = y.apply(points.get(i));
                xs[i] = xv == null ? Double.NaN : xv;
                ys[i] = yv == null ? Double.NaN : yv;
            }
            return ParetoFrontier.members(xs, c.x().goal(), ys, c.y().goal());
        }
    }
}
