import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The built server as the harness starts it ({@code build/jdk/bin/java -cp classes Main MODE
 * serve --port 0 --delay-ms D [--threads T]}): functional checks only, a bounded number of
 * requests to 127.0.0.1 with small delays, latencies checked from below (a style's floor)
 * except where a pool of one thread must or must not serialize requests.
 */
@Timeout(value = 120, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ServerTest {

    private static final List<String> STYLES = List.of("sync", "sync-over-async", "parallel", "async", "when-all");
    private static final int DELAY_MS = 50;
    /** Timer granularity: a wait may be measured this much short of its delay. */
    private static final long SLACK_MS = 2;

    private static final Pattern READY = Pattern.compile("\\{\"listening\": (\\d+), \"styles\": \\[\"sync\", "
            + "\"sync-over-async\", \"parallel\", \"async\", \"when-all\"\\], \"threads\": (null|\\d+), "
            + "\"runtime\": \"(JDK [^\"]+, (virtual|platform) threads)\"\\}");

    /** A started {@code serve} process and its ready line. */
    private static final class Served {
        final Process process;
        final BufferedReader stdout;
        final Path stderr;
        final int port;
        final String threads;
        final String runtime;

        Served(Process process, BufferedReader stdout, Path stderr, String readyLine) {
            this.process = process;
            this.stdout = stdout;
            this.stderr = stderr;
            Matcher m = READY.matcher(readyLine);
            assertTrue(m.matches(), "ready line " + readyLine);
            port = Integer.parseInt(m.group(1));
            threads = m.group(2);
            runtime = m.group(3);
        }

        String stderrText() throws IOException {
            return Files.readString(stderr);
        }

        /** Sends the signal, waits for the exit; returns the status and what stdout printed after the ready line. */
        Run stop(String signal) throws Exception {
            Process kill = new ProcessBuilder("kill", "-" + signal, String.valueOf(process.pid())).inheritIO().start();
            assertEquals(0, kill.waitFor());
            assertTrue(process.waitFor(30, TimeUnit.SECONDS), "still running 30 s after SIG" + signal);
            return new Run(process.exitValue(), drain(stdout), stderrText());
        }
    }

    private record Run(int status, String stdout, String stderr) {}

    private record Response(int status, Map<String, String> headers, String body, long millis) {}

    private final List<Process> started = new ArrayList<>();

    @AfterEach
    void killLeftovers() throws InterruptedException {
        for (Process p : started) {
            p.destroyForcibly();
            p.waitFor(30, TimeUnit.SECONDS);
        }
    }

    private static List<String> command(List<String> args) {
        var command = new ArrayList<>(List.of(System.getProperty("bench.java"), "-cp",
                System.getProperty("bench.classes"), "Main"));
        command.addAll(args);
        return command;
    }

    private Served start(String... args) throws Exception {
        Path stderr = Files.createTempFile("serve", ".err");
        stderr.toFile().deleteOnExit();
        Process process = new ProcessBuilder(command(List.of(args)))
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                .redirectError(stderr.toFile())
                .start();
        started.add(process);
        var stdout = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        String line = CompletableFuture.supplyAsync(() -> {
            try {
                return stdout.readLine();
            } catch (IOException e) {
                return null;
            }
        }).get(30, TimeUnit.SECONDS);
        assertNotNull(line, () -> "no ready line; stderr: " + readQuietly(stderr));
        return new Served(process, stdout, stderr, line);
    }

    private static String readQuietly(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            return e.toString();
        }
    }

    private static String drain(BufferedReader reader) throws IOException {
        var rest = new StringBuilder();
        for (int c; (c = reader.read()) >= 0; ) {
            rest.append((char) c);
        }
        return rest.toString();
    }

    /** Runs the program to its end: for the command lines that must not start a server. */
    private static Run launch(List<String> args) throws Exception {
        Process process = new ProcessBuilder(command(args))
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null"))).start();
        var err = CompletableFuture.supplyAsync(() -> readAll(process.getErrorStream()));
        String out = readAll(process.getInputStream());
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            fail("still running after 30 s: " + args);
        }
        return new Run(process.exitValue(), out, err.get(30, TimeUnit.SECONDS));
    }

    private static String readAll(InputStream in) {
        try {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            return e.toString();
        }
    }

    /** One keep-alive HTTP/1.1 connection to 127.0.0.1, requests sent one after another. */
    private static final class Connection implements AutoCloseable {
        private final Socket socket;
        private final InputStream in;
        private final OutputStream out;

        Connection(int port) throws IOException {
            socket = new Socket();
            socket.connect(new InetSocketAddress(InetAddress.getByAddress(new byte[] {127, 0, 0, 1}), port), 10_000);
            socket.setSoTimeout(30_000);
            in = socket.getInputStream();
            out = socket.getOutputStream();
        }

        Response request(String method, String path) throws IOException {
            long start = System.nanoTime();
            out.write((method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            out.flush();
            String statusLine = line();
            assertTrue(statusLine.startsWith("HTTP/1.1 "), statusLine);
            int status = Integer.parseInt(statusLine.substring(9, 12));
            var headers = new HashMap<String, String>();
            for (String header; !(header = line()).isEmpty(); ) {
                int colon = header.indexOf(':');
                headers.put(header.substring(0, colon).toLowerCase(Locale.ROOT), header.substring(colon + 1).strip());
            }
            int length = method.equals("HEAD") ? 0 : Integer.parseInt(headers.getOrDefault("content-length", "0"));
            byte[] body = in.readNBytes(length);
            assertEquals(length, body.length, "body cut short");
            long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            return new Response(status, headers, new String(body, StandardCharsets.US_ASCII), millis);
        }

        Response get(String path) throws IOException {
            return request("GET", path);
        }

        private String line() throws IOException {
            var line = new ByteArrayOutputStream();
            for (int c; (c = in.read()) != '\n'; ) {
                if (c < 0) {
                    throw new IOException("connection closed by the server");
                }
                if (c != '\r') {
                    line.write(c);
                }
            }
            return line.toString(StandardCharsets.US_ASCII);
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }

    private static long floorMs(String style) {
        return style.equals("parallel") || style.equals("when-all") ? 2L * DELAY_MS : 3L * DELAY_MS;
    }

    /** /proc/net/tcp{,6} (Linux): the socket listening on port is bound to 127.0.0.1 and nothing else. */
    private static void assertLoopbackOnly(int port) throws IOException {
        String suffix = String.format(":%04X", port);
        int found = 0;
        for (String table : List.of("/proc/net/tcp", "/proc/net/tcp6")) {
            Path path = Path.of(table);
            if (!Files.exists(path)) {
                continue;
            }
            for (String line : Files.readAllLines(path)) {
                String[] f = line.strip().split("\\s+");
                if (f.length < 4 || !f[3].equals("0A") || !f[1].endsWith(suffix)) { // 0A: LISTEN
                    continue;
                }
                assertEquals("0100007F" + suffix, f[1], "listening in " + table);
                found++;
            }
        }
        Assumptions.assumeTrue(Files.exists(Path.of("/proc/net/tcp")), "no /proc/net/tcp to check");
        assertEquals(1, found, "listening sockets on port " + port);
    }

    @ParameterizedTest
    @ValueSource(strings = {"virtual", "platform"})
    void servesEveryStyleThenStopsOnSigterm(String mode) throws Exception {
        Served s = start(mode, "serve", "--port", "0", "--delay-ms", String.valueOf(DELAY_MS));
        assertTrue(s.port > 0);
        assertEquals(mode.equals("virtual") ? "null" : "200", s.threads);
        assertTrue(s.runtime.endsWith(mode + " threads"), s.runtime);
        assertLoopbackOnly(s.port);

        try (var c = new Connection(s.port)) {
            Response health = c.get("/health");
            assertEquals(200, health.status);
            assertEquals("ok", health.body);

            // Every request below goes over this one connection: keep-alive holds throughout.
            for (String style : STYLES) {
                for (long num : new long[] {0, 7, Integer.MAX_VALUE}) {
                    String path = "/" + style + "/" + num;
                    Response r = c.get(path);
                    assertEquals(200, r.status, path);
                    assertEquals(String.valueOf(2 * num + num / 2), r.body, path);
                    assertEquals("text/plain", r.headers.get("content-type"), path);
                    assertFalse("close".equalsIgnoreCase(r.headers.get("connection")), path);
                    assertTrue(r.millis >= floorMs(style) - SLACK_MS,
                            path + " answered in " + r.millis + " ms, below its floor " + floorMs(style) + " ms");
                }
            }
            assertEquals("7", c.get("/sync/00003").body); // leading zeros are still decimal

            Map<String, Integer> errors = Map.ofEntries(Map.entry("/nope/5", 404), Map.entry("/sync", 404),
                    Map.entry("/", 404), Map.entry("/health/1", 404), Map.entry("/SYNC/5", 404), Map.entry("/sync/abc", 400), Map.entry("/async/-1", 400),
                    Map.entry("/when-all/+5", 400), Map.entry("/parallel/2147483648", 400),
                    Map.entry("/sync-over-async/", 400), Map.entry("/sync/1.5", 400),
                    Map.entry("/sync/99999999999999999999", 400), Map.entry("/sync/5/6", 400),
                    Map.entry("/sync/%31", 400), Map.entry("/sync/\u0665", 400));
            for (var e : errors.entrySet()) {
                assertEquals(e.getValue(), c.get(e.getKey()).status, e.getKey());
            }
            Response post = c.request("POST", "/sync/1");
            assertEquals(405, post.status);
            assertEquals("GET", post.headers.get("allow"));
            assertEquals(405, c.request("HEAD", "/health").status);
            assertEquals("ok", c.get("/health").body, "the connection still serves after the errors");
        }
        try (var c = new Connection(s.port)) {
            // java.net.URI reads "//5" as an authority with an empty path, so the JDK's server
            // answers this 404 itself ("No context found") and closes the connection.
            assertEquals(404, c.get("//5").status);
        }

        Run run = s.stop("TERM");
        assertEquals(0, run.status, run.stderr);
        assertEquals("", run.stdout, "stdout after the ready line");
        assertEquals("", run.stderr);
        assertThrows(ConnectException.class, () -> new Connection(s.port).close(), "the port still accepts");
    }

    /** The ready line's threads: --threads when given, else 200 for platform (the pool's default) and null for virtual. */
    @ParameterizedTest
    @ValueSource(strings = {"virtual", "platform"})
    void threadsIsReportedAndSigintExits0(String mode) throws Exception {
        Served s = start(mode, "serve", "--port", "0", "--delay-ms", "10", "--threads", "3");
        assertEquals("3", s.threads);
        try (var c = new Connection(s.port)) {
            assertEquals("25", c.get("/when-all/10").body);
            assertEquals("25", c.get("/parallel/10").body);
        }
        // A background process of a shell without job control starts with SIGINT ignored,
        // and then the JVM ignores it too: nothing to check there.
        String sigIgn = Files.readAllLines(Path.of("/proc", String.valueOf(s.process.pid()), "status")).stream()
                .filter(l -> l.startsWith("SigIgn:")).findFirst().orElse("SigIgn: 0").split("\\s+")[1];
        Assumptions.assumeTrue((Long.parseLong(sigIgn, 16) & (1L << 1)) == 0, "SIGINT is ignored in this process");
        Run run = s.stop("INT");
        assertEquals(0, run.status, run.stderr);
        assertEquals("", run.stdout);
    }

    /** Sends count requests at once, each on its own connection; returns the wall time until all are answered. */
    private static long concurrently(int port, String path, int count, String want) throws Exception {
        try (ExecutorService clients = Executors.newFixedThreadPool(count)) {
            var connections = new ArrayList<Connection>();
            for (int i = 0; i < count; i++) {
                connections.add(new Connection(port));
            }
            long start = System.nanoTime();
            var answers = new ArrayList<Future<Response>>();
            for (Connection c : connections) {
                answers.add(clients.submit(() -> c.get(path)));
            }
            for (var a : answers) {
                Response r = a.get(60, TimeUnit.SECONDS);
                assertEquals(200, r.status, path);
                assertEquals(want, r.body, path);
            }
            long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            for (Connection c : connections) {
                c.close();
            }
            return millis;
        }
    }

    /**
     * With one platform handler thread, the styles that hold the handler thread answer one
     * request at a time, and the async ones do not: the difference the article measures.
     * With virtual threads none serializes.
     */
    static Stream<Arguments> poolOfOne() {
        return Stream.of(
                Arguments.of("platform", "sync", true), Arguments.of("platform", "sync-over-async", true),
                Arguments.of("platform", "parallel", true), Arguments.of("platform", "async", false),
                Arguments.of("platform", "when-all", false),
                Arguments.of("virtual", "sync", false), Arguments.of("virtual", "sync-over-async", false),
                Arguments.of("virtual", "parallel", false), Arguments.of("virtual", "async", false),
                Arguments.of("virtual", "when-all", false));
    }

    @ParameterizedTest
    @MethodSource("poolOfOne")
    void onlyTheBlockingStylesWaitForAPlatformThread(String mode, String style, boolean serialized) throws Exception {
        int delay = 100;
        int requests = 6;
        Served s = start(mode, "serve", "--port", "0", "--delay-ms", String.valueOf(delay), "--threads", "1");
        long floor = (style.equals("parallel") || style.equals("when-all") ? 2 : 3) * delay;
        // Warm-up: the first request of a fresh JVM loads and compiles the code.
        concurrently(s.port, "/" + style + "/2", 2, "5");
        long took = concurrently(s.port, "/" + style + "/4", requests, "10");
        if (serialized) {
            assertTrue(took >= requests * floor - SLACK_MS,
                    requests + " requests in " + took + " ms: one handler thread should take " + requests * floor);
        } else {
            assertTrue(took >= floor - SLACK_MS, took + " ms");
            // Concurrent: about one floor. Half the serial time leaves room for a busy machine.
            assertTrue(took < requests * floor / 2,
                    requests + " requests in " + took + " ms: they waited for each other (one floor is " + floor + ")");
        }
        assertEquals(0, s.stop("TERM").status);
    }

    @Test
    void portInUseIsExit1WithOneLine() throws Exception {
        try (var taken = new ServerSocket(0, 1, InetAddress.getByAddress(new byte[] {127, 0, 0, 1}))) {
            for (String mode : List.of("virtual", "platform")) {
                Run run = launch(List.of(mode, "serve", "--port", String.valueOf(taken.getLocalPort()), "--delay-ms", "10"));
                assertEquals(1, run.status, run.stderr);
                assertEquals("", run.stdout);
                assertEquals(1, run.stderr.lines().count(), run.stderr);
                assertTrue(run.stderr.endsWith("\n") && run.stderr.contains("in use"), run.stderr);
            }
        }
    }

    /** Ours beyond docs/protocol.md's table, whose serve cases ProgramTest.badInput runs. */
    static Stream<Arguments> badServeArgs() {
        var cases = new ArrayList<Arguments>();
        for (String mode : List.of("virtual", "platform")) {
            for (String line : List.of("--port 0 --delay-ms -5", "--port 0 --delay-ms abc",
                    "--port 65536 --delay-ms 10", "--port 0x10 --delay-ms 10",
                    "--port 0 --delay-ms 10 --threads -2", "--port 0 --delay-ms 10 --threads",
                    "--port 0 --delay-ms 99999999999999999999999", "--port 0 --delay-ms 1073741824",
                    "--port 0 --delay-ms 10 --n 5", "--port 0 --delay-ms 10 extra", "--port +5 --delay-ms 10")) {
                var args = new ArrayList<>(List.of(mode, "serve"));
                args.addAll(List.of(line.split(" ")));
                cases.add(Arguments.of(args));
            }
        }
        cases.add(Arguments.of(List.of("serve", "--port", "0", "--delay-ms", "10"))); // no thread kind
        return cases.stream();
    }

    @ParameterizedTest
    @MethodSource("badServeArgs")
    void badArgumentsAreExit2WithOneLine(List<String> args) throws Exception {
        Run run = launch(args);
        assertEquals(2, run.status, run.stderr);
        assertEquals("", run.stdout);
        assertEquals(1, run.stderr.lines().count(), run.stderr);
        assertTrue(run.stderr.startsWith("error: ") && run.stderr.endsWith("\n"), run.stderr);
    }

    @Test
    void serveHelpIsItsUsageOnStdout() throws Exception {
        for (var args : List.of(List.of("virtual", "serve", "--help"), List.of("platform", "serve", "-h"),
                List.of("virtual", "serve", "--port", "0", "--help"), List.of("serve", "--help"))) {
            Run run = launch(args);
            assertEquals(0, run.status, args.toString());
            assertEquals("", run.stderr, args.toString());
            assertTrue(run.stdout.startsWith("usage: java -cp classes Main (virtual|platform) serve "), run.stdout);
        }
        assertTrue(launch(List.of("virtual", "--help")).stdout.contains(" serve --port P --delay-ms D"));
    }

    @Test
    void parsesTheOptions() throws Options.UsageException {
        assertEquals(new ServeOptions(0, 5, 0), ServeOptions.parse(new String[] {"--delay-ms", "5", "--port", "0"}));
        assertEquals(new ServeOptions(65535, ServeOptions.MAX_DELAY_MS, 7),
                ServeOptions.parse("--port 65535 --delay-ms 1073741823 --threads 7".split(" ")));
    }

    @Test
    void parsesNum() {
        assertEquals(0, Server.parseNum("0"));
        assertEquals(7, Server.parseNum("0000000000007"));
        assertEquals(Integer.MAX_VALUE, Server.parseNum("2147483647"));
        for (String bad : List.of("", "2147483648", "-1", "+1", "1e3", " 1", "\u0665", "99999999999999999999999")) {
            assertEquals(-1, Server.parseNum(bad), bad);
        }
    }
}
