package bench

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertThrows
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

class OptionsTest {
    private fun parse(vararg args: String) = Options.parse(arrayOf(*args))

    private fun rejects(vararg args: String): String =
        assertThrows(Options.UsageException::class.java) { parse(*args) }.message!!

    @Test
    fun parsesEveryWorkload() {
        assertEquals(Options("sleep", 10, 2, -1, 5000), parse("sleep", "--n", "10", "--iterations", "2", "--duration-ms", "5000"))
        assertEquals(Options("bounded", 10, 1, 0, -1), parse("bounded", "--buffer", "0", "--iterations", "1", "--n", "10"))
        assertEquals(Options("chain", 2147483647, 1, -1, -1), parse("chain", "--n", "2147483647", "--iterations", "1"))
        assertEquals(1000, parse("skynet", "--n", "1000", "--iterations", "1").n)
        assertEquals(1, parse("chain-await", "--n", "1", "--iterations", "1").n)
    }

    @Test
    fun warmupIsOptionalAndMayBeZero() {
        assertEquals(0, parse("chain", "--n", "5", "--iterations", "1").warmupMs)
        assertEquals(0, parse("chain", "--n", "5", "--iterations", "1", "--warmup-ms", "0").warmupMs)
        assertEquals(Options("bounded", 5, 1, 1, -1, 2000), parse("bounded", "--warmup-ms", "2000", "--n", "5", "--buffer", "1", "--iterations", "1"))
        assertEquals(50, parse("sleep", "--n", "5", "--iterations", "1", "--duration-ms", "10", "--warmup-ms", "50").warmupMs)
    }

    @Test
    fun rejectsBadValues() {
        for (value in listOf("abc", "0", "-3", "+5", "1.5", "", "\u0665", "2147483648", "99999999999999999999999")) {
            rejects("chain", "--n", value, "--iterations", "1")
        }
        assertTrue(rejects("chain", "--n", "99999999999999999999999", "--iterations", "1").contains("out of range"))
        rejects("bounded", "--n", "1", "--iterations", "1", "--buffer", "-1")
        rejects("sleep", "--n", "1", "--iterations", "1", "--duration-ms", "0")
        rejects("chain", "--n", "1", "--iterations", "0")
        for (value in listOf("-1", "x", "+5", "1.5", "", "2147483648")) {
            rejects("chain", "--n", "1", "--iterations", "1", "--warmup-ms", value)
        }
        rejects("chain", "--n", "1", "--iterations", "1", "--warmup-ms")
    }

    @Test
    fun rejectsBadShapes() {
        rejects()
        rejects("nope", "--n", "1", "--iterations", "1")
        rejects("serve", "--port", "0", "--delay-ms", "10")
        rejects("chain", "--n")
        rejects("chain", "--n", "1")
        rejects("chain", "--iterations", "1")
        rejects("chain", "--n", "1", "--iterations", "1", "--bogus", "1")
        rejects("chain", "--n", "1", "--iterations", "1", "extra")
        rejects("bounded", "--n", "1", "--iterations", "1")
        rejects("sleep", "--n", "1", "--iterations", "1")
        for (n in listOf("2", "20", "99", "1001")) rejects("skynet", "--n", n, "--iterations", "1")
    }

    @Test
    fun powersOfTen() {
        assertTrue(listOf(1, 10, 100, 1_000_000, 1_000_000_000).all(Options::isPowerOfTen))
        assertFalse(listOf(0, -10, 2, 11, 20, 110, 999_999, Int.MAX_VALUE).any(Options::isPowerOfTen))
    }

    @Test
    fun helpAnywhere() {
        assertTrue(Options.wantsHelp(arrayOf("chain", "--n", "-h")))
        assertTrue(Options.wantsHelp(arrayOf("--help")))
        assertFalse(Options.wantsHelp(arrayOf("chain", "--n", "1")))
    }
}
