import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ThreadFactory;

/**
 * Every workload at small N on both kinds of thread, the option parser, and the
 * program's exit statuses. Plain checks, no test framework: run by test.sh.
 */
public final class MainTest {

    private static int checks;

    public static void main(String[] args) throws Exception {
        workloads("virtual", Thread.ofVirtual().factory());
        workloads("platform", Thread.ofPlatform().factory());
        options();
        program();
        System.out.println("MainTest: " + checks + " checks passed");
    }

    private static void workloads(String kind, ThreadFactory threads) throws InterruptedException {
        var w = new Workloads(threads);
        var sleep = w.sleep(200, Duration.ofMillis(50));
        check(kind + " sleep completed", sleep.completed(), 200L);
        check(kind + " sleep spawn time measured", sleep.spawnNs() > 0, true);
        check(kind + " chain", w.chain(300), 300L);
        check(kind + " chain N=1", w.chain(1), 1L);
        check(kind + " chain-await", w.chainAwait(300), 300L);
        for (int buffer : new int[] {0, 1, 7, 1000}) {
            check(kind + " bounded B=" + buffer, w.bounded(300, buffer), 300L * 299 / 2);
        }
    }

    private static void options() throws Options.UsageException {
        var o = Options.parse(new String[] {"bounded", "--n", "5"});
        check("bounded defaults", List.of(o.buffer(), o.iterations()), List.of(1, 10));
        o = Options.parse(new String[] {"sleep", "--n", "5"});
        check("sleep defaults", List.of(o.duration(), o.iterations()), List.of(Duration.ofSeconds(10), 1));
        check("chain default K", Options.parse(new String[] {"chain", "--n", "5"}).iterations(), 2);
        check("chain-await default K", Options.parse(new String[] {"chain-await", "--n", "5"}).iterations(), 2);
        o = Options.parse(new String[] {"sleep", "--duration-ms", "20", "--n", "9", "--iterations", "3"});
        check("options in any order", List.of(o.n(), o.duration(), o.iterations()),
                List.of(9, Duration.ofMillis(20), 3));
        check("rendezvous buffer", Options.parse(new String[] {"bounded", "--n", "5", "--buffer", "0"}).buffer(), 0);
        for (String bad : List.of("", "spin --n 5", "chain", "chain --n", "chain --n 0", "chain --n -3",
                "chain --n x", "chain --n 1.5", "chain --n 99999999999", "bounded --n 5 --buffer -1",
                "sleep --n 5 --duration-ms 0", "chain --n 5 --iterations 0", "chain --n 5 --verbose 1",
                "chain --n 5 extra")) {
            try {
                Options.parse(bad.isEmpty() ? new String[0] : bad.split(" "));
                throw new AssertionError("accepted bad command line: " + bad);
            } catch (Options.UsageException expected) {
                checks++;
            }
        }
    }

    /** The built program as the harness runs it: this test's own java binary, the same class path. */
    private static void program() throws IOException, InterruptedException {
        var ok = launch("virtual", "chain", "--n", "10");
        check("ok exit", ok.status, 0);
        check("one JSON line", ok.stdout.lines().count(), 1L);
        check("JSON echo", ok.stdout.startsWith("{\"workload\": \"chain\", \"n\": 10, \"buffer\": null, \"result\": 10, "
                + "\"results\": [10, 10], \"iter_ns\": ["), true);
        var bounded = launch("platform", "bounded", "--n", "10", "--buffer", "0", "--iterations", "1");
        check("bounded echoes B", bounded.stdout.contains("\"buffer\": 0, \"result\": 45, \"results\": [45]"), true);
        var sleep = launch("virtual", "sleep", "--n", "10", "--duration-ms", "10");
        check("sleep reports spawn_ns", sleep.stdout.contains("\"spawn_ns\": "), true);
        var version = launch("virtual", "--version").stdout;
        check("version", version.startsWith("JDK ") && version.contains(", JVM flags: "), true);

        for (var bad : List.of(List.of("chain", "--n", "10"), List.of("virtual", "chain", "--n", "0"),
                List.of("platform", "sleep", "--n", "5", "--nope", "1"))) {
            var run = launch(bad.toArray(String[]::new));
            check("usage exit " + bad, run.status, 2);
            check("usage: one stderr line " + bad, run.stderr.lines().count(), 1L);
            check("usage: empty stdout " + bad, run.stdout, "");
        }
        // More platform threads than the kernel can hold: a clean failure, not a hang.
        var tooMany = launch("platform", "chain", "--n", String.valueOf(Integer.MAX_VALUE));
        check("too many platform threads exit", tooMany.status, 1);
        check("too many platform threads: one stderr line", tooMany.stderr.lines().count(), 1L);
    }

    private record Run(int status, String stdout, String stderr) {}

    private static Run launch(String... args) throws IOException, InterruptedException {
        var command = new ArrayList<>(List.of(ProcessHandle.current().info().command().orElseThrow(),
                "-cp", System.getProperty("java.class.path"), "Main"));
        command.addAll(List.of(args));
        var process = new ProcessBuilder(command).start();
        // The outputs are a few lines, far below the pipe buffer: reading them in turn cannot block.
        String stdout = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        String stderr = new String(process.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        return new Run(process.waitFor(), stdout, stderr);
    }

    private static void check(String what, Object actual, Object expected) {
        checks++;
        if (!Objects.equals(actual, expected)) {
            throw new AssertionError(what + ": expected " + expected + ", got " + actual);
        }
    }
}
