import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The parser of docs/protocol.md's invocation; ProgramTest checks the exits and output of the built program. */
class OptionsTest {

    private static Options parse(String line) throws Options.UsageException {
        return Options.parse(line.isEmpty() ? new String[0] : line.split(" "));
    }

    @Test
    void everyOptionInAnyOrder() throws Options.UsageException {
        var o = parse("sleep --duration-ms 20 --iterations 3 --n 9");
        assertEquals("sleep", o.workload());
        assertEquals(9, o.n());
        assertEquals(3, o.iterations());
        assertEquals(Duration.ofMillis(20), o.duration());
    }

    @Test
    void boundedTakesARendezvousBuffer() throws Options.UsageException {
        assertEquals(0, parse("bounded --n 5 --iterations 1 --buffer 0").buffer());
        assertEquals(1000, parse("bounded --buffer 1000 --n 5 --iterations 1").buffer());
    }

    @Test
    void chainNeedsOnlyNAndIterations() throws Options.UsageException {
        var o = parse("chain --n 5 --iterations 2");
        assertEquals(2, o.iterations());
        assertNull(o.duration());
        assertEquals(5, parse("chain-await --n 5 --iterations 1").n());
    }

    @Test
    void skynetTakesPowersOfTen() throws Options.UsageException {
        assertEquals(1, parse("skynet --n 1 --iterations 1").n());
        assertEquals(1_000_000, parse("skynet --n 1000000 --iterations 2").n());
        assertEquals(1_000_000_000, parse("skynet --n 1000000000 --iterations 1").n());
        assertNull(parse("skynet --n 10 --iterations 1").duration());
    }

    @Test
    void warmupIsOptionalAndMayBeZero() throws Options.UsageException {
        assertEquals(0, parse("chain --n 5 --iterations 1").warmupMs());
        assertEquals(0, parse("chain --n 5 --iterations 1 --warmup-ms 0").warmupMs());
        assertEquals(2000, parse("bounded --warmup-ms 2000 --n 5 --buffer 1 --iterations 1").warmupMs());
        assertEquals(50, parse("sleep --n 5 --iterations 1 --duration-ms 10 --warmup-ms 50").warmupMs());
    }

    @Test
    void decimalDigitsOnly() throws Options.UsageException {
        assertEquals(10, parse("chain --n 010 --iterations 1").n());
        assertEquals(Integer.MAX_VALUE, parse("chain --n 2147483647 --iterations 1").n());
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "nope --n 5 --iterations 1", "chain", "chain --n 5", "chain --iterations 1",
            "chain --n", "chain --n 5 --iterations", "chain --n 0 --iterations 1", "chain --n -3 --iterations 1",
            "chain --n abc --iterations 1", "chain --n 1.5 --iterations 1", "chain --n +5 --iterations 1",
            "chain --n \u0665 --iterations 1", "chain --n 2147483648 --iterations 1",
            "chain --n 99999999999999999999999 --iterations 1", "chain --n 5 --iterations 0",
            "chain --n 5 --iterations 1 --bogus 1", "chain --n 5 --iterations 1 extra",
            "bounded --n 5 --iterations 1", "bounded --n 5 --iterations 1 --buffer -1",
            "sleep --n 5 --iterations 1", "sleep --n 5 --iterations 1 --duration-ms 0",
            "skynet --n 20 --iterations 1", "skynet --n 5 --iterations 1", "skynet --n 1001 --iterations 1",
            "skynet --n 10", "chain --n 5 --iterations 1 --warmup-ms -1", "chain --n 5 --iterations 1 --warmup-ms x",
            "chain --n 5 --iterations 1 --warmup-ms 1.5", "chain --n 5 --iterations 1 --warmup-ms 2147483648",
            "chain --n 5 --iterations 1 --warmup-ms"})
    void badCommandLines(String line) {
        var e = assertThrows(Options.UsageException.class, () -> parse(line));
        assertFalse(e.getMessage().isBlank());
        assertFalse(e.getMessage().contains("\n"));
    }

    @Test
    void helpAnywhere() {
        assertTrue(Options.wantsHelp(new String[] {"--help"}));
        assertTrue(Options.wantsHelp(new String[] {"chain", "--n", "5", "-h"}));
        assertFalse(Options.wantsHelp(new String[] {"chain", "--n", "5", "--iterations", "1"}));
    }
}
