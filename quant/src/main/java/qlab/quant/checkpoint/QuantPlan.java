package qlab.quant.checkpoint;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import qlab.engine.QlabException;
import qlab.engine.model.ModelConfig;
import qlab.engine.model.ModelManifest;
import qlab.quant.Formats;
import qlab.quant.QuantFormat;
import qlab.quant.ggml.GgmlType;
import qlab.quant.ggml.LlamaRecipe;
import qlab.quant.ggml.LlamaRecipe.Kind;

/**
 * Which format each weight matrix gets: a default format and group size, and overrides for
 * selected matrices (per-tensor mixes such as "q4_8 with attention in q8_0").
 *
 * <p>Text form, used by the command line and sweep files: {@code q4_8}, {@code q4_0/g64},
 * {@code q4_8+attn=q8_0+emb=q8_0}, {@code q2_8+mlp-down=q4_8/g64+head=q8_0/g32},
 * {@code q4_0+L0.down=q8_0+L1=q5_0+v=q8_0}. An override's selector ({@link Selector}) is a role
 * ({@code attn-qkv}, {@code attn-o}, {@code mlp-gate-up}, {@code mlp-down}, {@code emb}, {@code head},
 * shorthands {@code attn}, {@code mlp}), a kind of layer matrix in every layer ({@code q}, {@code k},
 * {@code v}, {@code o}, {@code gate}, {@code up}, {@code down}), or either within one layer
 * ({@code L3} for all its matrices, {@code L3.q}, {@code L3.mlp}). Where selectors overlap the most
 * specific wins: one naming a layer before one that does not, then the one naming fewer kinds.
 *
 * <p>The default may instead be one of llama-quantize's named types ({@link LlamaRecipe}:
 * {@code Q4_K_M}, {@code IQ4_XS}, …, upper case as llama.cpp spells them): each matrix then gets
 * the format of the ggml type llama.cpp would give it, which depends on the model's shape
 * ({@link #choiceFor(String, ModelConfig, int, boolean)}). Role overrides still take precedence.
 */
public record QuantPlan(String format, int group, Map<Selector, FormatChoice> overrides) {

    /** A format at a group size (0 = the format's default group). */
    public record FormatChoice(String format, int group) {
        public QuantFormat resolve() {
            return group == 0 ? Formats.byName(format) : Formats.byName(format, group);
        }

        @Override
        public String toString() {
            return group == 0 ? format : format + "/g" + group;
        }

        static FormatChoice parse(String text) {
            String[] p = text.split("/g", 2);
            int g = 0;
            if (p.length == 2) {
                try {
                    g = Integer.parseInt(p[1]);
                } catch (NumberFormatException e) {
                    throw new QlabException("format \"" + text + "\": group \"" + p[1] + "\" is not a number");
                }
            }
            // Q8_0 as llama.cpp spells the type is the format q8_0 (no named type can be meant here).
            FormatChoice c = new FormatChoice(Formats.nameIgnoringCase(p[0]).orElse(p[0]), g);
            c.resolve(); // unknown names and unsupported groups fail here, naming them
            return c;
        }
    }

    /** Groups of matrices that can be given their own format. */
    public enum Role {
        ATTN_QKV("attn-qkv", Kind.ATTN_Q, Kind.ATTN_K, Kind.ATTN_V), ATTN_O("attn-o", Kind.ATTN_OUTPUT),
        MLP_GATE_UP("mlp-gate-up", Kind.FFN_GATE, Kind.FFN_UP), MLP_DOWN("mlp-down", Kind.FFN_DOWN),
        EMB("emb", Kind.TOKEN_EMBD), HEAD("head", Kind.OUTPUT);

        private final String id;
        private final Set<Kind> kinds;

        Role(String id, Kind... kinds) {
            this.id = id;
            this.kinds = Collections.unmodifiableSet(EnumSet.copyOf(List.of(kinds)));
        }

        public String id() {
            return id;
        }

        public Set<Kind> kinds() {
            return kinds;
        }

