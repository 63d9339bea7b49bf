"""The HTTP server of docs/protocol.md (`serve`, after Vaughan), for bench.py.

GET /STYLE/NUM answers 2*NUM + NUM/2 from two simulated remote calls,
"double" (2·D) and "halve" (D), written in the protocol's five styles. Two
servers (README.md, "The HTTP server"):

- `aiohttp` (the default): one aiohttp server on the selected event loop
  serves all five styles. The blocking styles block the loop, and with it
  every other connection: that is how blocking code behaves in an asyncio
  server, and it is measured as such.
- `threads`: a server of our own on the standard library: one thread waits
  on every connection with `selectors` and hands each complete request to a
  pool of at most T handler threads (gunicorn's gthread model). It serves the
  three blocking styles only: a handler thread that must write its own answer
  cannot await without holding its thread.

bench.py imports this module for `serve` only, and this module imports
aiohttp for the aiohttp server only.
"""

import asyncio
import collections
import concurrent.futures
import json
import os
import re
import selectors
import signal
import socket
import sys
import threading
import time
import urllib.parse

STYLES = ("sync", "sync-over-async", "parallel", "async", "when-all")
BLOCKING_STYLES = STYLES[:3]
BACKLOG = socket.SOMAXCONN  # the kernel caps it at net.core.somaxconn, as Go's listener uses
BAD_NUM = "NUM must be a decimal integer in [0, 2^31)"


def default_threads():
    """concurrent.futures.ThreadPoolExecutor's own default pool size."""
    return min(32, (os.cpu_count() or 1) + 4)


def parse_num(text):
    """NUM: ASCII digits only (no sign, '_' or spaces, which int() accepts),
    below 2^31; None if it is not such a number."""
    if not re.fullmatch(r"[0-9]{1,10}", text):
        return None
    num = int(text)
    return num if num < 2**31 else None


class Calculator:
    """The article's CalculationService: two remote calls simulated by waiting.

    double and halve block the calling thread (time.sleep); double_async and
    halve_async are coroutines that wait on the running loop's timer
    (asyncio.sleep) without holding a thread. `calls` is the pool that
    runs parallel's second call (ThreadPoolExecutor starts its threads as
    work arrives); `helper()` is an event loop on its own thread, started by
    the first sync-over-async request, which runs the coroutines that
    sync-over-async blocks on. Nothing is started for a style that does not
    use it, so the thread counts the harness samples are each style's own."""

    def __init__(self, delay_ms, threads, loop_factory):
        self.delay = delay_ms / 1000
        self.calls = concurrent.futures.ThreadPoolExecutor(
            max_workers=threads, thread_name_prefix="parallel")
        self.loop_factory = loop_factory
        self.helper_loop = None
        self.helper_lock = threading.Lock()

    def helper(self):
        if self.helper_loop is None:
            with self.helper_lock:
                if self.helper_loop is None:
                    self.helper_loop = start_helper_loop(self.loop_factory)
        return self.helper_loop

    def close(self):
        self.calls.shutdown(wait=False, cancel_futures=True)
        if self.helper_loop is not None:
            self.helper_loop.call_soon_threadsafe(self.helper_loop.stop)

    def double(self, num):
        time.sleep(2 * self.delay)
        return num * 2

    def halve(self, num):
        time.sleep(self.delay)
        return num // 2

    async def double_async(self, num):
        await asyncio.sleep(2 * self.delay)
        return num * 2

    async def halve_async(self, num):
        await asyncio.sleep(self.delay)
        return num // 2


# The article's controller, one function per style, as the article wrote them.

def style_sync(calc, num):
    dbl = calc.double(num)
    half = calc.halve(num)
    return dbl + half


def style_sync_over_async(calc, num):
    # C#'s DoubleAsync(num).Result: start the coroutine and block this thread
    # on its result. asyncio cannot re-enter a loop that is already running
    # on this thread (and on the aiohttp server this thread *is* the serving
    # loop, blocked here), so the coroutine runs on the helper loop's thread.
    dbl = asyncio.run_coroutine_threadsafe(calc.double_async(num), calc.helper()).result()
    half = asyncio.run_coroutine_threadsafe(calc.halve_async(num), calc.helper()).result()
    return dbl + half


