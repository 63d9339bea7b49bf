import com.sun.management.HotSpotDiagnosticMXBean;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The benchmark program of docs/protocol.md:
 * {@code java -cp classes Main MODE WORKLOAD --n N --iterations K ...}, where MODE
 * ({@code virtual} or {@code platform}) is the kind of thread every task runs on.
 * {@code java -cp classes Main MODE --version} prints the runtime label, and
 * {@code java -cp classes Main MODE serve ...} is the protocol's HTTP server ({@link Server}).
 */
public final class Main {

    private static final int SLEEP_WARM_UP_TASKS = 1000;

    /**
     * chain and chain-await prime with one untimed chain of min(N, PRIME_LINKS) links
     * before the clock (docs/protocol.md, "Priming"); see {@link #prime}.
     */
    static final int PRIME_LINKS = 1000;

    /**
     * --warmup-ms stops after this many runs even short of W ms: at N = 10 a run takes
     * microseconds, and the JSON line lists every warm-up run.
     */
    static final int MAX_WARMUP_RUNS = 10_000;

    public static void main(String[] args) throws InterruptedException {
        // Any exception, from main or from a task, ends the process with one line:
        // a dead task must never leave main waiting forever.
        Thread.setDefaultUncaughtExceptionHandler((thread, e) -> {
            System.err.println("error: " + e);
            // halt, not exit: tasks still blocked must not delay the end, and there is nothing to clean up.
            Runtime.getRuntime().halt(1);
        });

        if (Options.wantsHelp(args)) {
            // MODE serve --help (or serve --help): the server's own usage.
            boolean serve = args.length > 1 && args[1].equals("serve") || args.length > 0 && args[0].equals("serve");
            System.out.println(serve ? ServeOptions.USAGE : Options.USAGE);
            return;
        }
        ThreadFactory threads = args.length == 0 ? null : switch (args[0]) {
            case "virtual" -> Thread.ofVirtual().factory();
            case "platform" -> Thread.ofPlatform().factory();
            default -> null;
        };
        if (threads == null) {
            usageError("the first argument must be the thread kind, virtual or platform");
        }
        String[] rest = Arrays.copyOfRange(args, 1, args.length);
        if (rest.length == 1 && rest[0].equals("--version")) {
            System.out.println(jdk() + ", JVM flags: " + jvmFlags());
            return;
        }
        if (rest.length > 0 && rest[0].equals("serve")) {
            ServeOptions serve;
            try {
                serve = ServeOptions.parse(Arrays.copyOfRange(rest, 1, rest.length));
            } catch (Options.UsageException e) {
                usageError(e.getMessage());
                return;
            }
            Server.serve(args[0], serve, runtime(args[0]));
            return;
        }
        Options options;
        try {
            options = Options.parse(rest);
        } catch (Options.UsageException e) {
            usageError(e.getMessage());
            return;
        }
        // skynet is declared by java-virtual only (docs/protocol.md): a tree of 1.1 million
        // platform threads at N = 1M is a different question, so that mode refuses it.
        if (args[0].equals("platform") && options.workload().equals("skynet")) {
            usageError("skynet runs on virtual threads only (java-platform does not declare it)");
        }
        // chain-await's threads run one after another; the other workloads keep all N alive.
        if (args[0].equals("platform") && !options.workload().equals("chain-await")) {
            requireThreadRoom(options.n());
        }
        System.out.println(run(new Workloads(threads), options, runtime(args[0])));
    }

    /** Bad input: one line on stderr, nothing on stdout, exit status 2 (docs/protocol.md). */
    private static void usageError(String message) {
        System.err.println("error: " + message + " (--help for usage)");
        System.exit(2);
    }

    /**
     * Fails at once when N platform threads can never be alive together. Trying
     * anyway took a minute at N = 1M and left the whole machine without free pids
     * until pthread_create failed at about 29,000 threads.
     */
    private static void requireThreadRoom(int n) {
        for (String limit : List.of("pid_max", "threads-max")) {
            long max;
            try {
                // readAllLines, not readString: sysctl files answer a read at offset > 0 with
                // EOF, and readString's first read of a size-0 file takes one byte.
                max = Long.parseLong(Files.readAllLines(Path.of("/proc/sys/kernel", limit)).getFirst().strip());
            } catch (IOException | NumberFormatException e) {
                continue; // not Linux: thread creation itself will tell
            }
            if (n >= max) {
                System.err.println("error: " + n + " platform threads cannot be alive at once: kernel." + limit
                        + " is " + max + " for the whole system");
                System.exit(1);
            }
        }
    }