        /** The role of a weight matrix, by its Hugging Face name. */
        public static Role of(String tensor) {
            if (tensor.equals(ModelManifest.EMBED)) {
                return EMB;
            }
            if (tensor.equals(ModelManifest.LM_HEAD)) {
                return HEAD;
            }
            if (tensor.endsWith("q_proj.weight") || tensor.endsWith("k_proj.weight") || tensor.endsWith("v_proj.weight")) {
                return ATTN_QKV;
            }
            if (tensor.endsWith("o_proj.weight")) {
                return ATTN_O;
            }
            if (tensor.endsWith("gate_proj.weight") || tensor.endsWith("up_proj.weight")) {
                return MLP_GATE_UP;
            }
            if (tensor.endsWith("down_proj.weight")) {
                return MLP_DOWN;
            }
            throw new IllegalArgumentException("not a weight matrix: " + tensor);
        }
    }

    /** Every role name the text form accepts, shorthands included. */
    public static Set<String> roleNames() {
        Set<String> names = new TreeSet<>(List.of("attn", "mlp"));
        for (Role r : Role.values()) {
            names.add(r.id());
        }
        return Collections.unmodifiableSet(names);
    }

    /** The short name of each kind of weight matrix in selectors. */
    private static final Map<Kind, String> KIND_NAMES = kindNames();

    private static Map<Kind, String> kindNames() {
        Map<Kind, String> m = new EnumMap<>(Kind.class);
        m.put(Kind.TOKEN_EMBD, "emb");
        m.put(Kind.OUTPUT, "head");
        m.put(Kind.ATTN_Q, "q");
        m.put(Kind.ATTN_K, "k");
        m.put(Kind.ATTN_V, "v");
        m.put(Kind.ATTN_OUTPUT, "o");
        m.put(Kind.FFN_GATE, "gate");
        m.put(Kind.FFN_UP, "up");
        m.put(Kind.FFN_DOWN, "down");
        return Collections.unmodifiableMap(m);
    }

    /** The selector name of a kind of matrix: {@code q}, {@code down}, {@code emb}, {@code head}. */
    public static String kindName(Kind kind) {
        return KIND_NAMES.get(kind);
    }

    /** The kinds of matrix a transformer layer holds, in the order {@link #kindName} lists them. */
    public static final Set<Kind> LAYER_KINDS = Collections.unmodifiableSet(EnumSet.range(Kind.ATTN_Q, Kind.FFN_DOWN));

    /**
     * Which matrices an override applies to.
     *
     * @param id    the selector as written in canonical text ({@code attn-qkv}, {@code q}, {@code L3.down})
     * @param layer the one layer it is restricted to, or −1 for every layer (and the embedding and head)
     * @param kinds the kinds of matrix it selects
     * @param role  the role it names, when it is one of {@link Role} (roles sort first in canonical text)
     */
    public record Selector(String id, int layer, Set<Kind> kinds, Optional<Role> role) {

        public static Selector of(Role role) {
            return new Selector(role.id(), -1, role.kinds(), Optional.of(role));
        }

        /** Whether this selector applies to the matrix with this Hugging Face name. */
        public boolean matches(String tensor) {
            Optional<Kind> kind = Kind.ofHfName(tensor);
            return kind.isPresent() && kinds.contains(kind.get())
                    && (layer < 0 || LlamaRecipe.layerOf(tensor) == layer);
        }

        /** Narrower first: restricted to a layer, then fewer kinds. */
        static final Comparator<Selector> MOST_SPECIFIC_FIRST = Comparator
                .comparing((Selector s) -> s.layer < 0).thenComparingInt(s -> s.kinds.size());

        /** Canonical text order: roles in {@link Role} order, kinds everywhere, then per layer. */
        static final Comparator<Selector> CANONICAL = Comparator.comparingInt(Selector::layer)
                .thenComparing(s -> s.role.isEmpty())
                .thenComparingInt(s -> s.role.map(Enum::ordinal).orElse(0))
                .thenComparingInt(s -> s.kinds.stream().mapToInt(Enum::ordinal).min().orElse(0))
                .thenComparingInt(s -> -s.kinds.size())
                .thenComparing(Selector::id);
    }

