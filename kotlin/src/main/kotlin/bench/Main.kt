package bench

import com.sun.management.HotSpotDiagnosticMXBean
import java.lang.management.ManagementFactory
import kotlin.system.exitProcess
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.Job
import kotlinx.coroutines.runBlocking

/**
 * The benchmark program of docs/protocol.md:
 * `java -cp "target/classes:target/lib/[*]" bench.MainKt WORKLOAD --n N --iterations K ...`;
 * `bench.MainKt --version` prints the runtime label.
 *
 * Every iteration runs inside one `runBlocking(Dispatchers.Default)`, started before
 * the first clock: the main coroutine and every task are coroutines on the
 * default dispatcher, kotlinx.coroutines' multi-threaded scheduler (one worker per
 * core), the one a Kotlin engineer reaches for with CPU-bound and fan-out work.
 * The main thread only blocks in runBlocking. (Plain `runBlocking {}` would run the
 * main coroutine, and with it every child that inherits its context, on a single
 * thread event loop: a different runtime from the other languages' pools.)
 */
fun main(args: Array<String>) {
    // Any throwable, from main or from another thread, ends the process with one line.
    Thread.setDefaultUncaughtExceptionHandler { _, e -> fail(e) }

    if (Options.wantsHelp(args)) {
        println(Options.USAGE)
        return
    }
    if (args.size == 1 && args[0] == "--version") {
        println("${runtime()}, JVM flags: ${jvmFlags()}")
        return
    }
    val options = try {
        Options.parse(args)
    } catch (e: Options.UsageException) {
        System.err.println("error: ${e.message} (--help for usage)")
        exitProcess(2)
    }
    val json = try {
        run(options)
    } catch (e: Throwable) {
        fail(e)
    }
    println(json)
}

/** A crashed run: one line on stderr, exit 1 at once (halt: nothing left to clean up, nothing to wait for). */
private fun fail(e: Throwable): Nothing {
    System.err.println("error: $e")
    Runtime.getRuntime().halt(1)
    throw AssertionError("halt returned")
}

private const val SLEEP_WARM_UP_TASKS = 1000

/**
 * chain and chain-await prime with one untimed chain of min(N, PRIME_LINKS) links before
 * the clock (docs/protocol.md, "Priming"); see [prime].
 */
internal const val PRIME_LINKS = 1000

/**
 * --warmup-ms stops after this many runs even short of W ms: at N = 10 a run takes
 * microseconds, and the JSON line lists every warm-up run.
 */
internal const val MAX_WARMUP_RUNS = 10_000

/** One run of the workload: its answer, its time, and (sleep only) its start loop's time. */
internal class Measurement(val result: Long, val elapsedNs: Long, val spawnNs: Long)

/**
 * One pass of chain or chain-await at size n, its answer: the code the priming and the
 * timed passes share. A parameter of [run] and [measure] so that a test can watch the passes.
 */
internal typealias ChainPass = suspend (n: Int) -> Long

/** The workload's [ChainPass]: Workloads.chain or Workloads.chainAwait (unused by the others). */
internal fun chainPass(workload: String): ChainPass =
    if (workload == "chain-await") { n -> Workloads.chainAwait(n) } else { n -> Workloads.chain(n) }

/**
 * docs/protocol.md, "Collection between passes": one full, blocking collection before
 * each pass that follows the priming or another pass (warm-up runs too), so that no pass
 * collects the previous pass's garbage inside its clock: [collectKeepingHeap].
 * BENCH_COLLECT=0 (exactly) skips it: null.
 */
internal fun collector(benchCollect: String?): (() -> Unit)? =
    if (benchCollect == "0") null else ::collectKeepingHeap

/**
 * System.gc() (a full collection with the default G1) that leaves the heap's size as it
 * found it, as java/ does (its Main.collectKeepingHeap): after a full collection G1 shrinks
 * the heap to fit what survived, and the next pass regrew it inside its clock (the warm chain
 * at N = 10,000: 45 ms against 31 without the collection, kotlin/README.md). MaxHeapFreeRatio
 * is a manageable flag: it is 100 (never shrink) for the collection only, so G1's own sizing
 * runs unchanged in every pass.
 */
internal fun collectKeepingHeap() {
    val vm = ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean::class.java)
    val ratio = vm.getVMOption("MaxHeapFreeRatio").value
    vm.setVMOption("MaxHeapFreeRatio", "100")
    try {
        System.gc()
    } finally {
        vm.setVMOption("MaxHeapFreeRatio", ratio)
    }
}

/**
 * Runs the priming (chain, chain-await), the warm-up runs and the K iterations and
 * returns the protocol's JSON line, collecting before each pass as BENCH_COLLECT says.
 */
fun run(o: Options): String = run(o, chain = chainPass(o.workload))

