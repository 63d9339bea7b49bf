/**
 * The command line of docs/protocol.md's HTTP server, what follows {@code MODE serve}:
 * {@code --port P --delay-ms D [--threads T]}. {@code threads} is 0 when not given.
 */
record ServeOptions(int port, int delayMs, int threads) {

    static final String USAGE = """
            usage: java -cp classes Main (virtual|platform) serve --port P --delay-ms D [--threads T]

              virtual|platform  the kind of thread that runs each request's handler
              --port P          TCP port on 127.0.0.1 (0 = a free port)
              --delay-ms D      the simulated calls take 2*D ms (double) and D ms (halve) (> 0)
              --threads T       platform: the fixed pool of handler threads (default %d), and
                                2*T threads for the parallel style's blocking calls;
                                virtual: recorded only, every request and call is a new
                                virtual thread (> 0)

            Prints one JSON line when listening, then serves GET /health and GET /STYLE/NUM
            (STYLE: sync, sync-over-async, parallel, async, when-all) until SIGTERM or SIGINT."""
            .formatted(Server.DEFAULT_PLATFORM_THREADS);

    /** 2*D milliseconds still fit 31 bits, as in the other languages. */
    static final int MAX_DELAY_MS = (1 << 30) - 1;

    static ServeOptions parse(String[] args) throws Options.UsageException {
        int port = -1;
        int delayMs = -1;
        int threads = 0;
        for (int i = 0; i < args.length; i += 2) {
            String option = args[i];
            if (!option.startsWith("--")) {
                throw new Options.UsageException("serve: unexpected argument '" + option + "'");
            }
            if (i + 1 == args.length) {
                throw new Options.UsageException("serve: missing value for " + option);
            }
            String value = args[i + 1];
            switch (option) {
                case "--port" -> port = Options.parseInt(option, value, 0, 65535);
                case "--delay-ms" -> delayMs = Options.parseInt(option, value, 1, MAX_DELAY_MS);
                case "--threads" -> threads = Options.parseInt(option, value, 1);
                default -> throw new Options.UsageException("serve: unknown option '" + option + "'");
            }
        }
        if (port < 0) {
            throw new Options.UsageException("serve needs --port");
        }
        if (delayMs < 0) {
            throw new Options.UsageException("serve needs --delay-ms");
        }
        return new ServeOptions(port, delayMs, threads);
    }
}
