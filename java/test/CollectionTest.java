import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.management.HotSpotDiagnosticMXBean;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadFactory;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * docs/protocol.md, "Collection between passes": one collection before each pass, warm-up
 * runs and timed passes alike, that follows the priming or another pass (none before the
 * first pass of a workload without priming), outside the clock, and not shrinking the heap;
 * BENCH_COLLECT=0 skips it. In process with stand-in collectors, and in the built program
 * with -Xlog:gc.
 */
@Timeout(120)
class CollectionTest {

    /**
     * The order of events: "collect" from the stand-in collector, "thread" for each thread
     * the workload makes. The first thread of all and the first after a collection stall
     * 2 ms, so that every pass (sleep's sleep 2 ms anyway) takes 2 ms inside its clock:
     * --warmup-ms 1 then makes exactly one warm-up run, and --warmup-ms 100 at most fifty.
     */
    private static final class Log implements ThreadFactory {
        private final List<String> events = new ArrayList<>();
        private final ThreadFactory threads = Thread.ofVirtual().factory();

        @Override
        public Thread newThread(Runnable task) {
            boolean stall;
            synchronized (events) {
                stall = events.isEmpty() || events.getLast().equals("collect");
                events.add("thread");
            }
            if (stall) {
                sleep(2);
            }
            return threads.newThread(task);
        }

        Runnable collector(long sleepMs) {
            return () -> {
                synchronized (events) {
                    events.add("collect");
                }
                sleep(sleepMs);
            };
        }

        /** The events run-length encoded. */
        List<String> runs() {
            synchronized (events) {
                return CollectionTest.runs(events);
            }
        }
    }

