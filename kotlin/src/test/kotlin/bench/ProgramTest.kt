package bench

import java.util.concurrent.TimeUnit
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
    }

    @Test
    fun helpAndVersion() {
        for (flag in listOf("--help", "-h")) {
            val r = program(flag)
            assertEquals(0, r.code)
            assertTrue(r.stdout.startsWith("usage:") && r.stderr.isEmpty(), r.stdout + r.stderr)
        }
        val v = program("--version")
        assertEquals(0, v.code)
        assertTrue(v.stdout.startsWith("Kotlin ") && v.stdout.contains("kotlinx.coroutines 1.") && v.stdout.contains("JVM flags:"), v.stdout)
    }

    @Test
    fun badInputIsOneLineAndExit2() {
        val cases = listOf(
            listOf(), listOf("chain"), listOf("nope", "--n", "1", "--iterations", "1"),
            listOf("chain", "--n", "abc", "--iterations", "1"), listOf("chain", "--n", "0", "--iterations", "1"),
            listOf("chain", "--n", "99999999999999999999999", "--iterations", "1"), listOf("chain", "--n"),
            listOf("chain", "--n", "1", "--iterations", "1", "--bogus", "1"),
            listOf("bounded", "--n", "1", "--iterations", "1", "--buffer", "-1"),
            listOf("sleep", "--n", "1", "--iterations", "1", "--duration-ms", "0"),
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
