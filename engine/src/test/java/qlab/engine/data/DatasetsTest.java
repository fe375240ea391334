package qlab.engine.data;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import qlab.engine.QlabException;

/** The committed datasets match their manifest, and evaluation and calibration texts share nothing. */
class DatasetsTest {

    @TempDir
    Path tmp;

    @Test
    void everyFileMatchesItsManifestEntry() {
        Datasets d = Datasets.ofCheckout().orElseThrow(() -> new AssertionError("datasets/ not found (qlab.home not set?)"));
        long total = 0;
        Set<String> kinds = new HashSet<>();
        for (Datasets.Entry e : d.entries()) {
            String text = e.read(); // checks size and sha256
            assertFalse(text.isBlank(), e.name());
            total += e.bytes();
            kinds.add(e.kind() + "/" + e.purpose());
        }
        assertTrue(total >= 300_000, "a few hundred KB in all: " + total);
        for (String k : new String[] {"en-prose", "code", "zh-prose"}) {
            assertTrue(kinds.contains(k + "/evaluation") && kinds.contains(k + "/calibration"), k);
        }
    }

    @Test
    void evaluationAndCalibrationShareNoLongLine() {
        Datasets d = Datasets.ofCheckout().orElseThrow();
        Set<String> eval = new HashSet<>();
        for (Datasets.Entry e : d.purpose("evaluation")) {
            e.read().lines().map(String::strip).filter(l -> l.length() > 40).forEach(eval::add);
        }
        for (Datasets.Entry e : d.purpose("calibration")) {
            e.read().lines().map(String::strip).filter(l -> l.length() > 40)
                    .forEach(l -> assertFalse(eval.contains(l), e.name() + " repeats an evaluation line: " + l));
        }
    }

    @Test
    void trainingSplitIsOverAMegabyteAndItsProseRepeatsNoHeldOutLine() {
        Datasets d = Datasets.ofCheckout().orElseThrow();
        Set<String> heldOut = new HashSet<>();
        for (String purpose : new String[] {"evaluation", "calibration"}) {
            for (Datasets.Entry e : d.purpose(purpose)) {
                e.read().lines().map(String::strip).filter(l -> l.length() > 40).forEach(heldOut::add);
            }
        }
        long bytes = 0;
        for (Datasets.Entry e : d.purpose("training")) {
            String text = e.read();
            bytes += e.bytes();
            if (e.kind().equals("en-prose")) {
                text.lines().map(String::strip).filter(l -> l.length() > 40)
                        .forEach(l -> assertFalse(heldOut.contains(l), e.name() + " repeats a held-out line: " + l));
            }
        }
        assertTrue(bytes >= 1_000_000, "training text: " + bytes + " bytes");
    }

    @Test
    void aChangedFileIsRefusedNamingIt() throws Exception {
        Files.writeString(tmp.resolve("a.txt"), "hello");
        Files.writeString(tmp.resolve("manifest.json"), "[{\"name\":\"a\",\"path\":\"a.txt\",\"kind\":\"en-prose\","
                + "\"purpose\":\"evaluation\",\"bytes\":5,\"sha256\":\"" + Datasets.sha256("hellO".getBytes()) + "\"}]");
        Datasets d = Datasets.open(tmp);
        String msg = assertThrows(QlabException.class, () -> d.byName("a").read()).getMessage();
        assertTrue(msg.contains("a.txt") && msg.contains("does not match manifest.json"), msg);
        assertEquals(1, d.entries().size());
        Files.writeString(tmp.resolve("manifest.json"), "[{\"name\":\"a\"}]");
        assertTrue(assertThrows(QlabException.class, () -> Datasets.open(tmp)).getMessage().contains("\"path\" is missing"));
    }
}
