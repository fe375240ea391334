package qlab.pipeline.matrix;

import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;
import qlab.engine.QlabException;
import qlab.engine.synthetic.SyntheticPreset;
import qlab.pipeline.CalibrationSet;
import qlab.pipeline.EvalSettings;
import qlab.pipeline.KvCacheChoice;
import qlab.pipeline.ModelSpec;
import qlab.pipeline.ThroughputSettings;
import qlab.quant.KvFormats;

/**
 * Reads a sweep file ({@code configs/*.yaml}, schema {@code qlab_sweep: 1}; docs/sweep.md documents it).
 * Every error is one line naming the file, the line and the key, e.g.
 * {@code quick.yaml:7: key "group_sizes[1]": expected a positive integer, got "big"}.
 * Relative paths are resolved against the directory of the sweep file.
 */
public final class SweepFileParser {

    public static final int SCHEMA_VERSION = 1;
    public static final Set<String> PRESETS = Arrays.stream(SyntheticPreset.values())
            .map(SyntheticPreset::id).collect(Collectors.toUnmodifiableSet());

    private static final Set<String> TOP_KEYS = Set.of("qlab_sweep", "name", "model", "formats", "group_sizes",
            "threads", "imatrix", "activations", "kv_cache", "calibration", "evaluation", "measurements", "throughput", "mode",
            "sensitivity");

    private final Path file;
    private final Path baseDir;
    private final String fileName;

    private SweepFileParser(Path file) {
        this.file = file.toAbsolutePath().normalize();
        this.baseDir = this.file.getParent();
        this.fileName = file.getFileName().toString();
    }

    public static SweepMatrix parse(Path file) {
        return new SweepFileParser(file).parseFile();
    }

