import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * docs/protocol.md's HTTP server ({@code serve}, after Vaughan, docs/articles.md):
 * {@code java -cp classes Main MODE serve --port P --delay-ms D [--threads T]}.
 * The JDK's own {@code com.sun.net.httpserver.HttpServer} on 127.0.0.1; each request's
 * handler runs on a fixed pool of T platform threads ({@code platform}, T = 200 by default)
 * or on a new virtual thread ({@code virtual}). GET /STYLE/NUM answers 2*NUM + NUM/2 from
 * two simulated remote calls, "double" (2·D) and "halve" (D), in five styles (README.md).
 */
final class Server {

    static final List<String> STYLES = List.of("sync", "sync-over-async", "parallel", "async", "when-all");

    /** The handler pool without --threads: Tomcat's and Jetty's default maximum, 200 threads. */
    static final int DEFAULT_PLATFORM_THREADS = 200;

    /** The largest listen backlog: Linux caps it at net.core.somaxconn, the value Go's listener asks for. */
    private static final int BACKLOG = Integer.MAX_VALUE;

    /** The article's CalculationService: two remote calls, simulated by waiting. */
    static final class CalculationService {
        private final Duration doubleDelay;
        private final Duration halveDelay;
        // The non-blocking calls' timers: a task given to one of these runs once the delay
        // has passed (on JDK 25 ForkJoinPool's delay scheduler holds the timer, then the
        // common pool runs the task); no thread waits in between.
        private final Executor afterDoubleDelay;
        private final Executor afterHalveDelay;

        CalculationService(int delayMs) {
            doubleDelay = Duration.ofMillis(2L * delayMs);
            halveDelay = Duration.ofMillis(delayMs);
            afterDoubleDelay = CompletableFuture.delayedExecutor(2L * delayMs, TimeUnit.MILLISECONDS);
            afterHalveDelay = CompletableFuture.delayedExecutor(delayMs, TimeUnit.MILLISECONDS);
        }

        /** Blocks the calling thread for 2·D (a virtual thread unmounts from its carrier). */
        long doubleNum(long num) throws InterruptedException {
            Thread.sleep(doubleDelay);
            return num * 2;
        }

        /** Blocks the calling thread for D. */
        long halveNum(long num) throws InterruptedException {
            Thread.sleep(halveDelay);
            return num / 2;
        }

        /** Returns at once a future completed 2·D later: Java's {@code Task<long>}. */
        CompletableFuture<Long> doubleNumAsync(long num) {
            return CompletableFuture.supplyAsync(() -> num * 2, afterDoubleDelay);
        }

        /** Returns at once a future completed D later. */
        CompletableFuture<Long> halveNumAsync(long num) {
            return CompletableFuture.supplyAsync(() -> num / 2, afterHalveDelay);
        }
    }

    private final CalculationService service;
    /** Runs each request's handler, and the async styles' responses once their result is there. */
    private final ExecutorService handlers;
    /** Runs the parallel style's two blocking calls. */
    private final ExecutorService calls;

    private Server(CalculationService service, ExecutorService handlers, ExecutorService calls) {
        this.service = service;
        this.handlers = handlers;
        this.calls = calls;
    }

    // The five styles, as the article's controller writes them.

    /** sync: double, then halve, each blocking the handler's thread. */
    long sync(long num) throws InterruptedException {
        long dbl = service.doubleNum(num);
        long half = service.halveNum(num);
        return dbl + half;
    }

    /** sync-over-async: start the non-blocking double and block on its result, then the same for halve. */
    long syncOverAsync(long num) {
        long dbl = service.doubleNumAsync(num).join();
        long half = service.halveNumAsync(num).join();
        return dbl + half;
    }

    /** parallel: both blocking calls on two threads of {@link #calls} at once, blocking until both end. */
    long parallel(long num) throws InterruptedException, ExecutionException {
        List<Future<Long>> both = calls.invokeAll(List.of(() -> service.doubleNum(num), () -> service.halveNum(num)));
        return both.get(0).get() + both.get(1).get();
    }

    /** async: double, then (once it is done) halve; nothing blocks, the handler has returned long before. */
    CompletableFuture<Long> async(long num) {
        return service.doubleNumAsync(num)
                .thenCompose(dbl -> service.halveNumAsync(num).thenApply(half -> dbl + half));
    }

    /** when-all: start both non-blocking calls, then combine their results when both are done. */
    CompletableFuture<Long> whenAll(long num) {
        CompletableFuture<Long> dbl = service.doubleNumAsync(num);
        CompletableFuture<Long> half = service.halveNumAsync(num);
        return dbl.thenCombine(half, Long::sum);
    }

    /**
     * Runs on a thread of {@link #handlers}. The sync styles answer before returning;
     * the async ones return at once, and the response is written on a thread of
     * {@link #handlers} when their future completes.
     */
    private void handle(HttpExchange exchange) {
        if (!exchange.getRequestMethod().equals("GET")) {
            exchange.getResponseHeaders().set("Allow", "GET");
            respond(exchange, 405, "only GET");
            return;
        }
        String path = exchange.getRequestURI().getRawPath();
        if ("/health".equals(path)) {
            respond(exchange, 200, "ok");
            return;
        }
        // /STYLE/NUM: STYLE one of STYLES, NUM everything after the second slash.
        int slash = path == null || path.length() < 2 ? -1 : path.indexOf('/', 1);
        String style = slash < 0 ? null : path.substring(1, slash);
        if (style == null || !STYLES.contains(style)) {
            respond(exchange, 404, "unknown style");
            return;
        }
        long num = parseNum(path.substring(slash + 1));
        if (num < 0) {
            respond(exchange, 400, "NUM must be a decimal integer in [0, 2^31)");
            return;
        }
        try {
            switch (style) {
                case "sync" -> respond(exchange, 200, Long.toString(sync(num)));
                case "sync-over-async" -> respond(exchange, 200, Long.toString(syncOverAsync(num)));
                case "parallel" -> respond(exchange, 200, Long.toString(parallel(num)));
                case "async" -> respondWhenDone(exchange, async(num));
                case "when-all" -> respondWhenDone(exchange, whenAll(num));
                default -> throw new AssertionError(style);
            }
        } catch (InterruptedException | ExecutionException e) {
            respond(exchange, 500, e.toString());
        }
    }