    /** One run of the workload: its answer, its time, and (sleep only) its start loop's time. */
    record Measurement(long result, long elapsedNs, long spawnNs) {}

    /** One timed run of the workload, as {@link #measure} makes it. */
    interface TimedRun {
        Measurement run() throws InterruptedException;
    }

    /**
     * Runs the priming (chain, chain-await), the warm-up runs and the K iterations and
     * returns the protocol's JSON line, collecting before each pass as BENCH_COLLECT says.
     */
    static String run(Workloads workloads, Options o, String runtime) throws InterruptedException {
        return run(workloads, o, runtime, collector(System.getenv("BENCH_COLLECT")));
    }

    /**
     * docs/protocol.md, "Collection between passes": one full, blocking collection before
     * each pass that follows the priming or another pass (warm-up runs too), so that no pass
     * collects the previous pass's garbage inside its clock: {@link #collectKeepingHeap}.
     * BENCH_COLLECT=0 (exactly) skips it: null.
     */
    static Runnable collector(String benchCollect) {
        return "0".equals(benchCollect) ? null : Main::collectKeepingHeap;
    }

    /**
     * System.gc() (a full collection with the default G1) that leaves the heap's size as it
     * found it. After a full collection G1 shrinks the heap to fit what survived (384 to
     * 28 MiB here, MaxHeapFreeRatio), and the next pass regrew it inside its clock: the warm
     * chain at N = 10,000 took twice as long as without the collection (java/README.md,
     * "Collection between passes, measured"). MaxHeapFreeRatio is a manageable flag: it is
     * 100 (never shrink) for the collection only, so G1's own sizing runs unchanged in every pass.
     */
    static void collectKeepingHeap() {
        var vm = ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
        String ratio = vm.getVMOption("MaxHeapFreeRatio").getValue();
        vm.setVMOption("MaxHeapFreeRatio", "100");
        try {
            System.gc();
        } finally {
            vm.setVMOption("MaxHeapFreeRatio", ratio);
        }
    }

    /** As {@link #run(Workloads, Options, String)}, with collect (null: none) as the collector. */
    static String run(Workloads workloads, Options o, String runtime, Runnable collect) throws InterruptedException {
        boolean chains = o.workload().equals("chain") || o.workload().equals("chain-await");
        int primed = chains ? prime(workloads, o) : 0;
        if (o.workload().equals("sleep")) {
            // JIT warm-up before the clock. Cold, C2 compiles VirtualThread.sleepNanos
            // while no sleep has ever ended, speculates that its loop never exits, and
            // every sleeping thread then deoptimizes as it wakes: ~10 us each, about
            // 10 s of CPU at N = 1M. A few tasks that finish a short sleep first avoid that.
            workloads.sleep(Math.min(o.n(), SLEEP_WARM_UP_TASKS), Duration.ofMillis(1));
        }
        // Nothing of ours to collect before the first pass of a fresh process; a full collection
        // there only adds the collector's own structures to the peak RSS (G1: sleep N = 1, 44 -> 51 MiB).
        var ran = new AtomicBoolean(chains);
        TimedRun next = () -> pass(workloads, o, ran.getAndSet(true) ? collect : null);
        var warmup = warmUp(o.warmupMs(), MAX_WARMUP_RUNS, next);
        var results = new long[o.iterations()];
        var iterNs = new long[o.iterations()];
        long spawnNs = 0;
        for (int k = 0; k < o.iterations(); k++) {
            var m = next.run();
            results[k] = m.result();
            iterNs[k] = m.elapsedNs();
            if (k == 0) {
                spawnNs = m.spawnNs();
            }
        }

        var json = new StringBuilder()
                .append("{\"workload\": \"").append(o.workload())
                .append("\", \"n\": ").append(o.n())
                .append(", \"buffer\": ").append(o.workload().equals("bounded") ? String.valueOf(o.buffer()) : "null")
                .append(", \"result\": ").append(results[results.length - 1])
                .append(", \"results\": ").append(Arrays.toString(results))
                .append(", \"iter_ns\": ").append(Arrays.toString(iterNs))
                .append(", \"warmup_ns\": ").append(warmup.stream().map(Measurement::elapsedNs).toList())
                .append(", \"warmup_results\": ").append(warmup.stream().map(Measurement::result).toList());
        if (chains) {
            json.append(", \"primed\": ").append(primed);
        }
        if (o.workload().equals("sleep")) {
            json.append(", \"spawn_ns\": ").append(spawnNs);
        }
        return json.append(", \"runtime\": \"").append(runtime.replace("\\", "\\\\").replace("\"", "\\\""))
                .append("\"}").toString();
    }

