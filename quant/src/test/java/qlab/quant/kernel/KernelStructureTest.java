package qlab.quant.kernel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.lang.classfile.ClassFile;
import java.lang.classfile.ClassModel;
import java.lang.classfile.MethodModel;
import java.lang.classfile.instruction.InvokeInstruction;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;

/**
 * The rule {@link GroupKernel}'s and {@link Int8Strips}' class comments state, checked on their
 * bytecode (and on the token tiles of prefill and batched decode): inside the f32- and
 * int8-activation loops no vector is passed to or returned from a method outside the Vector API.
 * The API's methods are always inlined by C2; a method of ours that takes or returns a vector is
 * inlined only when C2's heuristics (call-site frequency, the size of code already compiled for
 * it) agree, and otherwise boxes the vector on every call: single-token q4_0 decode measured
 * 0.39 tok/s instead of 31 in a JVM that had run other formats first. Which compilation goes
 * wrong depends on what ran before, so a timed test could not catch it reliably; this one does.
 */
class KernelStructureTest {

    private static final String VECTOR_API = "jdk/incubator/vector/";
    /** The loops of every width: decode, levels for prefill, dequantized rows for tiles, the products from levels. */
    private static final Set<String> LOOPS = Set.of("row", "levels", "dequantize", "twoFromLevels", "oneFromLevels");

    @Test
    void loopsPassNoVectorThroughACallOutsideTheVectorApi() throws IOException {
        List<String> violations = new ArrayList<>();
        int[] counts = new int[2];
        for (Class<?> c : List.of(GroupKernel.class, GroupKernel.Codes8.class, GroupKernel.Codes4.class,
                GroupKernel.Codes5.class, GroupKernel.CodesLow.class, BlockCodeWeights.class)) {
            check(c, name -> c == BlockCodeWeights.class ? name.equals("withMins") : LOOPS.contains(name), violations, counts);
        }
        // Every width's row and levels, Codes8's and Codes4's dequantize, the base class's three, withMins.
        assertEquals(4 + 4 + 2 + 3 + 1, counts[0], "kernel loops found");
        assertTrue(counts[1] > 100, "the loops call the Vector API (" + counts[1] + " calls)");
        assertEquals(List.of(), violations);
    }

    /** The int8 strips' kernels: nibbles (any block, 32-value blocks, q4_k's factored ones), bytes, small bytes, 5-bit and 6-bit words. */
    @Test
    void int8StripsPassNoVectorThroughACallOutsideTheVectorApi() throws IOException {
        List<String> violations = new ArrayList<>();
        int[] counts = new int[2];
        check(Int8Strips.class, name -> name.startsWith("strip") && !name.equals("strips") && !name.equals("stripsPerPass"),
                violations, counts);
        assertEquals(7, counts[0], "kernel loops found");
        assertTrue(counts[1] > 100, "the loops call the Vector API (" + counts[1] + " calls)");
        assertEquals(List.of(), violations);
    }

    /** The token tiles of prefill and batched decode (f32 panels times vectors of tokens). */
    @Test
    void tokenTilesPassNoVectorThroughACallOutsideTheVectorApi() throws IOException {
        List<String> violations = new ArrayList<>();
        int[] counts = new int[2];
        check(qlab.engine.tensor.TokenTile.class, name -> name.startsWith("tile"), violations, counts);
        assertEquals(4, counts[0], "tiles found: 6x1, 6x2, 12x1, 12x2");
        assertTrue(counts[1] > 50, "the tiles call the Vector API (" + counts[1] + " calls)");
        assertEquals(List.of(), violations);
    }

    /** Adds to {@code violations} every call of a checked method that takes or returns a vector outside the API; counts methods and API calls. */
    private static void check(Class<?> c, Predicate<String> checked, List<String> violations, int[] counts) throws IOException {
        for (MethodModel m : parse(c).methods()) {
            String name = m.methodName().stringValue();
            if (!checked.test(name) || m.code().isEmpty()) {
                continue;
            }
            counts[0]++;
            for (var element : m.code().get()) {
                if (!(element instanceof InvokeInstruction call)) {
                    continue;
                }
                String owner = call.owner().asInternalName();
                String type = call.typeSymbol().descriptorString();
                if (owner.startsWith(VECTOR_API)) {
                    counts[1]++;
                } else if (type.contains("L" + VECTOR_API)) {
                    violations.add(c.getSimpleName() + "." + name + " calls " + owner + "." + call.name().stringValue() + type);
                }
            }
        }
    }

    private static ClassModel parse(Class<?> c) throws IOException {
        String file = c.getName().substring(c.getPackageName().length() + 1) + ".class";
        try (InputStream in = c.getResourceAsStream(file)) {
            return ClassFile.of().parse(in.readAllBytes());
        }
    }
}