/** As run(o), with [collect] (null: none) as the collector; parameters so that a test can watch the passes. */
internal fun run(
    o: Options,
    collect: (() -> Unit)? = collector(System.getenv("BENCH_COLLECT")),
    chain: ChainPass,
): String {
    val chains = o.workload == "chain" || o.workload == "chain-await"
    var primed = 0
    var warmup = emptyList<Measurement>()
    val results = LongArray(o.iterations)
    val iterNs = LongArray(o.iterations)
    var spawnNs = 0L
    runBlocking(Dispatchers.Default) {
        if (chains) primed = prime(o.n, chain)
        if (o.workload == "sleep") {
            // Before the clock, as java/ does: min(N, 1000) coroutines sleep 1 ms, so the
            // delay machinery (its timer thread, DefaultExecutor) is running and its classes
            // loaded and the hot paths compiled. Cold, the start loop of a few tasks took
            // 6-15 ms here, mostly class loading, and more on a busy machine: longer than
            // a short sleep, which the harness rightly counts as tasks that did not overlap.
            Workloads.sleep(minOf(o.n, SLEEP_WARM_UP_TASKS), 1)
        }
        // Nothing of ours to collect before the first pass of a fresh process; a full collection
        // there only adds the collector's own structures to the peak RSS (G1: sleep N = 1, 60.2 -> 61.8 MiB).
        var ran = chains
        val next: suspend () -> Measurement = { pass(o, chain, if (ran) collect else null).also { ran = true } }
        warmup = warmUp(o.warmupMs, MAX_WARMUP_RUNS, next)
        for (k in 0 until o.iterations) {
            val m = next()
            results[k] = m.result
            iterNs[k] = m.elapsedNs
            if (k == 0) spawnNs = m.spawnNs
        }
    }
    return buildString {
        append("{\"workload\": \"").append(o.workload)
        append("\", \"n\": ").append(o.n)
        append(", \"buffer\": ").append(if (o.workload == "bounded") o.buffer.toString() else "null")
        append(", \"result\": ").append(results.last())
        append(", \"results\": [").append(results.joinToString(", "))
        append("], \"iter_ns\": [").append(iterNs.joinToString(", "))
        append("], \"warmup_ns\": [").append(warmup.joinToString(", ") { it.elapsedNs.toString() })
        append("], \"warmup_results\": [").append(warmup.joinToString(", ") { it.result.toString() }).append(']')
        if (chains) append(", \"primed\": ").append(primed)
        if (o.workload == "sleep") append(", \"spawn_ns\": ").append(spawnNs)
        append(", \"runtime\": \"").append(runtime().replace("\\", "\\\\").replace("\"", "\\\"")).append("\"}")
    }
}

/**
 * The protocol's priming of chain and chain-await: one chain of P = min(N, 1000) links,
 * run by the same code as the timed passes, before the clock and before any warm-up run;
 * its answer must be P, and nothing of it is timed or reported but P. It is there for
 * the JIT, as in java/: the first timed pass no longer runs the relay's resumption for the
 * first time (kotlin/README.md, "Priming").
 */
internal suspend fun prime(n: Int, chain: ChainPass): Int {
    val p = minOf(n, PRIME_LINKS)
    val answer = chain(p)
    check(answer == p.toLong()) { "priming: a chain of $p links answered $answer" }
    return p
}

/**
 * --warmup-ms: the JIT compiles a hot path only after it has run many times, so the
 * same workload runs first, timed alike, until these runs have taken W ms in all or
 * number [maxRuns]. Returns them in order.
 */
internal suspend fun warmUp(warmupMs: Int, maxRuns: Int, run: suspend () -> Measurement): List<Measurement> {
    val runs = ArrayList<Measurement>()
    var totalNs = 0L
    while (totalNs < warmupMs * 1_000_000L && runs.size < maxRuns) {
        val m = run()
        runs.add(m)
        totalNs += m.elapsedNs
    }
    return runs
}

/** One pass: the collection (null: none), then the workload, whose clock starts in [measure]. */
internal suspend fun pass(o: Options, chain: ChainPass, collect: (() -> Unit)?): Measurement {
    collect?.invoke()
    return measure(o, chain)
}

/** Runs the workload once, timed from its first step until the answer is in. */
internal suspend fun measure(o: Options, chain: ChainPass = chainPass(o.workload)): Measurement {
    var spawnNs = 0L
    val start = System.nanoTime()
    val result = when (o.workload) {
        "sleep" -> {
            val run = Workloads.sleep(o.n, o.durationMs)
            spawnNs = run.spawnNs
            run.completed
        }
        "chain", "chain-await" -> chain(o.n)
        "bounded" -> Workloads.bounded(o.n, o.buffer)
        "skynet" -> Workloads.skynet(o.n)
        else -> throw AssertionError(o.workload)
    }
    return Measurement(result, System.nanoTime() - start, spawnNs)
}

/** e.g. "Kotlin 2.4.21, kotlinx.coroutines 1.11.0, Dispatchers.Default, JDK 25.0.3+9-LTS (Eclipse Adoptium)". */
fun runtime(): String =
    "Kotlin ${KotlinVersion.CURRENT}, kotlinx.coroutines ${coroutinesVersion()}, Dispatchers.Default, " +
        "JDK ${Runtime.version()} (${System.getProperty("java.vm.vendor")})"

/**
 * The release of kotlinx.coroutines this process loaded (kotlin-coroutines@VERSION builds against
 * others): its jar's manifest (Implementation-Version, in recent releases), else the jar's
 * META-INF/kotlinx_coroutines_core.version (1.6 and later), else the version in the jar's file name
 * (releases before 1.6 carry it nowhere else; build.sh release keeps it there).
 */
fun coroutinesVersion(): String {
    val job = Job::class.java
    job.`package`.implementationVersion?.let { return it }
    job.classLoader.getResourceAsStream("META-INF/kotlinx_coroutines_core.version")?.use {
        return it.readBytes().decodeToString().trim()
    }
    val jar = job.protectionDomain?.codeSource?.location?.path ?: return "unknown"
    return Regex("""-(\d[^/]*)\.jar$""").find(jar)?.groupValues?.get(1) ?: "unknown"
}

/**
 * The flags as the JVM saw them, so options injected through JDK_JAVA_OPTIONS or
 * JAVA_TOOL_OPTIONS show up too. Only --version asks: java.management costs the
 * measured process a few MB.
 */
private fun jvmFlags(): String {
    val flags = ManagementFactory.getRuntimeMXBean().inputArguments
    return if (flags.isEmpty()) "none" else flags.joinToString(" ")
}
