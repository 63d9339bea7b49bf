import java.time.Duration;

/** The command line of docs/protocol.md: {@code WORKLOAD --n N [--buffer B] [--duration-ms D] [--iterations K]}. */
record Options(String workload, int n, int buffer, Duration duration, int iterations) {

    /** A bad command line; its message is the one line printed before exiting with status 2. */
    static final class UsageException extends Exception {
        UsageException(String message) {
            super(message);
        }
    }

    static Options parse(String[] args) throws UsageException {
        if (args.length == 0) {
            throw new UsageException("missing WORKLOAD (sleep, chain, chain-await or bounded)");
        }
        String workload = args[0];
        int iterations = switch (workload) {
            case "sleep" -> 1;
            case "chain", "chain-await" -> 2;
            case "bounded" -> 10;
            default -> throw new UsageException("unknown workload '" + workload + "'");
        };
        Integer n = null;
        int buffer = 1;
        long durationMs = 10_000;
        for (int i = 1; i < args.length; i += 2) {
            String option = args[i];
            if (i + 1 == args.length) {
                throw new UsageException(option.startsWith("--") ? "missing value for " + option
                        : "unexpected argument '" + option + "'");
            }
            String value = args[i + 1];
            switch (option) {
                case "--n" -> n = parseInt(option, value, 1);
                case "--buffer" -> buffer = parseInt(option, value, 0);
                case "--duration-ms" -> durationMs = parseInt(option, value, 1);
                case "--iterations" -> iterations = parseInt(option, value, 1);
                default -> throw new UsageException("unknown option '" + option + "'");
            }
        }
        if (n == null) {
            throw new UsageException("missing --n");
        }
        return new Options(workload, n, buffer, Duration.ofMillis(durationMs), iterations);
    }

    private static int parseInt(String option, String value, int min) throws UsageException {
        int parsed;
        try {
            parsed = Integer.parseInt(value);
        } catch (NumberFormatException e) {
            throw new UsageException(option + " needs an integer up to " + Integer.MAX_VALUE + ", got '" + value + "'");
        }
        if (parsed < min) {
            throw new UsageException(option + " must be >= " + min + ", got " + parsed);
        }
        return parsed;
    }
}
