package bench

import java.util.concurrent.TimeUnit
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

/** The built program as the harness starts it: build/jdk/bin/java -cp target/classes:target/lib/[*] bench.MainKt. */
class ProgramTest {
    private class Result(val code: Int, val stdout: String, val stderr: String)

    private fun program(vararg args: String): Result {
        val command = listOf(System.getProperty("bench.java"), "-cp", System.getProperty("bench.classpath"), "bench.MainKt", *args)
        val process = ProcessBuilder(command).redirectInput(ProcessBuilder.Redirect.from(java.io.File("/dev/null"))).start()
        val stdout = process.inputStream.bufferedReader().readText()
        val stderr = process.errorStream.bufferedReader().readText()
        assertTrue(process.waitFor(60, TimeUnit.SECONDS), "$args: timed out")
        return Result(process.exitValue(), stdout, stderr)
    }

    @Test
    fun printsOneJsonLine() {
        val r = program("bounded", "--n", "100", "--iterations", "2", "--buffer", "0")
        assertEquals(0, r.code, r.stderr)
        val lines = r.stdout.trim().lines()
        assertEquals(1, lines.size, r.stdout)
        assertTrue(lines[0].startsWith("{\"workload\": \"bounded\", \"n\": 100, \"buffer\": 0, \"result\": 4950, \"results\": [4950, 4950], \"iter_ns\": ["), lines[0])
        val sleep = program("sleep", "--n", "10", "--iterations", "1", "--duration-ms", "10").stdout
        assertTrue(sleep.contains("\"buffer\": null, \"result\": 10,") && sleep.contains("\"spawn_ns\": "), sleep)
        val skynet = program("skynet", "--n", "1", "--iterations", "1").stdout
        assertTrue(skynet.contains("\"result\": 0, \"results\": [0]"), skynet)
        // No --warmup-ms (or 0): no warm-up run, the two keys empty.
        assertTrue(lines[0].contains("\"warmup_ns\": [], \"warmup_results\": []"), lines[0])
        val zero = program("chain", "--n", "10", "--iterations", "1", "--warmup-ms", "0").stdout
        assertTrue(zero.contains("\"warmup_ns\": [], \"warmup_results\": []"), zero)
    }

    /** The integers of the JSON list under [key] in a report line. */
    private fun list(json: String, key: String): List<Long> {
        val m = Regex("\"$key\": \\[([0-9, ]*)]").find(json) ?: throw AssertionError("no $key in $json")
        return if (m.groupValues[1].isEmpty()) emptyList() else m.groupValues[1].split(", ").map { it.toLong() }
    }

    /**
     * At least one warm-up run, each answer right, and the rule: runs until their total
     * reached W ms, the last one being the one that got there; the K iterations as before.
     */
    private fun checkWarmup(r: Result, warmupMs: Int, expected: Long, iterations: Int) {
        assertEquals(0, r.code, r.stderr)
        assertEquals(1, r.stdout.trim().lines().size, r.stdout)
        val times = list(r.stdout, "warmup_ns")
        assertTrue(times.isNotEmpty() && times.all { it > 0 }, r.stdout)
        assertEquals(List(times.size) { expected }, list(r.stdout, "warmup_results"), r.stdout)
        assertTrue(times.sum() >= warmupMs * 1_000_000L, r.stdout)
        assertTrue(times.dropLast(1).sum() < warmupMs * 1_000_000L, r.stdout)
        assertEquals(List(iterations) { expected }, list(r.stdout, "results"), r.stdout)
        assertEquals(iterations, list(r.stdout, "iter_ns").size, r.stdout)
    }

    /** The integer under [key] in a report line. */
    private fun number(json: String, key: String): Long {
        val m = Regex("\"$key\": ([0-9]+)[,}]").find(json) ?: throw AssertionError("no $key in $json")
        return m.groupValues[1].toLong()
    }

    /** chain and chain-await report their priming, P = min(N, 1000), and still K timed passes at size N. */
    @Test
    fun chainsReportTheirPriming() {
        for (workload in listOf("chain", "chain-await")) {
            for (n in listOf(5, 2000)) {
                val r = program(workload, "--n", "$n", "--iterations", "2")
                assertEquals(0, r.code, r.stderr)
                assertEquals(minOf(n, 1000).toLong(), number(r.stdout, "primed"), r.stdout)
                assertEquals(2, list(r.stdout, "iter_ns").size, r.stdout)
                assertEquals(listOf(n.toLong(), n.toLong()), list(r.stdout, "results"), r.stdout)
                assertEquals(emptyList<Long>(), list(r.stdout, "warmup_ns"), r.stdout)
            }
        }
        val bounded = program("bounded", "--n", "10", "--buffer", "1", "--iterations", "1").stdout
        assertTrue(bounded.startsWith("{") && !bounded.contains("primed"), bounded)
    }