    /**
     * The protocol's priming of chain and chain-await: one chain of P = min(N, 1000) links,
     * built and run by the same code as the timed passes, before the clock and before any
     * warm-up run; its answer must be P, and nothing of it is timed or reported but P.
     * Cold, C2 compiles the relay ({@code to.put(from.take() + 1)}) while no relay has ever
     * come back from take(), so it compiles the resumption as never taken, and every one of
     * a million parked relays then deoptimizes as it wakes: java-virtual's chain at N = 1M
     * took 14.5 s a first pass against 3.7 s primed with 1000 links, where 1 or 100 links
     * left it at 2.5-5 times that (java/README.md, "Priming chain and chain-await").
     */
    static int prime(Workloads workloads, Options o) throws InterruptedException {
        int p = Math.min(o.n(), PRIME_LINKS);
        long answer = o.workload().equals("chain") ? workloads.chain(p) : workloads.chainAwait(p);
        if (answer != p) {
            throw new IllegalStateException("priming: a chain of " + p + " links answered " + answer);
        }
        return p;
    }

    /**
     * --warmup-ms: the JIT compiles a hot path only after it has run many times, so the
     * same workload runs first, timed alike, until these runs have taken W ms in all or
     * number maxRuns. Returns them in order.
     */
    static List<Measurement> warmUp(int warmupMs, int maxRuns, TimedRun run) throws InterruptedException {
        var runs = new ArrayList<Measurement>();
        long totalNs = 0;
        while (totalNs < warmupMs * 1_000_000L && runs.size() < maxRuns) {
            var m = run.run();
            runs.add(m);
            totalNs += m.elapsedNs();
        }
        return runs;
    }

    /** One pass: the collection (null: none), then the workload, whose clock starts in measure. */
    static Measurement pass(Workloads workloads, Options o, Runnable collect) throws InterruptedException {
        if (collect != null) {
            collect.run();
        }
        return measure(workloads, o);
    }

    /** Runs the workload once, timed from its first step until the answer is in. */
    static Measurement measure(Workloads workloads, Options o) throws InterruptedException {
        long spawnNs = 0;
        long start = System.nanoTime();
        long result = switch (o.workload()) {
            case "sleep" -> {
                var run = workloads.sleep(o.n(), o.duration());
                spawnNs = run.spawnNs();
                yield run.completed();
            }
            case "chain" -> workloads.chain(o.n());
            case "chain-await" -> workloads.chainAwait(o.n());
            case "bounded" -> workloads.bounded(o.n(), o.buffer());
            case "skynet" -> workloads.skynet(o.n());
            default -> throw new AssertionError(o.workload());
        };
        return new Measurement(result, System.nanoTime() - start, spawnNs);
    }

    /** e.g. "JDK 25.0.3+9-LTS (Eclipse Adoptium), virtual threads". */
    private static String runtime(String mode) {
        return jdk() + ", " + mode + " threads";
    }

    /** e.g. "JDK 25.0.3+9-LTS (Eclipse Adoptium)", as jdk.sh prints it. */
    private static String jdk() {
        return "JDK " + Runtime.version() + " (" + System.getProperty("java.vm.vendor") + ")";
    }

    /**
     * The flags as the JVM saw them, so options injected through JDK_JAVA_OPTIONS or
     * JAVA_TOOL_OPTIONS show up too. Only --version asks: java.management costs the
     * measured process about 3 MB and 25 ms.
     */
    private static String jvmFlags() {
        var flags = ManagementFactory.getRuntimeMXBean().getInputArguments();
        return flags.isEmpty() ? "none" : String.join(" ", flags);
    }
}