    /** Whether {@code text} is a selector the text form accepts. */
    public static boolean isSelector(String text) {
        try {
            selectors(text);
            return true;
        } catch (QlabException e) {
            return false;
        }
    }

    /** The selectors one override names: two for the shorthands attn and mlp, one otherwise. */
    public static List<Selector> selectors(String id) {
        java.util.regex.Matcher layered = java.util.regex.Pattern.compile("L(\\d{1,4})(?:\\.(.+))?").matcher(id);
        if (layered.matches()) {
            int layer = Integer.parseInt(layered.group(1));
            String within = layered.group(2);
            Set<Kind> kinds = EnumSet.noneOf(Kind.class);
            if (within == null) {
                kinds.addAll(LAYER_KINDS);
            } else {
                for (Selector s : selectors(within)) {
                    kinds.addAll(s.kinds());
                }
                if (!LAYER_KINDS.containsAll(kinds)) {
                    throw new QlabException("tensor selector \"" + id + "\": a layer holds no " + within
                            + " matrix (a layer's: q, k, v, o, gate, up, down, attn, mlp and their roles)");
                }
            }
            return List.of(new Selector(id, layer, Collections.unmodifiableSet(kinds), Optional.empty()));
        }
        switch (id) {
            case "attn":
                return List.of(Selector.of(Role.ATTN_QKV), Selector.of(Role.ATTN_O));
            case "mlp":
                return List.of(Selector.of(Role.MLP_GATE_UP), Selector.of(Role.MLP_DOWN));
            default:
                break;
        }
        for (Role r : Role.values()) {
            if (r.id.equals(id)) {
                return List.of(Selector.of(r));
            }
        }
        for (Kind k : LAYER_KINDS) {
            if (KIND_NAMES.get(k).equals(id)) {
                return List.of(new Selector(id, -1, Set.of(k), Optional.empty()));
            }
        }
        throw new QlabException("unknown tensor selector \"" + id + "\"; known: attn, mlp, "
                + Arrays.stream(Role.values()).map(Role::id).collect(Collectors.joining(", "))
                + ", q, k, v, o, gate, up, down, and L<layer> or L<layer>.<one of those> (e.g. L3, L3.q, L3.mlp)");
    }

    public static QuantPlan parse(String text) {
        String[] parts = text.trim().split("\\+");
        String head = parts[0].trim();
        FormatChoice base = defaultChoice(head);
        Map<Selector, FormatChoice> over = new LinkedHashMap<>();
        for (int i = 1; i < parts.length; i++) {
            String[] kv = parts[i].split("=", 2);
            if (kv.length != 2) {
                throw new QlabException("format mix \"" + text + "\": \"" + parts[i] + "\" is not TENSORS=FORMAT");
            }
            FormatChoice c = FormatChoice.parse(kv[1].trim());
            for (Selector sel : selectors(kv[0].trim())) {
                over.put(sel, c);
            }
        }
        return new QuantPlan(base.format(), base.group(), over);
    }

    /** What llama.cpp's named types do that a format does not, in the words of the messages. */
    private static final String RECIPE_MEANING = "llama.cpp's named type, its recipe: the token embedding and output "
            + "(and in some recipes attn_v and ffn_down) in other types";

