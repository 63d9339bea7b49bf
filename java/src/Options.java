import java.time.Duration;
import java.util.Arrays;

/**
 * The command line of docs/protocol.md:
 * {@code WORKLOAD --n N --iterations K [--buffer B] [--duration-ms D] [--warmup-ms W]}, or {@code --help}.
 * Every option that a workload uses is required: the defaults live in the harness
 * (harness/workloads.py), not here. The one optional option, --warmup-ms, defaults to 0 (no warm-up).
 */
record Options(String workload, int n, int iterations, int buffer, Duration duration, int warmupMs) {
    // Only bounded reads buffer (-1 when not given), only sleep reads duration (null for the others).

    static final String USAGE = """
            usage: java -cp classes Main (virtual|platform) WORKLOAD --n N --iterations K [--buffer B] [--duration-ms D] [--warmup-ms W]
                   java -cp classes Main (virtual|platform) serve --port P --delay-ms D [--threads T]
                   java -cp classes Main (virtual|platform) --version

              virtual|platform  the kind of thread every task runs on
              WORKLOAD          sleep, chain, chain-await, bounded or skynet (virtual only) (docs/protocol.md)
              --n N             number of tasks (> 0; skynet: leaves, a power of ten)
              --iterations K    in-process iterations, the first one cold (> 0)
              --buffer B        channel capacity, required by bounded (>= 0; 0 = rendezvous)
              --duration-ms D   how long each task sleeps, required by sleep (> 0)
              --warmup-ms W     before the timed iterations, run the workload until the runs have taken W ms or number 10000 (>= 0, default 0)
              serve             the HTTP server: java -cp classes Main virtual serve --help""";

    /** A bad command line; its message is the one line printed before exiting with status 2. */
    static final class UsageException extends Exception {
        UsageException(String message) {
            super(message, null, false, false);
        }
    }

    /** --help or -h anywhere on the command line asks for {@link #USAGE}. */
    static boolean wantsHelp(String[] args) {
        return Arrays.stream(args).anyMatch(a -> a.equals("--help") || a.equals("-h"));
    }

    static Options parse(String[] args) throws UsageException {
        if (args.length == 0) {
            throw new UsageException("missing WORKLOAD (sleep, chain, chain-await, bounded, skynet or serve)");
        }
        String workload = args[0];
        boolean usesBuffer = workload.equals("bounded");
        boolean usesDuration = workload.equals("sleep");
        if (!usesBuffer && !usesDuration && !workload.equals("chain") && !workload.equals("chain-await")
                && !workload.equals("skynet")) {
            throw new UsageException("unknown workload '" + workload
                    + "' (sleep, chain, chain-await, bounded, skynet or serve)");
        }
        int n = -1;
        int iterations = -1;
        int buffer = -1;
        int durationMs = -1;
        int warmupMs = 0;
        for (int i = 1; i < args.length; i += 2) {
            String option = args[i];
            if (!option.startsWith("--")) {
                throw new UsageException("unexpected argument '" + option + "'");
            }
            if (i + 1 == args.length) {
                throw new UsageException("missing value for " + option);
            }
            String value = args[i + 1];
            switch (option) {
                case "--n" -> n = parseInt(option, value, 1);
                case "--iterations" -> iterations = parseInt(option, value, 1);
                case "--buffer" -> buffer = parseInt(option, value, 0);
                case "--duration-ms" -> durationMs = parseInt(option, value, 1);
                case "--warmup-ms" -> warmupMs = parseInt(option, value, 0);
                default -> throw new UsageException("unknown option '" + option + "'");
            }
        }
        if (n < 0) {
            throw new UsageException(workload + " needs --n");
        }
        if (iterations < 0) {
            throw new UsageException(workload + " needs --iterations");
        }
        if (usesBuffer && buffer < 0) {
            throw new UsageException(workload + " needs --buffer");
        }
        if (usesDuration && durationMs < 0) {
            throw new UsageException(workload + " needs --duration-ms");
        }
        if (workload.equals("skynet") && !isPowerOfTen(n)) {
            throw new UsageException("skynet needs N a power of ten (1, 10, 100, ...): 10 children a node, got " + n);
        }
        return new Options(workload, n, iterations, buffer, usesDuration ? Duration.ofMillis(durationMs) : null,
                warmupMs);
    }

    static boolean isPowerOfTen(int n) {
        while (n % 10 == 0) {
            n /= 10;
        }
        return n == 1;
    }

    /** A decimal integer of ASCII digits (Integer.parseInt would also take "+5" and non-ASCII digits). */
    static int parseInt(String option, String value, int min) throws UsageException {
        if (value.isEmpty() || !value.chars().allMatch(c -> c >= '0' && c <= '9')) {
            throw new UsageException(option + " needs an integer >= " + min + ", got '" + value + "'");
        }
        int parsed;
        try {
            parsed = Integer.parseInt(value);
        } catch (NumberFormatException e) {
            throw new UsageException(option + " " + value + " is out of range (at most " + Integer.MAX_VALUE + ")");
        }
        if (parsed < min) {
            throw new UsageException(option + " must be >= " + min + ", got " + parsed);
        }
        return parsed;
    }

    /** {@link #parseInt(String, String, int)} with an upper bound too. */
    static int parseInt(String option, String value, int min, int max) throws UsageException {
        int parsed = parseInt(option, value, min);
        if (parsed > max) {
            throw new UsageException(option + " must be <= " + max + ", got " + parsed);
        }
        return parsed;
    }
}