    private SweepMatrix parseFile() {
        YamlNode root = YamlNode.parse(file);
        if (!(root instanceof YamlNode.Mapping top)) {
            throw error(root, "", "expected a mapping at the top of the file");
        }
        checkKeys(top, "", TOP_KEYS);
        int version = positiveInt(required(top, "qlab_sweep", ""), "qlab_sweep");
        if (version != SCHEMA_VERSION) {
            throw error(top.entries().get("qlab_sweep"), "qlab_sweep",
                    "schema version " + version + " is not supported (this qlab reads " + SCHEMA_VERSION + ")");
        }
        String name = top.entries().containsKey("name")
                ? string(top.entries().get("name"), "name")
                : fileName.replaceFirst("\\.ya?ml$", "");

        ModelSpec model = model(required(top, "model", ""));
        Set<Measurement> measurements = measurements(required(top, "measurements", ""));
        List<YamlNode> formatNodes = nonEmptyList(required(top, "formats", ""), "formats");
        List<FormatChoice> formats = new ArrayList<>();
        for (int i = 0; i < formatNodes.size(); i++) {
            formats.add(formatChoice(formatNodes.get(i), "formats[" + i + "]"));
        }
        List<Integer> groupSizes = positiveInts(required(top, "group_sizes", ""), "group_sizes");
        List<Integer> threads = positiveInts(required(top, "threads", ""), "threads");

        Map<String, CalibrationSet> calibration = new LinkedHashMap<>();
        if (top.entries().containsKey("calibration")) {
            YamlNode.Mapping cal = mapping(top.entries().get("calibration"), "calibration");
            for (Map.Entry<String, YamlNode> e : cal.entries().entrySet()) {
                String key = "calibration." + e.getKey();
                if (e.getKey().equals(SweepMatrix.NO_IMATRIX)) {
                    throw error(cal, key, cal.keyLine(e.getKey()), "\"none\" means no importance matrix; pick another name");
                }
                List<String> files = new ArrayList<>();
                List<YamlNode> items = nonEmptyList(e.getValue(), key);
                for (int i = 0; i < items.size(); i++) {
                    files.add(existingFile(items.get(i), key + "[" + i + "]").toString());
                }
                calibration.put(e.getKey(), new CalibrationSet(e.getKey(), files, contentHash(files)));
            }
        }
        List<String> imatrices = new ArrayList<>();
        if (top.entries().containsKey("imatrix")) {
            List<YamlNode> items = nonEmptyList(top.entries().get("imatrix"), "imatrix");
            for (int i = 0; i < items.size(); i++) {
                String key = "imatrix[" + i + "]";
                String n = string(items.get(i), key);
                if (!n.equals(SweepMatrix.NO_IMATRIX) && !calibration.containsKey(n)) {
                    throw error(items.get(i), key, "no calibration set named \"" + n + "\" (defined: "
                            + (calibration.isEmpty() ? "none" : String.join(", ", calibration.keySet())) + ")");
                }
                imatrices.add(n);
            }
        } else {
            imatrices.add(SweepMatrix.NO_IMATRIX);
        }
        List<Activations> activations = top.entries().containsKey("activations")
                ? activations(top.entries().get("activations")) : List.of(Activations.F32);
        List<KvCacheChoice> kvCaches = top.entries().containsKey("kv_cache")
                ? kvCaches(top.entries().get("kv_cache")) : List.of(KvCacheChoice.F32);

        YamlNode.Mapping evaluation = mapping(required(top, "evaluation", ""), "evaluation");
        checkKeys(evaluation, "evaluation", Set.of("text", "ctx", "tokens"));
        Path text = existingFile(required(evaluation, "text", "evaluation"), "evaluation.text");
        EvalSettings eval = new EvalSettings(text.toString(), contentHash(List.of(text.toString())),
                positiveInt(required(evaluation, "ctx", "evaluation"), "evaluation.ctx"),
                positiveInt(required(evaluation, "tokens", "evaluation"), "evaluation.tokens"));

        ThroughputSettings throughput = null;
        boolean timed = measurements.stream().anyMatch(Measurement::timed);
        if (timed) {
            YamlNode node = top.entries().get("throughput");
            if (node == null) {
                throw error(top, "throughput", "is missing (measurements include "
                        + (measurements.contains(Measurement.THROUGHPUT) ? "throughput" : "batch") + ")");
            }
            YamlNode.Mapping t = mapping(node, "throughput");
            checkKeys(t, "throughput", Set.of("prefill_tokens", "decode_tokens", "repeats", "batch_sizes"));
            int prefill = measurements.contains(Measurement.THROUGHPUT)
                    ? positiveInt(required(t, "prefill_tokens", "throughput"), "throughput.prefill_tokens") : 0;
            int decode = positiveInt(required(t, "decode_tokens", "throughput"), "throughput.decode_tokens");
            int repeats = positiveInt(required(t, "repeats", "throughput"), "throughput.repeats");
            List<Integer> batches = measurements.contains(Measurement.BATCH)
                    ? positiveInts(required(t, "batch_sizes", "throughput"), "throughput.batch_sizes") : List.of();
            throughput = new ThroughputSettings(text.toString(), measurements.contains(Measurement.THROUGHPUT),
                    prefill, decode, repeats, batches);
        } else if (top.entries().containsKey("throughput")) {
            throw error(top, "throughput", top.keyLine("throughput"),
                    "is set but measurements include neither throughput nor batch");
        }

        Sensitivity sensitivity = sensitivity(top, formatNodes, formats, groupSizes, threads, imatrices, activations,
                kvCaches, measurements);
        return new SweepMatrix(name, file.toString(), model, formats, groupSizes, threads, imatrices, activations,
                kvCaches, calibration, eval, throughput, measurements, sensitivity);
    }

