package bench

import java.lang.management.ManagementFactory
import java.util.concurrent.TimeUnit
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNotNull
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

/**
 * docs/protocol.md, "Collection between passes": one collection before each pass, warm-up
 * runs and timed passes alike, after the priming and outside the clock; BENCH_COLLECT=0
 * skips it. In process with stand-in collectors, and in the built program with -Xlog:gc.
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
                val o = Options.parse(arrayOf(workload, "--n", "$n", "--iterations", "3", "--warmup-ms", "1"))
                val log = Log(workload)
                val json = run(o, log.collect, log.chain)
                assertEquals(1, list(json, "warmup_ns").size, json)
                val passes = List(1 + 3) { listOf("collect", "chain $n") }.flatten()
                assertEquals(listOf("chain ${minOf(n, PRIME_LINKS)}") + passes, log.events, json)
                assertEquals(List(3) { n.toLong() }, list(json, "results"), json)
            }
        }
    }

    @Test
    fun everyWorkloadCollectsOnceAPass() {
        for (args in listOf("bounded --n 10 --buffer 1", "sleep --n 10 --duration-ms 2", "skynet --n 10")) {
            val o = Options.parse("$args --iterations 3 --warmup-ms 1".split(" ").toTypedArray())
            var collections = 0
            val json = run(o, { collections++ }, chainPass(o.workload))
            assertEquals(list(json, "warmup_ns").size + 3, collections, json)
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
            assertEquals(3, log.events.count { it == "collect" }, json)
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
    fun collectorIsAFullCollection() {
        fun collections() = ManagementFactory.getGarbageCollectorMXBeans().sumOf { maxOf(it.collectionCount, 0L) }
        val before = collections()
        collector(null)!!()
        assertTrue(collections() > before)
    }

    /**
     * The built program: -Xlog:gc on stderr logs one "Pause Full (System.gc())" a pass,
     * warm-up runs included, unless BENCH_COLLECT=0; the JSON line is the same.
     */
    @Test
    fun theProgramCollectsOnceAPass() {
        for (value in listOf(null, "1", "0")) {
            val command = listOf(System.getProperty("bench.java"), "-Xlog:gc:stderr", "-cp", System.getProperty("bench.classpath"),
                "bench.MainKt", "chain", "--n", "10", "--iterations", "3", "--warmup-ms", "1")
            val builder = ProcessBuilder(command).redirectInput(ProcessBuilder.Redirect.from(java.io.File("/dev/null")))
            builder.environment().remove("BENCH_COLLECT")
            if (value != null) builder.environment()["BENCH_COLLECT"] = value
            val process = builder.start()
            val stdout = process.inputStream.bufferedReader().readText()
            val stderr = process.errorStream.bufferedReader().readText()
            assertTrue(process.waitFor(60, TimeUnit.SECONDS), "timed out")
            assertEquals(0, process.exitValue(), stderr)
            assertEquals(1, stdout.trim().lines().size, stdout)
            assertTrue(stdout.startsWith("{\"workload\": \"chain\", \"n\": 10, \"buffer\": null, \"result\": 10, " +
                "\"results\": [10, 10, 10], \"iter_ns\": ["), stdout)
            val passes = list(stdout, "warmup_ns").size + 3
            val collections = stderr.lines().count { "Pause Full (System.gc())" in it }
            assertEquals(if (value == "0") 0 else passes, collections, "BENCH_COLLECT=$value: $stderr")
        }
    }
}