def style_parallel(calc, num):
    # Parallel.Invoke(() => dbl = Double(num), () => half = Halve(num)):
    # .NET queues every action but the first to the pool, runs the first on
    # the calling thread, then waits for all (Parallel.cs, "Queue N-1 of
    # them, and run 1 synchronously"). The same here with the calls pool.
    half = calc.calls.submit(calc.halve, num)
    dbl = calc.double(num)
    return dbl + half.result()


async def style_async(calc, num):
    dbl = await calc.double_async(num)
    half = await calc.halve_async(num)
    return dbl + half


async def style_when_all(calc, num):
    results = await asyncio.gather(calc.double_async(num), calc.halve_async(num))
    return sum(results)


HANDLERS = {
    "sync": style_sync,
    "sync-over-async": style_sync_over_async,
    "parallel": style_parallel,
    "async": style_async,
    "when-all": style_when_all,
}


def start_helper_loop(loop_factory):
    """An event loop running forever on a daemon thread: the loop that
    sync-over-async's coroutines run on. Daemon, so a request in flight at
    shutdown does not hold the exit."""
    loop = loop_factory()
    started = threading.Event()

    def run():
        asyncio.set_event_loop(loop)
        loop.call_soon(started.set)
        loop.run_forever()

    threading.Thread(target=run, name="sync-over-async loop", daemon=True).start()
    started.wait()
    return loop


def ready_line(port, styles, threads, runtime):
    return json.dumps({"listening": port, "styles": list(styles),
                       "threads": threads, "runtime": runtime})


def say(message):
    """One line on stderr (line breaks folded)."""
    sys.stderr.write("bench.py: serve: " + " ".join(str(message).split()) + "\n")
    sys.stderr.flush()


