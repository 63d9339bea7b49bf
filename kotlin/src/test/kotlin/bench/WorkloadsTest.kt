package bench

import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

/** Every workload at small N, on the dispatcher the program uses. */
class WorkloadsTest {
    private fun <T> onDefault(block: suspend () -> T): T = runBlocking(Dispatchers.Default) { block() }

    @Test
    fun sleepCountsEveryTaskAndTakesOneSleep() {
        val start = System.nanoTime()
        val run = onDefault { Workloads.sleep(1000, 50) }
        val tookMs = (System.nanoTime() - start) / 1_000_000
        assertEquals(1000L, run.completed)
        assertTrue(tookMs >= 50, "took $tookMs ms")
        assertTrue(tookMs < 5000, "took $tookMs ms: the sleeps ran one after another?")
        assertTrue(run.spawnNs in 1 until 50_000_000, "spawn ${run.spawnNs} ns")
    }

    @Test
    fun chainPassesTheValueThroughEveryTask() {
        for (n in listOf(1, 2, 1000)) assertEquals(n.toLong(), onDefault { Workloads.chain(n) })
    }

    @Test
    fun chainAwaitAddsOnePerTask() {
        // deep enough that a continuation chain without the yield could overflow the stack
        for (n in listOf(1, 100_000)) assertEquals(n.toLong(), onDefault { Workloads.chainAwait(n) })
    }

    @Test
    fun boundedSumsEveryIndexWithAnyBuffer() {
        for (buffer in listOf(0, 1, 7, 1000)) {
            for (n in listOf(1, 999)) {
                assertEquals(n.toLong() * (n - 1) / 2, onDefault { Workloads.bounded(n, buffer) }, "n $n buffer $buffer")
            }
        }
    }

    @Test
    fun skynetSumsTheLeaves() {
        for (n in listOf(1, 10, 100, 100_000)) {
            assertEquals(n.toLong() * (n - 1) / 2, onDefault { Workloads.skynet(n) }, "n $n")
        }
    }
}
