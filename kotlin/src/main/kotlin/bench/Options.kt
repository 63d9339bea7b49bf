package bench

/**
 * The command line of docs/protocol.md:
 * `WORKLOAD --n N --iterations K [--buffer B] [--duration-ms D] [--warmup-ms W]`, or `--help`.
 * Every option a workload uses is required: the defaults live in the harness
 * (harness/workloads.py), not here. [buffer] is read by bounded only (-1 when not
 * given), [durationMs] by sleep only (-1 when not given). [warmupMs] is the one
 * optional option, 0 (no warm-up run) when not given.
 */
data class Options(
    val workload: String,
    val n: Int,
    val iterations: Int,
    val buffer: Int,
    val durationMs: Long,
    val warmupMs: Int = 0,
) {
    /** A bad command line; its message is the one line printed before exiting with status 2. */
    class UsageException(message: String) : Exception(message, null, false, false)

    companion object {
        val WORKLOADS = listOf("sleep", "chain", "chain-await", "bounded", "skynet")

        val USAGE = """
            usage: java -cp target/classes:target/lib/* bench.MainKt WORKLOAD --n N --iterations K [--buffer B] [--duration-ms D] [--warmup-ms W]
                   java -cp target/classes:target/lib/* bench.MainKt --version

              WORKLOAD          sleep, chain, chain-await, bounded or skynet (docs/protocol.md)
              --n N             number of tasks (> 0; skynet: leaves, a power of ten)
              --iterations K    in-process iterations, the first one cold (> 0)
              --buffer B        channel capacity, required by bounded (>= 0; 0 = rendezvous)
              --duration-ms D   how long each task sleeps, required by sleep (> 0)
              --warmup-ms W     before the timed iterations, run the workload until the runs have taken W ms or number 10000 (>= 0, default 0)
        """.trimIndent()

        /** --help or -h anywhere on the command line asks for [USAGE]. */
        fun wantsHelp(args: Array<String>): Boolean = args.any { it == "--help" || it == "-h" }

        fun parse(args: Array<String>): Options {
            if (args.isEmpty()) {
                throw UsageException("missing WORKLOAD (${WORKLOADS.joinToString()})")
            }
            val workload = args[0]
            if (workload !in WORKLOADS) {
                throw UsageException("unknown workload '$workload' (${WORKLOADS.joinToString()})")
            }
            var n = -1
            var iterations = -1
            var buffer = -1
            var durationMs = -1
            var warmupMs = 0
            var i = 1
            while (i < args.size) {
                val option = args[i]
                if (!option.startsWith("--")) {
                    throw UsageException("unexpected argument '$option'")
                }
                if (i + 1 == args.size) {
                    throw UsageException("missing value for $option")
                }
                val value = args[i + 1]
                when (option) {
                    "--n" -> n = parseInt(option, value, 1)
                    "--iterations" -> iterations = parseInt(option, value, 1)
                    "--buffer" -> buffer = parseInt(option, value, 0)
                    "--duration-ms" -> durationMs = parseInt(option, value, 1)
                    "--warmup-ms" -> warmupMs = parseInt(option, value, 0)
                    else -> throw UsageException("unknown option '$option'")
                }
                i += 2
            }
            if (n < 0) throw UsageException("$workload needs --n")
            if (iterations < 0) throw UsageException("$workload needs --iterations")
            if (workload == "bounded" && buffer < 0) throw UsageException("bounded needs --buffer")
            if (workload == "sleep" && durationMs < 0) throw UsageException("sleep needs --duration-ms")
            if (workload == "skynet" && !isPowerOfTen(n)) {
                throw UsageException("skynet needs --n a power of ten (1, 10, 100, ...), got $n")
            }
            return Options(workload, n, iterations, buffer, durationMs.toLong(), warmupMs)
        }

        /** A decimal integer of ASCII digits (toInt would also take "+5" and non-ASCII digits). */
        fun parseInt(option: String, value: String, min: Int): Int {
            if (value.isEmpty() || !value.all { it in '0'..'9' }) {
                throw UsageException("$option needs an integer >= $min, got '$value'")
            }
            val parsed = value.toIntOrNull()
                ?: throw UsageException("$option $value is out of range (at most ${Int.MAX_VALUE})")
            if (parsed < min) {
                throw UsageException("$option must be >= $min, got $parsed")
            }
            return parsed
        }

        fun isPowerOfTen(n: Int): Boolean {
            if (n < 1) return false
            var x = n
            while (x % 10 == 0) x /= 10
            return x == 1
        }
    }
}