    /** events run-length encoded: "thread x1000", "collect x1", ... */
    private static List<String> runs(List<String> events) {
        var out = new ArrayList<String>();
        for (int i = 0; i < events.size(); ) {
            int j = i;
            while (j < events.size() && events.get(j).equals(events.get(i))) {
                j++;
            }
            out.add(events.get(i) + " x" + (j - i));
            i = j;
        }
        return out;
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The integers of the JSON list under key in a report line. */
    private static long[] list(String json, String key) {
        var m = Pattern.compile("\"" + key + "\": \\[([0-9, ]*)\\]").matcher(json);
        assertTrue(m.find(), key + " in " + json);
        return m.group(1).isEmpty() ? new long[0]
                : Arrays.stream(m.group(1).split(", ")).mapToLong(Long::parseLong).toArray();
    }

    /**
     * The expected runs: the threads before the passes (priming, sleep's JIT warm-up), then
     * per pass a collection, but before the first pass only if primed, and its threads.
     */
    private static List<String> expected(int before, int threadsPerPass, int passes, boolean primed) {
        var events = new ArrayList<String>(Collections.nCopies(before, "thread"));
        for (int i = 0; i < passes; i++) {
            if (i > 0 || primed) {
                events.add("collect");
            }
            events.addAll(Collections.nCopies(threadsPerPass, "thread"));
        }
        return runs(events);
    }

    /** How many threads one pass makes at size n, and how many before the first pass (Main.prime, sleep's JIT warm-up). */
    private static final Map<String, int[]> THREADS = Map.of(
            "chain --n 2000", new int[] {2000, 1000},
            "chain --n 5", new int[] {5, 5},
            "chain-await --n 2000", new int[] {2000, 1000},
            "bounded --n 10 --buffer 1", new int[] {11, 0},
            "sleep --n 10 --duration-ms 2", new int[] {10, 10},
            "skynet --n 10", new int[] {11, 0});

    @ParameterizedTest
    @ValueSource(strings = {"chain --n 2000", "chain --n 5", "chain-await --n 2000", "bounded --n 10 --buffer 1",
            "sleep --n 10 --duration-ms 2", "skynet --n 10"})
    void collectsBeforeEachPassThatFollowsSomething(String workload) throws Exception {
        boolean primed = workload.startsWith("chain");
        int[] counts = THREADS.get(workload);
        for (String warmup : List.of("", " --warmup-ms 100")) {
            var o = Options.parse((workload + " --iterations 3" + warmup).split(" "));
            var log = new Log();
            String json = Main.run(new Workloads(log), o, "test", log.collector(0));
            int warmupRuns = list(json, "warmup_ns").length;
            assertTrue(warmup.isEmpty() ? warmupRuns == 0 : warmupRuns >= 2, json);
            assertEquals(3, list(json, "iter_ns").length, json);
            assertEquals(expected(counts[1], counts[0], warmupRuns + 3, primed), log.runs(), json);
        }
    }

    @Test
    void noCollectionBeforeTheFirstPassOfAFreshProcess() throws Exception {
        // Without priming or warm-up: iteration 1 has none, iteration 2 has one.
        var o = Options.parse("skynet --n 10 --iterations 2".split(" "));
        var log = new Log();
        String json = Main.run(new Workloads(log), o, "test", log.collector(0));
        assertEquals(List.of("thread x11", "collect x1", "thread x11"), log.runs(), json);
        // With a warm-up: its first run has none, every later run and the iteration have one.
        o = Options.parse("bounded --n 10 --buffer 1 --iterations 1 --warmup-ms 100".split(" "));
        log = new Log();
        json = Main.run(new Workloads(log), o, "test", log.collector(0));
        int warmupRuns = list(json, "warmup_ns").length;
        assertTrue(warmupRuns >= 2, json);
        var expected = new ArrayList<>(List.of("thread x11"));
        for (int i = 0; i < warmupRuns; i++) {
            expected.addAll(List.of("collect x1", "thread x11"));
        }
        assertEquals(expected, log.runs(), json);
        // With priming: the first pass has one.
        o = Options.parse("chain --n 5 --iterations 1".split(" "));
        log = new Log();
        json = Main.run(new Workloads(log), o, "test", log.collector(0));
        assertEquals(List.of("thread x5", "collect x1", "thread x5"), log.runs(), json);
    }

    @Test
    void collectionIsOutsideTheClock() throws Exception {
        // A 300 ms collection is in no figure; the 2 ms stall in each pass's first thread is.
        long stallNs = 300_000_000L;
        for (String workload : List.of("chain --n 100", "chain-await --n 100", "sleep --n 10 --duration-ms 2")) {
            var o = Options.parse((workload + " --iterations 2 --warmup-ms 1").split(" "));
            var log = new Log();
            String json = Main.run(new Workloads(log), o, "test", log.collector(300));
            long[] times = Arrays.copyOf(list(json, "warmup_ns"), 3);
            System.arraycopy(list(json, "iter_ns"), 0, times, 1, 2);
            assertEquals(1, list(json, "warmup_ns").length, json);
            assertTrue(Arrays.stream(times).allMatch(t -> t >= 2_000_000L && t < stallNs), json);
        }
    }

    @Test
    void benchCollectZeroSkipsTheCollection() throws Exception {
        assertNull(Main.collector("0"));
        for (String value : Arrays.asList(null, "", "1", "00", " 0", "0 ", "false")) {
            assertNotNull(Main.collector(value), "BENCH_COLLECT=" + value);
        }
        var o = Options.parse("chain --n 5 --iterations 2 --warmup-ms 1".split(" "));
        var log = new Log();
        String json = Main.run(new Workloads(log), o, "test", Main.collector("0"));
        int passes = list(json, "warmup_ns").length + 2;
        assertEquals(List.of("thread x" + (5 + 5 * passes)), log.runs(), json); // the priming's and every pass's, no collection
    }

    @Test
    void collectorIsAFullCollectionThatKeepsTheHeap() {
        var vm = ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
        String ratio = vm.getVMOption("MaxHeapFreeRatio").getValue();
        long committed = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getCommitted();
        long before = collections();
        Main.collector(null).run();
        assertTrue(collections() > before);
        assertTrue(ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getCommitted() >= committed);
        // Never shrink for the collection only: G1's sizing inside a pass is the JVM's own.
        assertEquals(ratio, vm.getVMOption("MaxHeapFreeRatio").getValue());
    }

    /** The collections this JVM's collectors have counted so far. */
    private static long collections() {
        return ManagementFactory.getGarbageCollectorMXBeans().stream()
                .mapToLong(GarbageCollectorMXBean::getCollectionCount).filter(c -> c > 0).sum();
    }

    /**
     * The built program: -Xlog:gc on stderr logs one "Pause Full (System.gc())" a pass,
     * warm-up runs included, after chain's priming, and none before bounded's first pass
     * (no priming, no warm-up), unless BENCH_COLLECT=0; the JSON line is the same. No
     * collection shrinks the committed heap (gc+heap=debug), as a plain System.gc() does
     * (384 MiB to 28 MiB after chain's priming here).
     */
    @ParameterizedTest
    @ValueSource(strings = {"virtual", "platform"})
    void theProgramCollectsBeforeEachPassThatFollowsSomething(String mode) throws Exception {
        for (String value : Arrays.asList(null, "1", "0")) {
            String[] chain = launch(value, mode, "chain", "--n", "10", "--iterations", "3", "--warmup-ms", "1");
            assertTrue(chain[0].startsWith("{\"workload\": \"chain\", \"n\": 10, \"buffer\": null, \"result\": 10, "
                    + "\"results\": [10, 10, 10], \"iter_ns\": ["), chain[0]);
            long passes = list(chain[0], "warmup_ns").length + 3L;
            assertEquals("0".equals(value) ? 0 : passes, fullCollections(chain[1]), value + ": " + chain[1]);
            assertHeapKept(chain[1]);
            String[] bounded = launch(value, mode, "bounded", "--n", "10", "--buffer", "1", "--iterations", "3");
            assertTrue(bounded[0].contains("\"results\": [45, 45, 45]"), bounded[0]);
            assertEquals("0".equals(value) ? 0 : 2, fullCollections(bounded[1]), value + ": " + bounded[1]);
            assertHeapKept(bounded[1]);
        }
    }

    /** The built program's one line and its stderr, under -Xlog:gc,gc+heap=debug:stderr and BENCH_COLLECT=benchCollect (null: unset). */
    private static String[] launch(String benchCollect, String... args) throws Exception {
        var command = new ArrayList<>(List.of(System.getProperty("bench.java"), "-Xlog:gc,gc+heap=debug:stderr", "-cp",
                System.getProperty("bench.classes"), "Main"));
        command.addAll(List.of(args));
        var builder = new ProcessBuilder(command).redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
        builder.environment().remove("BENCH_COLLECT");
        if (benchCollect != null) {
            builder.environment().put("BENCH_COLLECT", benchCollect);
        }
        var process = builder.start();
        String stdout = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        String stderr = new String(process.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, process.waitFor(), stderr);
        assertEquals(1, stdout.lines().count(), stdout);
        return new String[] {stdout, stderr};
    }

    /** The System.gc() collections in an -Xlog:gc log. */
    private static long fullCollections(String gcLog) {
        return gcLog.lines().filter(l -> l.contains("Pause Full (System.gc())")).count();
    }

    private static final Pattern COMMITTED = Pattern.compile("GC\\((\\d+)\\)  garbage-first heap .* committed (\\d+)K");

    /** Each System.gc() collection in a gc+heap=debug log leaves the committed heap at least as large as it found it. */
    private static void assertHeapKept(String gcLog) {
        var committed = new HashMap<String, List<Long>>(); // GC id: committed before, after
        gcLog.lines().map(COMMITTED::matcher).filter(Matcher::find)
                .forEach(m -> committed.computeIfAbsent(m.group(1), id -> new ArrayList<>()).add(Long.parseLong(m.group(2))));
        var full = Pattern.compile("GC\\((\\d+)\\) Pause Full \\(System.gc\\(\\)\\)").matcher(gcLog);
        while (full.find()) {
            var sizes = committed.get(full.group(1));
            assertEquals(2, sizes.size(), gcLog);
            assertTrue(sizes.get(1) >= sizes.get(0), "GC(" + full.group(1) + ") shrank the heap: " + gcLog);
        }
    }
}
