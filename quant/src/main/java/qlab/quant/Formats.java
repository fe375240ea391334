package qlab.quant;

import java.util.ArrayList;
import java.util.List;
import java.util.function.IntFunction;
import java.util.stream.Collectors;
import qlab.engine.QlabException;
import qlab.quant.format.B1_0Format;
import qlab.quant.format.B1_8Format;
import qlab.quant.format.Bf16Format;
import qlab.quant.format.F16Format;
import qlab.quant.format.F32Format;
import qlab.quant.format.IQ4_NLFormat;
import qlab.quant.format.IQ4_XSFormat;
import qlab.quant.format.Int4Format;
import qlab.quant.format.Int8Format;
import qlab.quant.format.Q2_0Format;
import qlab.quant.format.Q2_8Format;
import qlab.quant.format.Q2_KFormat;
import qlab.quant.format.Q3_KFormat;
import qlab.quant.format.Q4_0Format;
import qlab.quant.format.Q4_1Format;
import qlab.quant.format.Q4_8Format;
import qlab.quant.format.Q4_KFormat;
import qlab.quant.format.Q5_0Format;
import qlab.quant.format.Q5_1Format;
import qlab.quant.format.Q5_KFormat;
import qlab.quant.format.Q6_KFormat;
import qlab.quant.format.Q8_0Format;
import qlab.quant.format.TQ2_0Format;
import qlab.quant.format.TQ2_8Format;

/** The registry: the only place that knows every format. Tests and sweeps iterate it. */
public final class Formats {
    private Formats() {
    }

    /** A registered format: its name, the group sizes it supports (the first is the default), its constructor. */
    private record Entry(String name, List<Integer> groups, IntFunction<QuantFormat> create) {
        int defaultGroup() {
            return groups.getFirst();
        }
    }

    private static final List<Entry> ENTRIES = List.of(
            new Entry("f32", List.of(1), g -> new F32Format()),
            new Entry("f16", List.of(1), g -> new F16Format()),
            new Entry("bf16", List.of(1), g -> new Bf16Format()),
            new Entry("q8_0", List.of(32, 64, 128), Q8_0Format::new),
            new Entry("q4_0", List.of(32, 64, 128), Q4_0Format::new),
            new Entry("q4_1", List.of(32), g -> new Q4_1Format()),
            new Entry("q5_0", List.of(32), g -> new Q5_0Format()),
            new Entry("q5_1", List.of(32), g -> new Q5_1Format()),
            new Entry("q4_8", List.of(128), g -> new Q4_8Format(128)),
            new Entry("q4_8g64", List.of(64), g -> new Q4_8Format(64)),
            new Entry("q2_8", List.of(128), g -> new Q2_8Format()),
            new Entry("tq2_8", List.of(128), g -> new TQ2_8Format()),
            new Entry("b1_8", List.of(128), g -> new B1_8Format()),
            new Entry("q4_k", List.of(256), g -> new Q4_KFormat()),
            new Entry("q5_k", List.of(256), g -> new Q5_KFormat()),
            new Entry("q6_k", List.of(256), g -> new Q6_KFormat()),
            new Entry("q2_k", List.of(256), g -> new Q2_KFormat()),
            new Entry("q3_k", List.of(256), g -> new Q3_KFormat()),
            new Entry("iq4_nl", List.of(32), g -> new IQ4_NLFormat()),
            new Entry("iq4_xs", List.of(256), g -> new IQ4_XSFormat()),
            new Entry("q2_0", List.of(32, 128), Q2_0Format::new),
            new Entry("tq2_0", List.of(32, 128), TQ2_0Format::new),
            new Entry("b1_0", List.of(32, 128), B1_0Format::new),
            new Entry("int8", List.of(0), g -> new Int8Format()),
            new Entry("int4", List.of(128, 32, 64), Int4Format::new));

    private static Entry entry(String name) {
        for (Entry e : ENTRIES) {
            if (e.name.equals(name)) {
                return e;
            }
        }
        throw new QlabException("unknown format \"" + name + "\"; valid formats: " + String.join(", ", names()));
    }

    /**
     * The registered name equal to {@code name} ignoring case ({@code Q8_0} is {@code q8_0}), if
     * there is one: names differ by more than case, so there is at most one.
     */
    public static java.util.Optional<String> nameIgnoringCase(String name) {
        return ENTRIES.stream().map(Entry::name).filter(n -> n.equalsIgnoreCase(name)).findFirst();
    }

    /** Every format name, in registry order. */
    public static List<String> names() {
        return ENTRIES.stream().map(Entry::name).toList();
    }

    /** The format with its default group size. */
    public static QuantFormat byName(String name) {
        Entry e = entry(name);
        return e.create.apply(e.defaultGroup());
    }

    /** The format with the given group size; a size it does not support is a {@link QlabException}. */
    public static QuantFormat byName(String name, int groupSize) {
        Entry e = entry(name);
        if (!e.groups.contains(groupSize)) {
            throw new QlabException("format \"" + name + "\": group size " + groupSize + " is not supported (supported: "
                    + e.groups.stream().map(String::valueOf).collect(Collectors.joining(", ")) + ")");
        }
        return e.create.apply(groupSize);
    }

    /** Group sizes the format supports, default first (1 = no scale, 0 = one scale per row). */
    public static List<Integer> supportedGroupSizes(String name) {
        return entry(name).groups;
    }

    /**
     * Why {@code name} at {@code groupSize} cannot be built (the message {@link #byName(String, int)}
     * would throw), or empty when it can: lets a sweep skip impossible combinations with a reason.
     */
    public static java.util.Optional<String> whyUnsupported(String name, int groupSize) {
        try {
            byName(name, groupSize);
            return java.util.Optional.empty();
        } catch (QlabException e) {
            return java.util.Optional.of(e.getMessage());
        }
    }

    /** Every format at its default group size. */
    public static List<QuantFormat> all() {
        return ENTRIES.stream().map(e -> e.create.apply(e.defaultGroup())).toList();
    }

    /** Every format at every group size it supports. */
    public static List<QuantFormat> allVariants() {
        List<QuantFormat> out = new ArrayList<>();
        for (Entry e : ENTRIES) {
            for (int g : e.groups) {
                out.add(e.create.apply(g));
            }
        }
        return out;
    }
}