    /**
     * In process: the priming is one pass of the same chain code at P links, first of all
     * (before any warm-up run), and none of it is timed: stalling it by 1.5 s leaves every
     * timed figure below that, while the same stall in the first timed pass shows in iter_ns[0].
     */
    @Test
    fun primingIsOneUntimedChainBeforeEverything() {
        val stallMs = 1500L
        for (workload in listOf("chain", "chain-await")) {
            for (n in listOf(5, 2000)) {
                val p = minOf(n, PRIME_LINKS)
                val o = Options.parse(arrayOf(workload, "--n", "$n", "--iterations", "2"))
                for (stalled in listOf(0, 1)) {
                    val sizes = ArrayList<Int>()
                    val real = chainPass(workload)
                    val json = run(o) { size ->
                        if (sizes.size == stalled) Thread.sleep(stallMs)
                        sizes.add(size)
                        real(size)
                    }
                    assertEquals(listOf(p, n, n), sizes, json)
                    assertEquals(p.toLong(), number(json, "primed"), json)
                    val iterNs = list(json, "iter_ns")
                    assertEquals(2, iterNs.size, json)
                    assertEquals(listOf(n.toLong(), n.toLong()), list(json, "results"), json)
                    if (stalled == 0) {
                        assertTrue(iterNs.all { it < stallMs * 1_000_000L }, json)
                    } else {
                        assertTrue(iterNs[0] >= stallMs * 1_000_000L, json)
                    }
                }
            }
            // With --warmup-ms, the priming comes before the first warm-up run, untimed too.
            val o = Options.parse(arrayOf(workload, "--n", "5", "--iterations", "2", "--warmup-ms", "1"))
            val sizes = ArrayList<Int>()
            val real = chainPass(workload)
            val json = run(o) { size ->
                if (sizes.isEmpty()) Thread.sleep(stallMs)
                sizes.add(size)
                real(size)
            }
            val warmupNs = list(json, "warmup_ns")
            assertTrue(warmupNs.isNotEmpty() && warmupNs.all { it < stallMs * 1_000_000L }, json)
            assertTrue(list(json, "iter_ns").all { it < stallMs * 1_000_000L }, json)
            assertEquals(List(1 + warmupNs.size + 2) { 5 }, sizes, json)
            assertEquals(5L, number(json, "primed"), json)
        }
    }

    @Test
    fun warmupRunsBeforeTheIterations() {
        checkWarmup(program("bounded", "--n", "1000", "--buffer", "1", "--iterations", "3", "--warmup-ms", "100"), 100, 499500, 3)
        // Each sleep run takes at least D = 20 ms: W = 400 needs many runs, never one even
        // when a busy machine makes a run take several times D.
        val sleep = program("sleep", "--n", "10", "--duration-ms", "20", "--iterations", "1", "--warmup-ms", "400")
        checkWarmup(sleep, 400, 10, 1)
        assertTrue(list(sleep.stdout, "warmup_ns").size >= 2 && sleep.stdout.contains("\"spawn_ns\": "), sleep.stdout)
    }

    @Test
    fun warmupStopsAfterMaxRuns() {
        // In process: the program's cap is MAX_WARMUP_RUNS; 3 here, with W = 60 s,
        // makes exactly three runs of the real workload and returns at once.
        assertEquals(10_000, MAX_WARMUP_RUNS)
        val o = Options.parse(arrayOf("bounded", "--n", "10", "--buffer", "1", "--iterations", "1", "--warmup-ms", "60000"))
        val start = System.nanoTime()
        val runs = runBlocking(Dispatchers.Default) { warmUp(o.warmupMs, 3) { measure(o) } }
        assertTrue(System.nanoTime() - start < 10_000_000_000L)
        assertEquals(3, runs.size)
        assertTrue(runs.all { it.result == 45L && it.elapsedNs > 0 })
    }

    @Test
    fun helpAndVersion() {
        for (flag in listOf("--help", "-h")) {
            val r = program(flag)
            assertEquals(0, r.code)
            assertTrue(r.stdout.startsWith("usage:") && r.stderr.isEmpty(), r.stdout + r.stderr)
            assertTrue(r.stdout.contains("--warmup-ms W"), r.stdout)
        }
        val v = program("--version")
        assertEquals(0, v.code)
        assertTrue(v.stdout.startsWith("Kotlin ") && v.stdout.contains("kotlinx.coroutines 1.") && v.stdout.contains("JVM flags:"), v.stdout)
    }

    /**
     * docs/protocol.md's one table of bad input (docs/protocol-bad-input.json, which test_conformance.py runs
     * too), as docs/protocol-bad-input.tsv, its line-per-case form for tests without a JSON reader: the cases
     * for the workloads we declare (impls.toml). "{w}" is a workload's name, "{required}" its other required
     * options (spliced).
     */
    private fun badInputTable(declared: List<String>): List<List<String>> {
        val required = linkedMapOf<String, List<String>>()
        val cases = mutableListOf<List<String>>() // WHEN, then ARG...
        for (line in java.io.File("../docs/protocol-bad-input.tsv").readLines()) {
            val fields = line.split("\t")
            when (fields[0]) {
                "required" -> required[fields[1]] = fields.drop(2)
                "case" -> cases.add(fields.drop(2))
            }
        }
        val out = mutableListOf<List<String>>()
        for (case in cases) {
            val workloads = when (val w = case[0]) {
                "declared" -> required.keys.filter { it in declared }
                "undeclared" -> required.keys.filter { it !in declared }
                else -> if (w == "always" || w in declared) listOf("") else listOf()
            }
            for (w in workloads) {
                out.add(case.drop(1).flatMap { a ->
                    when (a) {
                        "{w}" -> listOf(w)
                        "{required}" -> required.getValue(w)
                        else -> listOf(a)
                    }
                })
            }
        }
        assertTrue(out.size > 20, "docs/protocol-bad-input.tsv: ${out.size} cases")
        return out
    }

    @Test
    fun badInputIsOneLineAndExit2() {
        // The table, then ours.
        val cases = badInputTable(listOf("sleep", "chain", "chain-await", "bounded", "skynet")) + listOf(
            listOf("skynet", "--n", "20", "--iterations", "1"),
        )
        for (args in cases) {
            val r = program(*args.toTypedArray())
            assertEquals(2, r.code, "$args")
            assertEquals(1, r.stderr.trim().lines().size, "$args: ${r.stderr}")
            assertTrue(r.stdout.isEmpty(), "$args: ${r.stdout}")
        }
    }
}