    /**
     * {@code mode: sensitivity} and its {@code sensitivity} section, or null for an ordinary sweep.
     * A sensitivity sweep measures quality only, and every axis but formats has one value: each row
     * then differs from the reference in exactly one group's format, which is what an allocation adds up.
     */
    private Sensitivity sensitivity(YamlNode.Mapping top, List<YamlNode> formatNodes, List<FormatChoice> formats,
                                    List<Integer> groupSizes, List<Integer> threads, List<String> imatrices,
                                    List<Activations> activations, List<KvCacheChoice> kvCaches,
                                    Set<Measurement> measurements) {
        String mode = top.entries().containsKey("mode") ? string(top.entries().get("mode"), "mode") : "sweep";
        if (mode.equals("sweep")) {
            if (top.entries().containsKey("sensitivity")) {
                throw error(top, "sensitivity", top.keyLine("sensitivity"), "is set but mode is not sensitivity");
            }
            return null;
        }
        if (!mode.equals("sensitivity")) {
            throw error(top.entries().get("mode"), "mode", "unknown mode \"" + mode + "\" (known: sweep, sensitivity)");
        }
        if (!measurements.equals(Set.of(Measurement.QUALITY))) {
            throw error(top.entries().get("measurements"), "measurements", "must be [quality] in mode: sensitivity");
        }
        for (int i = 0; i < formats.size(); i++) {
            if (!formats.get(i).overrides().isEmpty()) {
                throw error(formatNodes.get(i), "formats[" + i + "]",
                        "a sensitivity sweep's formats are single formats (each is tried on one group at a time)");
            }
        }
        oneValue(top, "group_sizes", groupSizes);
        oneValue(top, "threads", threads);
        oneValue(top, "imatrix", imatrices);
        oneValue(top, "activations", activations);
        oneValue(top, "kv_cache", kvCaches);
        String reference = "f32";
        Sensitivity.Grouping grouping = Sensitivity.Grouping.TENSOR;
        if (top.entries().containsKey("sensitivity")) {
            YamlNode.Mapping m = mapping(top.entries().get("sensitivity"), "sensitivity");
            checkKeys(m, "sensitivity", Set.of("reference", "grouping"));
            if (m.entries().containsKey("reference")) {
                YamlNode node = m.entries().get("reference");
                reference = format(node, "sensitivity.reference", string(node, "sensitivity.reference"));
            }
            if (m.entries().containsKey("grouping")) {
                YamlNode node = m.entries().get("grouping");
                String g = string(node, "sensitivity.grouping");
                grouping = Sensitivity.Grouping.fromYaml(g);
                if (grouping == null) {
                    throw error(node, "sensitivity.grouping", "unknown grouping \"" + g + "\" (known: tensor, kind, layer)");
                }
            }
        }
        return new Sensitivity(reference, grouping);
    }

    private void oneValue(YamlNode.Mapping top, String key, List<?> values) {
        if (values.size() != 1) {
            throw error(top.entries().get(key), key, "must have one value in mode: sensitivity, not " + values.size());
        }
    }

    private ModelSpec model(YamlNode node) {
        YamlNode.Mapping m = mapping(node, "model");
        checkKeys(m, "model", Set.of("preset", "seed", "path"));
        boolean hasPreset = m.entries().containsKey("preset");
        boolean hasPath = m.entries().containsKey("path");
        if (hasPreset == hasPath) {
            throw error(m, "model", "give exactly one of \"preset\" and \"path\"");
        }
        if (hasPath) {
            if (m.entries().containsKey("seed")) {
                throw error(m, "model.seed", m.keyLine("seed"), "a seed goes with a preset, not with a path");
            }
            YamlNode p = m.entries().get("path");
            Path dir = resolve(string(p, "model.path"));
            if (!Files.isDirectory(dir) && !(Files.isRegularFile(dir) && dir.getFileName().toString().endsWith(".gguf"))) {
                throw error(p, "model.path", "no such model directory or .gguf file: " + dir);
            }
            return ModelSpec.directory(dir.toString());
        }
        YamlNode presetNode = m.entries().get("preset");
        String preset = string(presetNode, "model.preset");
        if (!PRESETS.contains(preset)) {
            throw error(presetNode, "model.preset", "unknown preset \"" + preset + "\" (known: "
                    + SyntheticPreset.known() + ")");
        }
        YamlNode seed = required(m, "seed", "model");
        return ModelSpec.preset(preset, longValue(seed, "model.seed"));
    }

    private Set<Measurement> measurements(YamlNode node) {
        List<YamlNode> items = nonEmptyList(node, "measurements");
        Set<Measurement> result = EnumSet.noneOf(Measurement.class);
        for (int i = 0; i < items.size(); i++) {
            String key = "measurements[" + i + "]";
            String n = string(items.get(i), key);
            Measurement m = Measurement.fromYaml(n);
            if (m == null) {
                throw error(items.get(i), key, "unknown measurement \"" + n + "\" (known: quality, throughput, batch)");
            }
            result.add(m);
        }
        return result;
    }

    /** The {@code activations} axis: {@code f32} and/or {@code int8}, each kept once, in file order. */
    private List<Activations> activations(YamlNode node) {
        List<YamlNode> items = nonEmptyList(node, "activations");
        Set<Activations> result = new LinkedHashSet<>();
        for (int i = 0; i < items.size(); i++) {
            String key = "activations[" + i + "]";
            String n = string(items.get(i), key);
            Activations a = Activations.fromYaml(n);
            if (a == null) {
                throw error(items.get(i), key, "unknown activation type \"" + n + "\" (known: f32, int8)");
            }
            result.add(a);
        }
        return List.copyOf(result);
    }