    private void respondWhenDone(HttpExchange exchange, CompletableFuture<Long> result) {
        result.whenCompleteAsync((value, error) -> {
            if (error == null) {
                respond(exchange, 200, Long.toString(value));
            } else {
                respond(exchange, 500, error.toString());
            }
        }, handlers);
    }

    /** NUM: ASCII digits only (no sign; leading zeros allowed), below 2^31; -1 when it is not. */
    static long parseNum(String text) {
        if (text.isEmpty()) {
            return -1;
        }
        long value = 0;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c < '0' || c > '9') {
                return -1;
            }
            value = value * 10 + (c - '0');
            if (value > Integer.MAX_VALUE) {
                return -1;
            }
        }
        return value;
    }

    /** Writes the whole response with its length (the connection stays open for the next request). */
    private static void respond(HttpExchange exchange, int status, String body) {
        byte[] bytes = body.getBytes(StandardCharsets.US_ASCII);
        try {
            exchange.getResponseHeaders().set("Content-Type", "text/plain");
            if (exchange.getRequestMethod().equals("HEAD")) {
                exchange.sendResponseHeaders(status, -1);
            } else {
                exchange.sendResponseHeaders(status, bytes.length);
                exchange.getResponseBody().write(bytes);
            }
        } catch (IOException e) {
            // The client is gone; closing the exchange closes its connection.
        } finally {
            exchange.close();
        }
    }

    /** The exit status the shutdown hook ends the process with: 0 after SIGTERM or SIGINT. */
    private static volatile int exitStatus = 0;

    /** Serves until SIGTERM or SIGINT, then exits 0; a port that cannot be bound exits 1. */
    static void serve(String mode, ServeOptions options, String runtime) {
        boolean virtual = mode.equals("virtual");
        int threads = options.threads() > 0 ? options.threads() : virtual ? 0 : DEFAULT_PLATFORM_THREADS;
        ExecutorService handlers;
        ExecutorService calls;
        if (virtual) {
            // A new virtual thread for every request, and for each of parallel's calls.
            handlers = Executors.newVirtualThreadPerTaskExecutor();
            calls = handlers;
        } else {
            // T handler threads (created as requests come, then kept), and 2T for parallel's
            // calls, so that every handler can always have both of its calls running at once.
            handlers = Executors.newFixedThreadPool(threads);
            calls = Executors.newFixedThreadPool((int) Math.min(2L * threads, Integer.MAX_VALUE));
        }
        // The JDK server closes a keep-alive connection that finishes a response while 200
        // others are idle (sun.net.httpserver.maxIdleConnections); under a load of many
        // connections that drops connections the client meant to reuse. No cap here, as in
        // Go's net/http, unless the property was given (-D). Read when the server is created.
        if (System.getProperty("sun.net.httpserver.maxIdleConnections") == null) {
            System.setProperty("sun.net.httpserver.maxIdleConnections", String.valueOf(Integer.MAX_VALUE));
        }

        // An IPv4 socket: by default the JDK opens IPv6 sockets even for an IPv4 address,
        // and 127.0.0.1 then listens as ::ffff:127.0.0.1 (in /proc/net/tcp6). Read when
        // the JDK's networking initializes, which nothing has done yet.
        if (System.getProperty("java.net.preferIPv4Stack") == null) {
            System.setProperty("java.net.preferIPv4Stack", "true");
        }

        var server = new Server(new CalculationService(options.delayMs()), handlers, calls);
        HttpServer http;
        try {
            var loopback = InetAddress.getByAddress(new byte[] {127, 0, 0, 1});
            http = HttpServer.create(new InetSocketAddress(loopback, options.port()), BACKLOG);
        } catch (IOException e) {
            System.err.println("error: serve: cannot listen on 127.0.0.1:" + options.port() + ": " + e.getMessage());
            System.exit(1);
            return;
        }
        http.createContext("/", server::handle);
        http.setExecutor(handlers);

        // SIGTERM and SIGINT run the shutdown hooks (and would end the process with
        // 128 + the signal). Ours closes the listener and every connection, then ends
        // the process at once with exitStatus; System.exit would block inside a hook.
        // Requests in flight are dropped, as in Go's server.
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            http.stop(0);
            System.out.flush();
            Runtime.getRuntime().halt(exitStatus);
        }, "serve-shutdown"));
        http.start();

        var line = new StringBuilder().append("{\"listening\": ").append(http.getAddress().getPort())
                .append(", \"styles\": [");
        for (int i = 0; i < STYLES.size(); i++) {
            line.append(i == 0 ? "\"" : ", \"").append(STYLES.get(i)).append('"');
        }
        line.append("], \"threads\": ").append(threads > 0 ? String.valueOf(threads) : "null")
                .append(", \"runtime\": \"").append(runtime.replace("\\", "\\\\").replace("\"", "\\\""))
                .append("\"}");
        System.out.println(line);
        System.out.flush();
        if (System.out.checkError()) {
            System.err.println("error: serve: cannot write the ready line to stdout");
            exitStatus = 1;
            System.exit(1);
        }
        // main returns; the server's dispatcher thread keeps the process alive.
    }
}