def listen(port):
    """A TCP socket listening on 127.0.0.1:port (0: a free one), made here
    for both servers: handed to aiohttp as it is, it spares the loop a
    getaddrinfo (which uvloop runs on libuv's pool of 4 threads). None after
    one line on stderr if it cannot listen."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        # As asyncio's and Go's listeners do: a restarted server can bind
        # while old connections are in TIME_WAIT (a listening socket on the
        # port is still "in use").
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", port))
        sock.listen(BACKLOG)
    except OSError as exc:
        sock.close()
        say(f"cannot listen on 127.0.0.1:{port}: {exc.strerror or exc}")
        return None
    sock.setblocking(False)
    return sock


def serve(args, loop_factory, runtime):
    """Runs the server args.server asks for; returns the exit status."""
    if args.server == "threads":
        return ThreadPoolServer(args, loop_factory, runtime).run()
    # The serving loop is created by the Runner, as for the other workloads.
    with asyncio.Runner(loop_factory=loop_factory or asyncio.new_event_loop) as runner:
        return runner.run(serve_aiohttp(args, loop_factory or asyncio.new_event_loop, runtime))


# ---------------------------------------------------------------------------
# aiohttp: all five styles on one event loop.

async def serve_aiohttp(args, loop_factory, runtime):
    from aiohttp import web  # only here: the other workloads never pay for it

    sock = listen(args.port)
    if sock is None:
        return 1
    calc = Calculator(args.delay_ms, args.threads or default_threads(), loop_factory)

    def text(body, status=200):
        return web.Response(body=body.encode("ascii"), status=status, content_type="text/plain")

    async def health(request):
        return text("ok")

    stopping = threading.Event()

    def blocking(style):
        async def handler(request):
            num = parse_num(request.match_info["num"])
            if num is None:
                return text(BAD_NUM, 400)
            if stopping.is_set():
                # SIGTERM came while the loop was blocked: handlers already
                # scheduled behind the blocked one must not block it again
                # (each for 3·D) before the loop can act on the signal.
                resp = text("shutting down", 503)
                resp.force_close()
                return resp
            # A plain call: the loop's thread runs the whole style, and no
            # other connection is served until it returns.
            return text(str(style(calc, num)))
        return handler

    def nonblocking(style):
        async def handler(request):
            num = parse_num(request.match_info["num"])
            if num is None:
                return text(BAD_NUM, 400)
            return text(str(await style(calc, num)))
        return handler

    app = web.Application()
    # GET only (allow_head=False): another method is aiohttp's 405, as in Go.
    app.router.add_get("/health", health, allow_head=False)
    for name in STYLES:
        handler = HANDLERS[name]
        wrap = nonblocking if asyncio.iscoroutinefunction(handler) else blocking
        # {num:.*}: NUM is everything after the style's slash, so "/sync/"
        # and "/sync/1/2" reach the handler and get 400; an unknown style
        # (or "/health/1", "/sync") matches no route: aiohttp's 404.
        app.router.add_get(f"/{name}/{{num:.*}}", wrap(handler), allow_head=False)

    # At SIGTERM, requests in flight are cancelled after 10 ms (0 would mean
    # no limit), close to Go's http.Server.Close, which drops them at once;
    # access_log=None: no per-request log.
    runner = web.AppRunner(app, handle_signals=False, access_log=None, shutdown_timeout=0.01)
    await runner.setup()
    await web.SockSite(runner, sock, backlog=BACKLOG).start()
    port = sock.getsockname()[1]

    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
        # The loop's own handler (a Python-level one that lets the wakeup fd
        # carry the signal to the loop) runs at once even while a blocking
        # style holds the loop; ours, wrapped around it, also raises the
        # flag that the blocking handlers check.
        loop_handler = signal.getsignal(sig)

        def on_signal(signum, frame, loop_handler=loop_handler):
            stopping.set()
            if callable(loop_handler):
                loop_handler(signum, frame)

        signal.signal(sig, on_signal)
    try:
        print(ready_line(port, STYLES, args.threads, runtime), flush=True)
        await stop.wait()
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(sig)
        await runner.cleanup()  # closes the listener and every connection
        calc.close()
    return 0


# ---------------------------------------------------------------------------
# threads: the blocking styles on a pool of at most T handler threads.

class Pool:
    """At most `size` threads running submitted callables in FIFO order,
    each started when work finds no idle thread and then kept: a fixed-size
    pool, as ThreadPoolExecutor's, but of daemon threads (the executor's are
    joined at exit, which would hold the exit until every request in flight
    had slept its 3·D)."""

    def __init__(self, size, name):
        self.size = size
        self.name = name
        self.work = collections.deque()
        self.ready = threading.Semaphore(0)  # one release per queued item
        self.idle = threading.Semaphore(0)   # one release per idle thread
        self.threads = 0

    def submit(self, fn, *args):
        self.work.append((fn, args))
        self.ready.release()
        if not self.idle.acquire(blocking=False) and self.threads < self.size:
            thread = threading.Thread(target=self._worker, name=f"{self.name}-{self.threads + 1}",
                                      daemon=True)
            try:
                thread.start()
            except RuntimeError as exc:  # the system's thread limit: queue on the threads there are
                say(f"pool of {self.size}: cannot start thread {self.threads + 1}: {exc}")
                self.size = max(self.threads, 1)
                return
            self.threads += 1  # only the serving thread submits

    def _worker(self):
        while True:
            self.ready.acquire()
            fn, args = self.work.popleft()
            try:
                fn(*args)
            except Exception as exc:  # never lose a pool thread to a bug
                say(f"{type(exc).__name__}: {exc}")
            self.idle.release()


REASONS = {200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed",
           413: "Content Too Large", 431: "Request Header Fields Too Large",
           500: "Internal Server Error", 501: "Not Implemented",
           505: "HTTP Version Not Supported"}
MAX_HEAD = 64 * 1024
MAX_BODY = 1024 * 1024


class Reject(Exception):
    """A request that cannot be framed: answer with this status and close."""

    def __init__(self, status):
        super().__init__(status)
        self.status = status


class Request:
    __slots__ = ("method", "target", "version", "keep_alive")

    def __init__(self, method, target, version, keep_alive):
        self.method, self.target, self.version, self.keep_alive = method, target, version, keep_alive


def take_request(buf):
    """The first complete request in buf (a bytearray), removed from it; None
    while it is incomplete. Raises Reject if it cannot be a request."""
    while buf[:2] == b"\r\n":  # RFC 9112 2.2: ignore empty lines before a request
        del buf[:2]
    end = buf.find(b"\r\n\r\n")
    if end < 0:
        if len(buf) > MAX_HEAD:
            raise Reject(431)
        return None
    lines = bytes(buf[:end]).decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[0] or not parts[1]:
        raise Reject(400)
    method, target, version = parts
    if version not in ("HTTP/1.1", "HTTP/1.0"):
        raise Reject(505 if version.startswith("HTTP/") else 400)
    tokens, length = set(), 0
    for line in lines[1:]:
        name, colon, value = line.partition(":")
        if not colon or not name or name != name.strip():
            raise Reject(400)
        name, value = name.lower(), value.strip()
        if name == "connection":
            tokens.update(t.strip().lower() for t in value.split(","))
        elif name == "content-length":
            if not re.fullmatch(r"[0-9]{1,12}", value):
                raise Reject(400)
            length = int(value)
            if length > MAX_BODY:
                raise Reject(413)
        elif name == "transfer-encoding":
            raise Reject(501)  # no request here needs a chunked body
    total = end + 4 + length
    if len(buf) < total:
        return None
    del buf[:total]  # the body, if any, is read and ignored
    if version == "HTTP/1.1":
        keep_alive = "close" not in tokens
    else:
        keep_alive = "keep-alive" in tokens
    return Request(method, target, version, keep_alive)


_date = [0, ""]


def http_date():
    now = int(time.time())
    if _date[0] != now:
        _date[:] = [now, time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(now))]
    return _date[1]


def response(status, body, keep_alive, version="HTTP/1.1"):
    head = (f"HTTP/1.1 {status} {REASONS[status]}\r\nDate: {http_date()}\r\n"
            f"Content-Type: text/plain\r\nContent-Length: {len(body)}\r\n")
    if status == 405:
        head += "Allow: GET\r\n"
    if not keep_alive:
        head += "Connection: close\r\n"
    elif version == "HTTP/1.0":
        head += "Connection: keep-alive\r\n"
    return (head + "\r\n" + body).encode("ascii")


class Connection:
    __slots__ = ("sock", "buf", "watched")

    def __init__(self, sock):
        self.sock = sock
        self.buf = bytearray()
        self.watched = False  # registered with the selector


class ThreadPoolServer:
    """One serving thread (the main one) accepts connections and reads
    requests with `selectors`; each complete request goes to the handler
    pool, whose thread runs the style, writes the answer and hands a
    kept-alive connection back to the serving thread. So a pool thread is
    held per request, not per connection: idle keep-alive connections wait
    in the selector, and requests beyond T wait in the pool's queue."""

    def __init__(self, args, loop_factory, runtime):
        self.args = args
        self.threads = args.threads or default_threads()
        self.runtime = runtime
        self.loop_factory = loop_factory or asyncio.new_event_loop
        self.styles = {name: HANDLERS[name] for name in BLOCKING_STYLES}
        self.returned = collections.deque()  # connections handed back by the pool
        self.connections = set()
        self.stopping = False

    def run(self):
        listener = listen(self.args.port)
        if listener is None:
            return 1
        self.listener = listener
        self.wake_r, self.wake_w = socket.socketpair()
        self.wake_r.setblocking(False)
        self.wake_w.setblocking(False)
        self.calc = Calculator(self.args.delay_ms, self.threads, self.loop_factory)
        self.pool = Pool(self.threads, "handler")
        self.selector = selectors.DefaultSelector()
        self.selector.register(listener, selectors.EVENT_READ, "listener")
        self.selector.register(self.wake_r, selectors.EVENT_READ, "wake")

        def on_signal(signum, frame):
            self.stopping = True

        # The C-level handler writes to wake_w, so select() returns at once.
        signal.set_wakeup_fd(self.wake_w.fileno(), warn_on_full_buffer=False)
        signal.signal(signal.SIGTERM, on_signal)
        signal.signal(signal.SIGINT, on_signal)

        port = listener.getsockname()[1]
        print(ready_line(port, BLOCKING_STYLES, self.args.threads, self.runtime), flush=True)
        try:
            self.serve_forever()
        finally:
            self.close()
        return 0

    def serve_forever(self):
        while not self.stopping:
            for key, _ in self.selector.select():
                if key.data == "listener":
                    self.accept()
                elif key.data == "wake":
                    try:
                        while self.wake_r.recv(4096):
                            pass
                    except (BlockingIOError, InterruptedError):
                        pass
                else:
                    self.read(key.data)
            while self.returned:
                self.next_request(self.returned.popleft())

    def close(self):
        """Stop accepting and drop every connection, requests in flight too
        (their handlers' writes then fail); the pool's daemon threads end
        with the process."""
        self.selector.close()
        self.listener.close()
        for conn in list(self.connections):
            try:
                conn.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self.calc.close()

    def accept(self):
        while True:
            try:
                sock, _ = self.listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:  # e.g. out of file descriptors: retried on the next wakeup
                say(f"accept: {exc}")
                return
            sock.setblocking(False)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            conn = Connection(sock)
            self.connections.add(conn)
            self.watch(conn)

    def watch(self, conn):
        if not conn.watched:
            self.selector.register(conn.sock, selectors.EVENT_READ, conn)
            conn.watched = True

    def unwatch(self, conn):
        if conn.watched:
            self.selector.unregister(conn.sock)
            conn.watched = False

    def drop(self, conn):
        self.unwatch(conn)
        self.connections.discard(conn)
        conn.sock.close()

    def read(self, conn):
        try:
            data = conn.sock.recv(65536)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if not data:
            self.drop(conn)
            return
        conn.buf += data
        self.next_request(conn)

    def next_request(self, conn):
        """Dispatch conn's next complete request to the pool, or wait for
        more bytes in the selector."""
        if conn.sock.fileno() < 0:
            return
        try:
            request = take_request(conn.buf)
        except Reject as reject:
            try:
                conn.sock.send(response(reject.status, REASONS[reject.status], False))
            except OSError:
                pass
            self.drop(conn)
            return
        if request is None:
            self.watch(conn)
        else:
            self.unwatch(conn)  # the handler owns the socket until it hands it back
            self.pool.submit(self.handle, conn, request)

    def handle(self, conn, request):
        """On a pool thread: run the request, write the answer, hand the
        connection back (or close it)."""
        try:
            status, body = self.route(request)
        except Exception as exc:  # a bug, or a pool shut down at exit
            if not self.stopping:
                say(f"{type(exc).__name__}: {exc}")
            status, body = 500, "internal error"
        keep_alive = request.keep_alive and status != 500
        try:
            send_all(conn.sock, response(status, body, keep_alive, request.version))
        except OSError:
            keep_alive = False
        if keep_alive and not self.stopping:
            self.returned.append(conn)
            try:
                self.wake_w.send(b"\0")
            except OSError:  # full: the serving thread has a wakeup pending anyway
                pass
        else:
            self.connections.discard(conn)
            conn.sock.close()

    def route(self, request):
        if request.method != "GET":
            return 405, "only GET"
        path = request.target.partition("?")[0]
        if "%" in path:
            path = urllib.parse.unquote(path)
        if path == "/health":
            return 200, "ok"
        style, slash, num = path[1:].partition("/") if path.startswith("/") else ("", "", "")
        handler = self.styles.get(style) if slash else None
        if handler is None:
            return 404, "unknown style"
        num = parse_num(num)
        if num is None:
            return 400, BAD_NUM
        return 200, str(handler(self.calc, num))


def send_all(sock, data):
    """Write data on a non-blocking socket: one send() as a rule; should the
    client not be reading, wait for it (30 s at most) in blocking mode."""
    try:
        sent = sock.send(data)
    except (BlockingIOError, InterruptedError):
        sent = 0
    if sent < len(data):
        sock.settimeout(30)
        try:
            sock.sendall(data[sent:])
        finally:
            sock.setblocking(False)