    /** The {@code kv_cache} axis: a type for keys and values alike, or {@code {k: TYPE, v: TYPE}}; each kept once. */
    private List<KvCacheChoice> kvCaches(YamlNode node) {
        List<YamlNode> items = nonEmptyList(node, "kv_cache");
        Set<KvCacheChoice> result = new LinkedHashSet<>();
        for (int i = 0; i < items.size(); i++) {
            String key = "kv_cache[" + i + "]";
            YamlNode item = items.get(i);
            if (item instanceof YamlNode.Mapping m) {
                checkKeys(m, key, Set.of("k", "v"));
                result.add(new KvCacheChoice(kvType(m.entries().get("k"), key + ".k", string(required(m, "k", key), key + ".k")),
                        kvType(m.entries().get("v"), key + ".v", string(required(m, "v", key), key + ".v"))));
            } else {
                String t = kvType(item, key, string(item, key));
                result.add(new KvCacheChoice(t, t));
            }
        }
        return List.copyOf(result);
    }

    private String kvType(YamlNode node, String key, String name) {
        String n = name.toLowerCase(java.util.Locale.ROOT);
        if (!KvFormats.NAMES.contains(n)) {
            throw error(node, key, "unknown KV cache type \"" + name + "\" (known: " + String.join(", ", KvFormats.NAMES) + ")");
        }
        return n;
    }

    /** {@code q4_8}, {@code q4_8+attn=q8_0+lm_head=q8_0} or {@code {base: q4_8, overrides: {attn: q8_0}}}. */
    private FormatChoice formatChoice(YamlNode node, String key) {
        if (node instanceof YamlNode.Scalar s && s.token() == JsonToken.VALUE_STRING) {
            String[] parts = s.text().split("\\+", -1);
            String base = format(node, key, parts[0].trim());
            Map<String, String> overrides = new TreeMap<>();
            for (int i = 1; i < parts.length; i++) {
                String[] kv = parts[i].split("=", -1);
                if (kv.length != 2) {
                    throw error(node, key, "\"" + parts[i] + "\" in \"" + s.text()
                            + "\" is not TENSORS=FORMAT (e.g. q4_8+attn=q8_0)");
                }
                putOverride(node, key, overrides, kv[0].trim(), kv[1].trim());
            }
            return new FormatChoice(base, overrides);
        }
        if (node instanceof YamlNode.Mapping m) {
            checkKeys(m, key, Set.of("base", "overrides"));
            String base = format(m.entries().get("base"), key + ".base",
                    string(required(m, "base", key), key + ".base"));
            Map<String, String> overrides = new TreeMap<>();
            if (m.entries().containsKey("overrides")) {
                YamlNode.Mapping o = mapping(m.entries().get("overrides"), key + ".overrides");
                for (Map.Entry<String, YamlNode> e : o.entries().entrySet()) {
                    String k = key + ".overrides." + e.getKey();
                    putOverride(e.getValue(), k, overrides, e.getKey(), string(e.getValue(), k));
                }
            }
            return new FormatChoice(base, overrides);
        }
        throw error(node, key, "expected a format name or a mapping with \"base\" and \"overrides\"");
    }

    private void putOverride(YamlNode node, String key, Map<String, String> overrides, String tensors, String format) {
        if (!FormatCatalog.isTensorSelector(tensors)) {
            throw error(node, key, "unknown tensor class \"" + tensors + "\" (known: "
                    + String.join(", ", new java.util.TreeSet<>(FormatCatalog.TENSOR_CLASSES))
                    + ", q, k, v, o, gate, up, down, and L<layer> or L<layer>.<class> such as L3 or L3.q)");
        }
        if (overrides.put(tensors, format(node, key, format)) != null) {
            throw error(node, key, "tensor class \"" + tensors + "\" is given twice");
        }
    }

    private String format(YamlNode node, String key, String name) {
        if (FormatCatalog.traits(name).isEmpty()) {
            throw error(node, key, "unknown format \"" + name + "\" (known: "
                    + String.join(", ", FormatCatalog.names()) + ")");
        }
        return name;
    }

