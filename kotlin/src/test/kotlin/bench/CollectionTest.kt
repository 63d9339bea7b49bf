package bench

import com.sun.management.HotSpotDiagnosticMXBean
import java.lang.management.ManagementFactory
import java.util.concurrent.TimeUnit
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNotNull
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

/**
 * docs/protocol.md, "Collection between passes": one collection before each pass, warm-up
 * runs and timed passes alike, that follows the priming or another pass (none before the
 * first pass of a workload without priming), outside the clock, and not shrinking the heap;
 * BENCH_COLLECT=0 skips it. In process with stand-in collectors, and in the built program
 * with -Xlog:gc.
 */
class CollectionTest {
    /** The integers of the JSON list under [key] in a report line. */
    private fun list(json: String, key: String): List<Long> {
        val m = Regex("\"$key\": \\[([0-9, ]*)]").find(json) ?: throw AssertionError("no $key in $json")
        return if (m.groupValues[1].isEmpty()) emptyList() else m.groupValues[1].split(", ").map { it.toLong() }
    }

    /**
     * A log of "collect" (the stand-in collector, which then sleeps [collectMs]) and
     * "chain n" (each pass of the real chain code, after a 2 ms stall inside its clock:
     * --warmup-ms 1 then makes exactly one warm-up run).
     */
    private class Log(workload: String, val collectMs: Long = 0) {
        val events = ArrayList<String>()
        private val real = chainPass(workload)
        val collect = { ->
            synchronized(events) { events.add("collect") }
            Thread.sleep(collectMs)
        }
        val chain: ChainPass = { n ->
            synchronized(events) { events.add("chain $n") }
            Thread.sleep(2)
            real(n)
        }
    }

    @Test
    fun collectsBeforeEachPassAfterThePriming() {
        for (workload in listOf("chain", "chain-await")) {
            for (n in listOf(5, 2000)) {
                for (warmupMs in listOf(0, 1)) {
                    val o = Options.parse(arrayOf(workload, "--n", "$n", "--iterations", "3", "--warmup-ms", "$warmupMs"))
                    val log = Log(workload)
                    val json = run(o, log.collect, log.chain)
                    assertEquals(warmupMs, list(json, "warmup_ns").size, json)
                    val passes = List(warmupMs + 3) { listOf("collect", "chain $n") }.flatten()
                    assertEquals(listOf("chain ${minOf(n, PRIME_LINKS)}") + passes, log.events, json)
                    assertEquals(List(3) { n.toLong() }, list(json, "results"), json)
                }
            }
        }
    }

    /**
     * Without priming, the first pass (warm-up run or iteration 1) has no collection and
     * every later pass has one: collection i (from 0) comes after passes 0..i and before
     * the rest, which the times since the start show (sleep's 50 ms passes make that sharp).
     */
    @Test
    fun withoutPrimingCollectsBeforeEachPassButTheFirst() {
        for (args in listOf("bounded --n 10 --buffer 1", "sleep --n 10 --duration-ms 50", "skynet --n 10")) {
            for (warmup in listOf("", " --warmup-ms 100")) {
                val o = Options.parse("$args --iterations 2$warmup".split(" ").toTypedArray())
                val collections = ArrayList<Long>()
                val start = System.nanoTime()
                val json = run(o, { collections.add(System.nanoTime() - start) }, chainPass(o.workload))
                val totalNs = System.nanoTime() - start
                val warmupRuns = list(json, "warmup_ns").size
                assertTrue(if (warmup.isEmpty()) warmupRuns == 0 else warmupRuns >= 2, json)
                val passes = list(json, "warmup_ns") + list(json, "iter_ns")
                assertEquals(passes.size - 1, collections.size, json)
                for ((i, at) in collections.withIndex()) {
                    assertTrue(at >= passes.take(i + 1).sum() && at <= totalNs - passes.drop(i + 1).sum(), "$i: $json")
                }
            }
        }
    }

    @Test
    fun collectionIsOutsideTheClock() {
        // A 300 ms collection is in no figure; each pass's 2 ms stall (chain) or sleep is.
        val stallNs = 300_000_000L
        for (args in listOf("chain --n 100", "chain-await --n 100", "sleep --n 10 --duration-ms 2")) {
            val o = Options.parse("$args --iterations 2 --warmup-ms 1".split(" ").toTypedArray())
            val log = Log(o.workload, collectMs = 300)
            val json = run(o, log.collect, log.chain)
            val times = list(json, "warmup_ns") + list(json, "iter_ns")
            assertEquals(3, times.size, json)
            assertTrue(times.all { it >= 2_000_000L && it < stallNs }, json)
            assertEquals(if (o.workload == "sleep") 2 else 3, log.events.count { it == "collect" }, json)
        }
    }

