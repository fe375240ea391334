package qlab.quant.checkpoint;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;
import qlab.engine.QlabException;
import qlab.engine.model.ModelConfig;
import qlab.engine.model.ModelManifest;
import qlab.quant.Formats;
import qlab.quant.QuantFormat;
import qlab.quant.ggml.GgmlType;
import qlab.quant.ggml.LlamaRecipe;

/**
 * Which format each weight matrix gets: a default format and group size, and per-role overrides
 * (per-tensor mixes such as "q4_8 with attention in q8_0").
 *
 * <p>Text form, used by the command line and sweep files: {@code q4_8}, {@code q4_0/g64},
 * {@code q4_8+attn=q8_0+emb=q8_0}, {@code q2_8+mlp-down=q4_8g64+head=q8_0/g32}.
 *
 * <p>The default may instead be one of llama-quantize's named types ({@link LlamaRecipe}:
 * {@code Q4_K_M}, {@code IQ4_XS}, …, upper case as llama.cpp spells them): each matrix then gets
 * the format of the ggml type llama.cpp would give it, which depends on the model's shape
 * ({@link #choiceFor(String, ModelConfig, int, boolean)}). Role overrides still take precedence.
 */
public record QuantPlan(String format, int group, Map<Role, FormatChoice> overrides) {

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
            FormatChoice c = new FormatChoice(p[0], g);
            c.resolve(); // unknown names and unsupported groups fail here, naming them
            return c;
        }
    }

    /** Groups of matrices that can be given their own format. */
    public enum Role {
        ATTN_QKV("attn-qkv"), ATTN_O("attn-o"), MLP_GATE_UP("mlp-gate-up"), MLP_DOWN("mlp-down"), EMB("emb"), HEAD("head");

        private final String id;

        Role(String id) {
            this.id = id;
        }

        public String id() {
            return id;
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
    public static java.util.Set<String> roleNames() {
        java.util.Set<String> names = new java.util.TreeSet<>(java.util.List.of("attn", "mlp"));
        for (Role r : Role.values()) {
            names.add(r.id());
        }
        return java.util.Collections.unmodifiableSet(names);
    }

    /** Role names accepted in the text form, including the shorthands attn (qkv and o) and mlp (all three). */
    private static Role[] roles(String id) {
        return switch (id) {
            case "attn" -> new Role[] {Role.ATTN_QKV, Role.ATTN_O};
            case "mlp" -> new Role[] {Role.MLP_GATE_UP, Role.MLP_DOWN};
            default -> {
                for (Role r : Role.values()) {
                    if (r.id.equals(id)) {
                        yield new Role[] {r};
                    }
                }
                throw new QlabException("unknown tensor role \"" + id + "\"; known: attn, mlp, "
                        + Arrays.stream(Role.values()).map(Role::id).collect(Collectors.joining(", ")));
            }
        };
    }

    public static QuantPlan parse(String text) {
        String[] parts = text.trim().split("\\+");
        String head = parts[0].trim();
        FormatChoice base = LlamaRecipe.byName(head).isPresent() ? new FormatChoice(head, 0) : FormatChoice.parse(head);
        Map<Role, FormatChoice> over = new LinkedHashMap<>();
        for (int i = 1; i < parts.length; i++) {
            String[] kv = parts[i].split("=", 2);
            if (kv.length != 2) {
                throw new QlabException("format mix \"" + text + "\": \"" + parts[i] + "\" is not ROLE=FORMAT");
            }
            FormatChoice c = FormatChoice.parse(kv[1].trim());
            for (Role r : roles(kv[0].trim())) {
                over.put(r, c);
            }
        }
        return new QuantPlan(base.format(), base.group(), over);
    }

    /** The plan with one role's override set (command-line flags such as --attn q8_0). */
    public QuantPlan with(String roleId, String formatText) {
        Map<Role, FormatChoice> over = new LinkedHashMap<>(overrides);
        FormatChoice c = FormatChoice.parse(formatText);
        for (Role r : roles(roleId)) {
            over.put(r, c);
        }
        return new QuantPlan(format, group, over);
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
        if (recipe().isPresent() && !overrides.containsKey(Role.of(tensor))) {
            throw new IllegalStateException(format + " assigns formats by the model's shape: use choiceFor(tensor, config, cols, importance)");
        }
        return overrides.getOrDefault(Role.of(tensor), new FormatChoice(format, group));
    }

    /**
     * The format of matrix {@code tensor} (a Hugging Face name) of a model of this config whose rows
     * hold {@code cols} values, quantized with or without an importance matrix.
     */
    public FormatChoice choiceFor(String tensor, ModelConfig config, int cols, boolean importance) {
        Role role = Role.of(tensor);
        if (overrides.containsKey(role) || recipe().isEmpty()) {
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
            Optional<LlamaRecipe.Choice> llama = recipe().isPresent() && !overrides.containsKey(Role.of(name))
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
        for (Role r : Role.values()) {
            if (overrides.containsKey(r)) {
                s.append('+').append(r.id()).append('=').append(overrides.get(r));
            }
        }
        return s.toString();
    }
}