    // ---- typed access, each failure naming file, line and key ----

    private YamlNode required(YamlNode.Mapping m, String child, String parent) {
        YamlNode n = m.entries().get(child);
        String key = parent.isEmpty() ? child : parent + "." + child;
        if (n == null || (n instanceof YamlNode.Scalar s && s.isNull())) {
            throw error(m, key, "is missing");
        }
        return n;
    }

    private void checkKeys(YamlNode.Mapping m, String parent, Set<String> allowed) {
        for (String k : m.entries().keySet()) {
            if (!allowed.contains(k)) {
                String key = parent.isEmpty() ? k : parent + "." + k;
                throw error(m, key, m.keyLine(k), "unknown key (expected one of: "
                        + String.join(", ", new java.util.TreeSet<>(allowed)) + ")");
            }
        }
    }

    private YamlNode.Mapping mapping(YamlNode node, String key) {
        if (node instanceof YamlNode.Mapping m) {
            return m;
        }
        throw error(node, key, "expected a mapping");
    }

    private List<YamlNode> nonEmptyList(YamlNode node, String key) {
        if (node instanceof YamlNode.Sequence s) {
            if (s.items().isEmpty()) {
                throw error(node, key, "the list is empty");
            }
            return s.items();
        }
        throw error(node, key, "expected a list");
    }

    private String string(YamlNode node, String key) {
        if (node instanceof YamlNode.Scalar s && !s.isNull() && !s.text().isBlank()) {
            return s.text();
        }
        throw error(node, key, "expected a non-empty text");
    }

    private long longValue(YamlNode node, String key) {
        if (node instanceof YamlNode.Scalar s && s.token() == JsonToken.VALUE_NUMBER_INT) {
            try {
                return Long.parseLong(s.text());
            } catch (NumberFormatException e) {
                throw error(node, key, "\"" + s.text() + "\" does not fit a 64-bit integer");
            }
        }
        throw error(node, key, "expected an integer, got " + describe(node));
    }

    private int positiveInt(YamlNode node, String key) {
        long v = longValue(node, key);
        if (v <= 0 || v > Integer.MAX_VALUE) {
            throw error(node, key, "expected a positive integer, got " + v);
        }
        return (int) v;
    }

    private List<Integer> positiveInts(YamlNode node, String key) {
        List<YamlNode> items = nonEmptyList(node, key);
        Set<Integer> values = new LinkedHashSet<>();
        for (int i = 0; i < items.size(); i++) {
            values.add(positiveInt(items.get(i), key + "[" + i + "]"));
        }
        return List.copyOf(values);
    }

    private Path existingFile(YamlNode node, String key) {
        Path p = resolve(string(node, key));
        if (!Files.isRegularFile(p)) {
            throw error(node, key, "no such file: " + p);
        }
        return p;
    }

    private Path resolve(String path) {
        return baseDir.resolve(path).normalize();
    }

    private static String contentHash(List<String> files) {
        StringBuilder all = new StringBuilder();
        for (String f : files) {
            try {
                all.append(ConfigId.sha256(Files.readAllBytes(Path.of(f)))).append('\n');
            } catch (IOException e) {
                throw new QlabException(f + ": cannot read: " + e.getMessage());
            }
        }
        return ConfigId.sha256(all.toString());
    }

    private static String describe(YamlNode node) {
        return switch (node) {
            case YamlNode.Scalar s when s.isNull() -> "nothing";
            case YamlNode.Scalar s -> "\"" + s.text() + "\"";
            case YamlNode.Sequence q -> "a list";
            case YamlNode.Mapping m -> "a mapping";
        };
    }

    private QlabException error(YamlNode node, String key, String message) {
        return error(node, key, node.line(), message);
    }

    private QlabException error(YamlNode node, String key, int line, String message) {
        String where = key.isEmpty() ? "" : " key \"" + key + "\":";
        return new QlabException(fileName + ":" + line + ":" + oneLine(where + " " + message));
    }

    /** Keys and values quoted in a message come from the file: a line break in one is shown escaped. */
    static String oneLine(String text) {
        return text.replace("\n", "\\n").replace("\r", "\\r").replaceAll("\\p{Cntrl}", "?");
    }
}
