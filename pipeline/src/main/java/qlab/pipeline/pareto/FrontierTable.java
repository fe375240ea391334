package qlab.pipeline.pareto;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.Locale;
import qlab.pipeline.results.ResultRow;

/** The frontier table in the forms people read it: aligned text, JSON. */
public final class FrontierTable {

    private static final String[] HEADER = {"config", "bits/w", "kl_mean", "ppl", "decode tok/s", "config_id"};

    private FrontierTable() {
    }

    public static String text(List<ResultRow> rows) {
        StringBuilder sb = new StringBuilder();
        for (ParetoFrontier.Criterion c : ParetoFrontier.ALL) {
            List<ResultRow> frontier = ParetoFrontier.frontier(rows, c);
            sb.append("Pareto frontier: ").append(c.title()).append(" (").append(frontier.size()).append(" of ")
                    .append(ParetoFrontier.candidates(rows, c).size()).append(' ').append(c.unit()).append(")\n");
            if (frontier.isEmpty()) {
                sb.append("  (no ok rows with both ").append(c.x().column()).append(" and ")
                        .append(c.y().column()).append(")\n\n");
                continue;
            }
            String[][] cells = new String[frontier.size() + 1][];
            cells[0] = HEADER;
            for (int i = 0; i < frontier.size(); i++) {
                cells[i + 1] = cells(frontier.get(i), c);
            }
            int[] width = new int[HEADER.length];
            for (String[] row : cells) {
                for (int j = 0; j < row.length; j++) {
                    width[j] = Math.max(width[j], row[j].length());
                }
            }
            for (String[] row : cells) {
                sb.append(' ');
                for (int j = 0; j < row.length; j++) {
                    String pad = " ".repeat(width[j] - row[j].length());
                    // Text columns left-aligned, numbers right-aligned.
                    sb.append(' ').append(j == 0 || j == row.length - 1 ? row[j] + pad : pad + row[j]);
                }
                sb.append('\n');
            }
            sb.append('\n');
        }
        return sb.toString();
    }

    public static String json(List<ResultRow> rows) {
        ObjectMapper mapper = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
        ObjectNode root = mapper.createObjectNode();
        for (ParetoFrontier.Criterion c : ParetoFrontier.ALL) {
            ArrayNode list = root.putArray(c.column());
            for (ResultRow r : ParetoFrontier.frontier(rows, c)) {
                ObjectNode o = list.addObject();
                o.put("config_id", r.configId());
                o.put("label", c.label(r));
                o.put("model_id", r.modelId());
                o.put("format", r.format());
                if (r.groupSize() == null) {
                    o.putNull("group_size");
                } else {
                    o.put("group_size", r.groupSize());
                }
                ObjectNode overrides = o.putObject("tensor_overrides");
                r.tensorOverrides().forEach(overrides::put);
                o.put("imatrix", r.imatrix());
                o.put("activations", r.activations());
                o.put("threads", r.threads());
                o.put("bits_per_weight", r.bitsPerWeight());
                o.put("kl_mean", r.klMean());
                o.put("ppl", r.ppl());
                o.put("decode_tps_median", r.decodeTpsMedian());
                o.put("run_id", r.runId());
            }
        }
        try {
            return mapper.writeValueAsString(root) + "\n";
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    /** One row of the frontier of {@code c} as text cells, in {@link #HEADER} order. */
    public static String[] cells(ResultRow r, ParetoFrontier.Criterion c) {
        return new String[]{c.label(r), number(r.bitsPerWeight(), "%.3f"), number(r.klMean(), "%.5f"),
                number(r.ppl(), "%.3f"), number(r.decodeTpsMedian(), "%.1f"), r.configId()};
    }

    public static String[] header() {
        return HEADER.clone();
    }

    private static String number(Double v, String format) {
        return v == null ? "-" : String.format(Locale.ROOT, format, v);
    }
}