    /**
     * The default of a plan as typed: a qlab format or a llama.cpp named type. The exact spellings
     * come first ({@code q4_0} the format, {@code Q4_0} llama.cpp's recipe); any other case is read
     * as whichever of the two has the name, and refused when both do ({@code q6_K}).
     */
    static FormatChoice defaultChoice(String text) {
        String[] p = text.split("/g", 2);
        String name = p[0];
        if (p.length == 1 && LlamaRecipe.byName(name).isPresent()) {
            return new FormatChoice(name, 0);
        }
        if (Formats.names().contains(name)) {
            return FormatChoice.parse(text);
        }
        Optional<String> format = Formats.nameIgnoringCase(name);
        // A named type takes no group size: with one, only a format can be meant.
        Optional<LlamaRecipe> recipe = p.length == 1 ? LlamaRecipe.byNameIgnoringCase(name) : Optional.empty();
        if (format.isPresent() && recipe.isPresent()) {
            throw new QlabException("format \"" + name + "\" is ambiguous: " + recipe.get().name() + " is " + RECIPE_MEANING
                    + ", " + format.get() + " is qlab's format on every matrix; write " + recipe.get().name() + " or "
                    + format.get());
        }
        if (recipe.isPresent()) {
            return new FormatChoice(recipe.get().name(), 0);
        }
        if (format.isPresent()) {
            return FormatChoice.parse(format.get() + (p.length == 2 ? "/g" + p[1] : ""));
        }
        throw new QlabException("unknown format \"" + name + "\"; qlab's formats (one on every matrix): "
                + String.join(", ", Formats.names()) + "; llama.cpp's named types (any case where no format has the name): "
                + LlamaRecipe.names() + "; " + String.join(", ", bothNames()) + " are both: upper case is "
                + RECIPE_MEANING + ", lower case qlab's format on every matrix");
    }

    /** The named types that are also a format's name in lower case: Q4_0 and q4_0, Q6_K and q6_k, … */
    static List<String> bothNames() {
        return Arrays.stream(LlamaRecipe.values()).map(Enum::name)
                .filter(n -> Formats.names().contains(n.toLowerCase(Locale.ROOT))).toList();
    }

    /**
     * The same plan with its default read the other way, when its name is both a format and a
     * llama.cpp named type: {@code q4_0} (every matrix) for {@code Q4_0} (llama.cpp's recipe) and
     * the reverse. Empty for every other plan.
     */
    public Optional<QuantPlan> otherReading() {
        if (recipe().isEmpty() && group != 0 && group != Formats.byName(format).groupSize()) {
            return Optional.empty(); // q4_0/g64 is no named type
        }
        String upper = format.toUpperCase(Locale.ROOT);
        if (!bothNames().contains(upper)) {
            return Optional.empty();
        }
        String other = format.equals(upper) ? format.toLowerCase(Locale.ROOT) : upper;
        return Optional.of(new QuantPlan(other, 0, overrides));
    }

    /** What a llama.cpp named type does beyond its default type, as the messages say it. */
    public static String recipeMeaning() {
        return RECIPE_MEANING;
    }

    /** The plan with one selector's override set (command-line flags such as --attn q8_0). */
    public QuantPlan with(String selector, String formatText) {
        Map<Selector, FormatChoice> over = new LinkedHashMap<>(overrides);
        FormatChoice c = FormatChoice.parse(formatText);
        for (Selector sel : selectors(selector)) {
            over.put(sel, c);
        }
        return new QuantPlan(format, group, over);
    }

    /** The override that decides a matrix's format: the most specific selector matching it. */
    private Optional<FormatChoice> override(String tensor) {
        Selector best = null;
        for (Selector sel : overrides.keySet()) {
            if (sel.matches(tensor) && (best == null || Selector.MOST_SPECIFIC_FIRST.compare(sel, best) <= 0)) {
                best = sel;
            }
        }
        return best == null ? Optional.empty() : Optional.of(overrides.get(best));
    }

    /** A user error when a selector names a layer the model does not have. */
    private void requireLayers(ModelConfig config) {
        for (Selector sel : overrides.keySet()) {
            if (sel.layer() >= config.numLayers()) {
                throw new QlabException("format mix \"" + this + "\": " + sel.id() + " names layer " + sel.layer()
                        + ", but the model has " + config.numLayers() + " layers (0 to " + (config.numLayers() - 1) + ")");
            }
        }
    }

    /** The llama.cpp recipe this plan's default is, if it is one. */
    public Optional<LlamaRecipe> recipe() {
        return group == 0 ? LlamaRecipe.byName(format) : Optional.empty();
    }

