import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The built program as the harness starts it ({@code build/jdk/bin/java -cp classes Main MODE ...},
 * impls.toml): its JSON line, its exit statuses and its stderr.
 */
@Timeout(120)
class ProgramTest {

    private static final List<String> WORKLOADS = List.of("sleep", "chain", "chain-await", "bounded", "skynet");

    private record Run(int status, String stdout, String stderr) {}

    private static Run launch(List<String> args) throws IOException, InterruptedException {
        var command = new ArrayList<>(List.of(System.getProperty("bench.java"), "-cp",
                System.getProperty("bench.classes"), "Main"));
        command.addAll(args);
        var process = new ProcessBuilder(command).redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
                .start();
        // The outputs are a few lines, far below the pipe buffer: reading them in turn cannot block.
        String stdout = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        String stderr = new String(process.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        return new Run(process.waitFor(), stdout, stderr);
    }

    private static Run launch(String... args) throws IOException, InterruptedException {
        return launch(List.of(args));
    }

    @Test
    void chainPrintsOneJsonLine() throws Exception {
        var run = launch("virtual", "chain", "--n", "10", "--iterations", "2");
        assertEquals(0, run.status, run.stderr);
        assertEquals("", run.stderr);
        assertEquals(1, run.stdout.lines().count());
        assertTrue(run.stdout.startsWith("{\"workload\": \"chain\", \"n\": 10, \"buffer\": null, \"result\": 10, "
                + "\"results\": [10, 10], \"iter_ns\": ["), run.stdout);
        assertTrue(run.stdout.contains("\"runtime\": \"JDK "), run.stdout);
        // No --warmup-ms (or 0): no warm-up run, the two keys empty.
        assertTrue(run.stdout.contains("\"warmup_ns\": [], \"warmup_results\": []"), run.stdout);
        var zero = launch("virtual", "chain", "--n", "10", "--iterations", "1", "--warmup-ms", "0");
        assertTrue(zero.stdout.contains("\"warmup_ns\": [], \"warmup_results\": []"), zero.stdout);
    }

    /** The integers of the JSON list under key in a report line. */
    private static long[] list(String json, String key) {
        var m = Pattern.compile("\"" + key + "\": \\[([0-9, ]*)\\]").matcher(json);
        assertTrue(m.find(), key + " in " + json);
        return m.group(1).isEmpty() ? new long[0]
                : Arrays.stream(m.group(1).split(", ")).mapToLong(Long::parseLong).toArray();
    }

    /**
     * At least one warm-up run, each answer right, and the rule: runs until their total
     * reached W ms, the last one being the one that got there; the K iterations as before.
     */
    private static void checkWarmup(Run run, int warmupMs, long expected, int iterations) {
        assertEquals(0, run.status, run.stderr);
        assertEquals(1, run.stdout.lines().count(), run.stdout);
        long[] times = list(run.stdout, "warmup_ns");
        long[] answers = list(run.stdout, "warmup_results");
        assertTrue(times.length >= 1, run.stdout);
        assertEquals(times.length, answers.length, run.stdout);
        assertTrue(Arrays.stream(answers).allMatch(r -> r == expected), run.stdout);
        assertTrue(Arrays.stream(times).allMatch(t -> t > 0), run.stdout);
        long total = Arrays.stream(times).sum();
        assertTrue(total >= warmupMs * 1_000_000L, run.stdout);
        assertTrue(total - times[times.length - 1] < warmupMs * 1_000_000L, run.stdout);
        long[] results = list(run.stdout, "results");
        assertEquals(iterations, results.length, run.stdout);
        assertTrue(Arrays.stream(results).allMatch(r -> r == expected), run.stdout);
        assertEquals(iterations, list(run.stdout, "iter_ns").length, run.stdout);
    }

    /** The integer under key in a report line. */
    private static long number(String json, String key) {
        var m = Pattern.compile("\"" + key + "\": ([0-9]+)[,}]").matcher(json);
        assertTrue(m.find(), key + " in " + json);
        return Long.parseLong(m.group(1));
    }

    /** chain and chain-await report their priming, P = min(N, 1000), and still K timed passes at size N. */
    @ParameterizedTest
    @ValueSource(strings = {"virtual", "platform"})
    void chainsReportTheirPriming(String mode) throws Exception {
        for (String workload : List.of("chain", "chain-await")) {
            for (int n : new int[] {5, 2000}) {
                var run = launch(mode, workload, "--n", String.valueOf(n), "--iterations", "2");
                assertEquals(0, run.status, run.stderr);
                assertEquals(Math.min(n, 1000), number(run.stdout, "primed"), run.stdout);
                assertEquals(2, list(run.stdout, "iter_ns").length, run.stdout);
                assertTrue(Arrays.stream(list(run.stdout, "results")).allMatch(r -> r == n), run.stdout);
                assertEquals(0, list(run.stdout, "warmup_ns").length, run.stdout);
            }
        }
        // The other workloads have no priming.
        var bounded = launch(mode, "bounded", "--n", "10", "--buffer", "1", "--iterations", "1");
        assertTrue(!bounded.stdout.contains("primed"), bounded.stdout);
    }

    /**
     * A thread factory that counts the threads it makes (one per link in chain and
     * chain-await) and stalls the making of thread number {@code stallAt} by {@code stallMs}.
     */
    private record StallingFactory(ThreadFactory threads, AtomicInteger made, int stallAt, long stallMs)
            implements ThreadFactory {
        StallingFactory(int stallAt, long stallMs) {
            this(Thread.ofVirtual().factory(), new AtomicInteger(), stallAt, stallMs);
        }

        @Override
        public Thread newThread(Runnable task) {
            if (made.incrementAndGet() == stallAt) {
                try {
                    Thread.sleep(stallMs);
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            }
            return threads.newThread(task);
        }
    }

    /**
     * In process: the priming is one chain of P links built before the clock, first of all,
     * and none of it is timed: stalling its first link by 1.5 s leaves every timed figure
     * (warm-up runs and iterations) below that, while the same stall on the first link of the
     * first timed pass shows up in iter_ns[0]. The links made count P + (runs) x N.
     */
    @Test
    void primingIsOneUntimedChainBeforeEverything() throws Exception {
        long stallMs = 1500;
        for (String workload : List.of("chain", "chain-await")) {
            for (int n : new int[] {5, 2000}) {
                int p = Math.min(n, 1000);
                var o = Options.parse((workload + " --n " + n + " --iterations 2").split(" "));
                var primeStalled = new StallingFactory(1, stallMs);
                String json = Main.run(new Workloads(primeStalled), o, "test");
                assertEquals(p, number(json, "primed"), json);
                long[] iterNs = list(json, "iter_ns");
                assertEquals(2, iterNs.length, json);
                assertTrue(Arrays.stream(iterNs).allMatch(t -> t < stallMs * 1_000_000L), json);
                assertEquals(p + 2 * n, primeStalled.made().get(), json);

                var passStalled = new StallingFactory(p + 1, stallMs);
                json = Main.run(new Workloads(passStalled), o, "test");
                assertTrue(list(json, "iter_ns")[0] >= stallMs * 1_000_000L, json);
                assertEquals(p + 2 * n, passStalled.made().get(), json);
            }
            // With --warmup-ms, the priming comes before the first warm-up run, untimed too.
            var o = Options.parse((workload + " --n 5 --iterations 2 --warmup-ms 1").split(" "));
            var primeStalled = new StallingFactory(1, stallMs);
            String json = Main.run(new Workloads(primeStalled), o, "test");
            long[] warmupNs = list(json, "warmup_ns");
            assertTrue(warmupNs.length >= 1, json);
            assertTrue(Arrays.stream(warmupNs).allMatch(t -> t < stallMs * 1_000_000L), json);
            assertTrue(Arrays.stream(list(json, "iter_ns")).allMatch(t -> t < stallMs * 1_000_000L), json);
            assertEquals(5 + 5 * (warmupNs.length + 2), primeStalled.made().get(), json);
            assertEquals(5, number(json, "primed"), json);
        }
    }

    @Test
    void warmupRunsBeforeTheIterations() throws Exception {
        checkWarmup(launch("virtual", "bounded", "--n", "1000", "--buffer", "1", "--iterations", "3",
                "--warmup-ms", "100"), 100, 499500, 3);
    }

    @Test
    void warmupStopsAfterMaxRuns() throws Exception {
        // In process: the program's cap is Main.MAX_WARMUP_RUNS; 3 here, with W = 60 s,
        // makes exactly three runs of the real workload and returns at once.
        assertEquals(10_000, Main.MAX_WARMUP_RUNS);
        var workloads = new Workloads(Thread.ofVirtual().factory());
        var o = Options.parse("bounded --n 10 --buffer 1 --iterations 1 --warmup-ms 60000".split(" "));
        long start = System.nanoTime();
        var runs = Main.warmUp(o.warmupMs(), 3, () -> Main.measure(workloads, o));
        assertTrue(System.nanoTime() - start < 10_000_000_000L);
        assertEquals(3, runs.size(), runs.toString());
        assertTrue(runs.stream().allMatch(m -> m.result() == 45 && m.elapsedNs() > 0), runs.toString());
    }

    @Test
    void warmupOfSleepOnPlatformThreads() throws Exception {
        // Each run takes at least D = 20 ms: W = 400 needs many runs, never one even when
        // a busy machine makes a run take several times D.
        var run = launch("platform", "sleep", "--n", "10", "--duration-ms", "20", "--iterations", "1",
                "--warmup-ms", "400");
        checkWarmup(run, 400, 10, 1);
        assertTrue(list(run.stdout, "warmup_ns").length >= 2, run.stdout);
        assertTrue(run.stdout.contains("\"spawn_ns\": "), run.stdout);
    }

    @Test
    void boundedEchoesItsBuffer() throws Exception {
        var run = launch("platform", "bounded", "--n", "10", "--buffer", "0", "--iterations", "1");
        assertEquals(0, run.status, run.stderr);
        assertTrue(run.stdout.contains("\"buffer\": 0, \"result\": 45, \"results\": [45]"), run.stdout);
    }

    @Test
    void sleepReportsSpawnTime() throws Exception {
        var run = launch("virtual", "sleep", "--n", "10", "--duration-ms", "10", "--iterations", "1");
        assertEquals(0, run.status, run.stderr);
        assertTrue(run.stdout.contains("\"results\": [10], ") && run.stdout.contains("\"spawn_ns\": "), run.stdout);
    }

    @Test
    void skynetSumsTheLeaves() throws Exception {
        var run = launch("virtual", "skynet", "--n", "1000", "--iterations", "2");
        assertEquals(0, run.status, run.stderr);
        assertEquals("", run.stderr);
        assertTrue(run.stdout.startsWith("{\"workload\": \"skynet\", \"n\": 1000, \"buffer\": null, "
                + "\"result\": 499500, \"results\": [499500, 499500], \"iter_ns\": ["), run.stdout);
    }

    @Test
    void versionNamesTheJdkAndFlags() throws Exception {
        String version = launch("virtual", "--version").stdout;
        assertTrue(version.startsWith("JDK ") && version.contains(", JVM flags: "), version);
    }

    @ParameterizedTest
    @ValueSource(strings = {"--help", "-h"})
    void helpIsUsageOnStdout(String flag) throws Exception {
        for (var args : List.of(List.of("virtual", flag), List.of("platform", flag), List.of(flag))) {
            var run = launch(args);
            assertEquals(0, run.status, args.toString());
            assertEquals("", run.stderr, args.toString());
            assertTrue(run.stdout.startsWith("usage: "), run.stdout);
            assertTrue(run.stdout.contains("--warmup-ms W"), run.stdout);
        }
    }

    /**
     * docs/protocol.md's one table of bad input (docs/protocol-bad-input.json, which test_conformance.py runs
     * too), as docs/protocol-bad-input.tsv, its line-per-case form for tests without a JSON reader: the cases
     * for an implementation that declares {@code declared}. "{w}" is a workload's name, "{required}" its
     * other required options (spliced).
     */
    static List<List<String>> badInputTable(List<String> declared) throws IOException {
        var required = new LinkedHashMap<String, List<String>>();
        var cases = new ArrayList<List<String>>(); // WHEN, then ARG...
        for (String line : Files.readAllLines(Path.of("../docs/protocol-bad-input.tsv"))) {
            var fields = List.of(line.split("\t", -1));
            if (fields.get(0).equals("required")) {
                required.put(fields.get(1), fields.subList(2, fields.size()));
            } else if (fields.get(0).equals("case")) {
                cases.add(fields.subList(2, fields.size()));
            }
        }
        var out = new ArrayList<List<String>>();
        for (var c : cases) {
            String when = c.get(0);
            var args = c.subList(1, c.size());
            var workloads = switch (when) {
                case "declared" -> required.keySet().stream().filter(declared::contains).toList();
                case "undeclared" -> required.keySet().stream().filter(w -> !declared.contains(w)).toList();
                default -> when.equals("always") || declared.contains(when) ? List.of("") : List.<String>of();
            };
            for (String w : workloads) {
                var expanded = new ArrayList<String>();
                for (String a : args) {
                    switch (a) {
                        case "{w}" -> expanded.add(w);
                        case "{required}" -> expanded.addAll(required.get(w));
                        default -> expanded.add(a);
                    }
                }
                out.add(expanded);
            }
        }
        assertTrue(out.size() > 20, "docs/protocol-bad-input.tsv: " + out.size() + " cases");
        return out;
    }

    /** The table for each thread kind (java-platform does not declare skynet), then ours. */
    static Stream<Arguments> badInput() throws IOException {
        var cases = new ArrayList<Arguments>();
        var declared = Map.of("virtual", WORKLOADS, "platform", WORKLOADS.stream().filter(w -> !w.equals("skynet")).toList());
        for (String mode : List.of("virtual", "platform")) {
            var workloads = new ArrayList<>(declared.get(mode));
            workloads.add("http");
            for (var args : badInputTable(workloads)) {
                cases.add(Arguments.of(Stream.concat(Stream.of(mode), args.stream()).toList()));
            }
            for (String line : List.of("skynet --n 20 --iterations 1", "skynet --n 1001 --iterations 1")) {
                cases.add(Arguments.of(Stream.concat(Stream.of(mode), Stream.of(line.split(" "))).toList()));
            }
        }
        cases.add(Arguments.of(List.of()));
        cases.add(Arguments.of(List.of("chain", "--n", "10", "--iterations", "1"))); // no thread kind
        cases.add(Arguments.of(List.of("green", "chain", "--n", "10", "--iterations", "1")));
        return cases.stream();
    }

    @ParameterizedTest
    @MethodSource("badInput")
    void badInputIsExit2WithOneLine(List<String> args) throws Exception {
        var run = launch(args);
        assertEquals(2, run.status, run.stderr);
        assertEquals(1, run.stderr.lines().count(), run.stderr);
        assertTrue(run.stderr.startsWith("error: "), run.stderr);
        assertEquals("", run.stdout);
    }

    /** More platform threads than the kernel can hold: a clean failure at once, not a hang. */
    @Test
    void tooManyPlatformThreads() throws Exception {
        var run = launch("platform", "chain", "--n", String.valueOf(Integer.MAX_VALUE), "--iterations", "1");
        assertEquals(1, run.status, run.stderr);
        assertEquals(1, run.stderr.lines().count(), run.stderr);
        assertEquals("", run.stdout);
    }
}