    @Test
    fun benchCollectZeroSkipsTheCollection() {
        assertNull(collector("0"))
        for (value in listOf(null, "", "1", "00", " 0", "0 ", "false")) {
            assertNotNull(collector(value), "BENCH_COLLECT=$value")
        }
        val o = Options.parse(arrayOf("chain", "--n", "5", "--iterations", "2", "--warmup-ms", "1"))
        val log = Log("chain")
        val json = run(o, collector("0"), log.chain)
        assertEquals(List(1 + list(json, "warmup_ns").size + 2) { "chain 5" }, log.events, json)
    }

    @Test
    fun collectorIsAFullCollectionThatKeepsTheHeap() {
        fun collections() = ManagementFactory.getGarbageCollectorMXBeans().sumOf { maxOf(it.collectionCount, 0L) }
        fun committed() = ManagementFactory.getMemoryMXBean().heapMemoryUsage.committed
        val vm = ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean::class.java)
        val ratio = vm.getVMOption("MaxHeapFreeRatio").value
        val heap = committed()
        val before = collections()
        collector(null)!!()
        assertTrue(collections() > before)
        assertTrue(committed() >= heap)
        // Never shrink for the collection only: G1's sizing inside a pass is the JVM's own.
        assertEquals(ratio, vm.getVMOption("MaxHeapFreeRatio").value)
    }

    /**
     * The built program: -Xlog:gc on stderr logs one "Pause Full (System.gc())" a pass,
     * warm-up runs included, after chain's priming, and none before bounded's first pass
     * (no priming, no warm-up), unless BENCH_COLLECT=0; the JSON line is the same. No
     * collection shrinks the committed heap (gc+heap=debug), as a plain System.gc() does.
     */
    @Test
    fun theProgramCollectsBeforeEachPassThatFollowsSomething() {
        for (value in listOf(null, "1", "0")) {
            val (stdout, stderr) = launch(value, "chain", "--n", "10", "--iterations", "3", "--warmup-ms", "1")
            assertTrue(stdout.startsWith("{\"workload\": \"chain\", \"n\": 10, \"buffer\": null, \"result\": 10, " +
                "\"results\": [10, 10, 10], \"iter_ns\": ["), stdout)
            val passes = list(stdout, "warmup_ns").size + 3
            assertEquals(if (value == "0") 0 else passes, fullCollections(stderr), "BENCH_COLLECT=$value: $stderr")
            assertHeapKept(stderr)
            val (line, gcLog) = launch(value, "bounded", "--n", "10", "--buffer", "1", "--iterations", "3")
            assertTrue("\"results\": [45, 45, 45]" in line, line)
            assertEquals(if (value == "0") 0 else 2, fullCollections(gcLog), "BENCH_COLLECT=$value: $gcLog")
            assertHeapKept(gcLog)
        }
    }

    /** The built program's one line and its stderr, under -Xlog:gc,gc+heap=debug:stderr and BENCH_COLLECT=[benchCollect] (null: unset). */
    private fun launch(benchCollect: String?, vararg args: String): Pair<String, String> {
        val command = listOf(System.getProperty("bench.java"), "-Xlog:gc,gc+heap=debug:stderr", "-cp", System.getProperty("bench.classpath"),
            "bench.MainKt") + args
        val builder = ProcessBuilder(command).redirectInput(ProcessBuilder.Redirect.from(java.io.File("/dev/null")))
        builder.environment().remove("BENCH_COLLECT")
        if (benchCollect != null) builder.environment()["BENCH_COLLECT"] = benchCollect
        val process = builder.start()
        val stdout = process.inputStream.bufferedReader().readText()
        val stderr = process.errorStream.bufferedReader().readText()
        assertTrue(process.waitFor(60, TimeUnit.SECONDS), "timed out")
        assertEquals(0, process.exitValue(), stderr)
        assertEquals(1, stdout.trim().lines().size, stdout)
        return stdout to stderr
    }

    /** The System.gc() collections in an -Xlog:gc log. */
    private fun fullCollections(gcLog: String) = gcLog.lines().count { "Pause Full (System.gc())" in it }

    /** Each System.gc() collection in a gc+heap=debug log leaves the committed heap at least as large as it found it. */
    private fun assertHeapKept(gcLog: String) {
        // GC id: committed before, after
        val committed = Regex("""GC\((\d+)\)  garbage-first heap .* committed (\d+)K""").findAll(gcLog)
            .groupBy({ it.groupValues[1] }, { it.groupValues[2].toLong() })
        for (full in Regex("""GC\((\d+)\) Pause Full \(System.gc\(\)\)""").findAll(gcLog)) {
            val sizes = committed.getValue(full.groupValues[1])
            assertEquals(2, sizes.size, gcLog)
            val (before, after) = sizes
            assertTrue(after >= before, "GC(${full.groupValues[1]}) shrank the heap: $gcLog")
        }
    }
}