    /**
     * The format of a matrix, for plans whose choice does not depend on the model (not a
     * {@link #recipe}); a recipe plan needs {@link #choiceFor(String, ModelConfig, int, boolean)}.
     */
    public FormatChoice choiceFor(String tensor) {
        Role.of(tensor); // not a weight matrix: IllegalArgumentException
        Optional<FormatChoice> over = override(tensor);
        if (recipe().isPresent() && over.isEmpty()) {
            throw new IllegalStateException(format + " assigns formats by the model's shape: use choiceFor(tensor, config, cols, importance)");
        }
        return over.orElse(new FormatChoice(format, group));
    }

    /**
     * The format of matrix {@code tensor} (a Hugging Face name) of a model of this config whose rows
     * hold {@code cols} values, quantized with or without an importance matrix.
     */
    public FormatChoice choiceFor(String tensor, ModelConfig config, int cols, boolean importance) {
        requireLayers(config);
        if (override(tensor).isPresent() || recipe().isEmpty()) {
            return choiceFor(tensor);
        }
        return formatOf(llamaType(tensor, config, cols, importance).type());
    }

    /** The ggml type llama.cpp gives the matrix under this plan's recipe (which must be present). */
    public LlamaRecipe.Choice llamaType(String tensor, ModelConfig config, int cols, boolean importance) {
        LlamaRecipe r = recipe().orElseThrow();
        LlamaRecipe.Kind kind = LlamaRecipe.Kind.ofHfName(tensor)
                .orElseThrow(() -> new IllegalArgumentException("not a weight matrix: " + tensor));
        return r.typeFor(kind, LlamaRecipe.layerOf(tensor), cols, shape(config), importance);
    }

    private static LlamaRecipe.ModelShape shape(ModelConfig c) {
        return new LlamaRecipe.ModelShape(c.numLayers(), c.numHeads(), c.numKvHeads(), c.tieWordEmbeddings());
    }

    /** The qlab format storing a ggml type's blocks: the registry name is the type's name in lower case. */
    static FormatChoice formatOf(GgmlType type) {
        return new FormatChoice(type.name().toLowerCase(Locale.ROOT), 0);
    }

    /** One matrix of a model under a plan: its shape, format and stored bytes, and the llama.cpp type behind it. */
    public record Assignment(String tensor, long rows, long cols, FormatChoice format, long bytes,
                             Optional<LlamaRecipe.Choice> llama) {
    }

    /**
     * What the plan does to every weight matrix of a model of this config, in the checkpoint's
     * order. Bytes are the stored size: the ggml row size for a recipe's choices (so the figure is
     * llama.cpp's), the format's {@link QuantFormat#bytesPerRow} otherwise.
     */
    public List<Assignment> explain(ModelConfig config, boolean importance) {
        List<Assignment> out = new ArrayList<>();
        for (var e : ModelManifest.of(config).expected().entrySet()) {
            String name = e.getKey();
            long[] shape = e.getValue();
            if (shape.length != 2 || !name.endsWith(".weight")) {
                continue;
            }
            int cols = Math.toIntExact(shape[1]);
            FormatChoice choice = choiceFor(name, config, cols, importance);
            Optional<LlamaRecipe.Choice> llama = recipe().isPresent() && override(name).isEmpty()
                    ? Optional.of(llamaType(name, config, cols, importance)) : Optional.empty();
            long bytes = shape[0] * (llama.isPresent() ? llama.get().type().rowBytes(cols) : choice.resolve().bytesPerRow(cols));
            out.add(new Assignment(name, shape[0], cols, choice, bytes, llama));
        }
        return out;
    }

    /** Canonical text form: parse(toString()) is this plan. */
    @Override
    public String toString() {
        StringBuilder s = new StringBuilder(new FormatChoice(format, group).toString());
        overrides.keySet().stream().sorted(Selector.CANONICAL)
                .forEach(sel -> s.append('+').append(sel.id()).append('=').append(overrides.get(sel)));
        return s.toString();
    }
}
