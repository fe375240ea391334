package qlab.serve;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class StopStringsTest {

    @Test
    void holdsBackWhatMayStartAStopString() {
        StopStrings s = new StopStrings(List.of("\nUser:", "END"));
        assertEquals("Hello", s.accept("Hello\nUs"));
        assertEquals("\nUs, again ", s.accept(", again E"));
        assertEquals("E", s.flush());
        assertFalse(s.stopped());
    }

    @Test
    void cutsAtTheEarliestStopAcrossPieces() {
        StopStrings s = new StopStrings(List.of("END", "\nUser:"));
        StringBuilder shown = new StringBuilder();
        for (String piece : new String[] {"one two", "\nUs", "er: no", "END"}) {
            shown.append(s.accept(piece));
        }
        assertTrue(s.stopped());
        assertEquals("one two", shown.toString());
        assertEquals("", s.accept("more"));
        assertEquals("", s.flush());
    }

    @Test
    void flushShowsAHeldTailThatNeverBecameAStop() {
        StopStrings t = new StopStrings(List.of("END"));
        assertEquals("the ", t.accept("the EN"));
        assertEquals("EN", t.flush());
        assertFalse(t.stopped());
    }

    @Test
    void withoutStopsEverythingPasses() {
        StopStrings s = new StopStrings(List.of());
        assertEquals("abc", s.accept("abc"));
        assertEquals("", s.flush());
    }
}
