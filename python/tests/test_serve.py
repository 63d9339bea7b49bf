"""`bench.py serve`, run as the harness runs it: a child process on port 0,
read its ready line, send a handful of requests over loopback, stop it with a
signal. Functional only: small delays, timing checked from below (a style's
floor) and, for the two concurrency findings, against full serialization
with a wide margin."""

import http.client
import json
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench.py"
LOOPS = ["asyncio", "uvloop"]
SERVERS = ["aiohttp", "threads"]
ALL_STYLES = ["sync", "sync-over-async", "parallel", "async", "when-all"]
STYLES = {"aiohttp": ALL_STYLES, "threads": ALL_STYLES[:3]}
FLOOR = {"sync": 3, "sync-over-async": 3, "parallel": 2, "async": 3, "when-all": 2}
# Event-loop timers waited one after the other, per style: uvloop's (libuv's)
# timers count in whole milliseconds from the loop's cached time and can fire
# up to 1 ms early (README.md), so a uvloop answer may be that much under the
# floor per such timer. time.sleep and asyncio's own loop are never early.
LOOP_TIMERS = {"sync": 0, "sync-over-async": 2, "parallel": 0, "async": 2, "when-all": 1}
D = 50  # ms


def allowance(loop, style):
    return LOOP_TIMERS[style] * 0.001 if loop == "uvloop" else 0.0


class Server:
    """A `bench.py serve` child process, ready to answer."""

    def __init__(self, *args, loop="asyncio", server="aiohttp", delay_ms=D):
        argv = [sys.executable, str(BENCH), "--loop", loop, "--server", server, "serve",
                "--port", "0", "--delay-ms", str(delay_ms), *map(str, args)]
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        ready, _, _ = select.select([self.proc.stdout], [], [], 30)
        line = self.proc.stdout.readline() if ready else ""
        if not line.endswith("\n"):
            self.proc.kill()
            pytest.fail(f"no ready line within 30 s: {line!r}, stderr {self.proc.communicate()[1]!r}")
        self.ready = json.loads(line)
        self.port = self.ready["listening"]

    def connect(self):
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)

    def stop(self, sig=signal.SIGTERM):
        """(exit status, what stdout printed after the ready line, stderr)."""
        self.proc.send_signal(sig)
        try:
            out, err = self.proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            pytest.fail(f"still running 30 s after {sig!r}")
        return self.proc.returncode, out, err

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.communicate()


@pytest.fixture
def start():
    servers = []

    def start(*args, **kwargs):
        servers.append(Server(*args, **kwargs))
        return servers[-1]

    yield start
    for s in servers:
        s.close()


def get(conn, path):
    """(status, body, Content-Type, seconds) of one GET on conn."""
    began = time.perf_counter()
    conn.request("GET", path)
    resp = conn.getresponse()
    body = resp.read().decode()
    return resp.status, body, resp.getheader("Content-Type"), time.perf_counter() - began


def timed_get(port, path):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        return get(conn, path)
    finally:
        conn.close()


def concurrently(port, paths, gap=0.0):
    """GET every path at once (each on its own connection, `gap` seconds
    apart); returns each one's (status, body, _, seconds since the first
    was sent)."""
    began = time.perf_counter()
    results = [None] * len(paths)

    def one(i):
        time.sleep(i * gap)
        status, body, ctype, _ = timed_get(port, paths[i])
        results[i] = (status, body, ctype, time.perf_counter() - began)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(paths))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert all(r is not None for r in results), results
    return results


def listening_addresses(port):
    """The local addresses listening on port, from /proc/net/tcp{,6} (Linux)."""
    found = []
    suffix = f":{port:04X}"
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as f:
            for line in f.read().splitlines()[1:]:
                fields = line.split()
                if len(fields) > 3 and fields[3] == "0A" and fields[1].endswith(suffix):
                    found.append(fields[1])
    return found


@pytest.mark.parametrize("loop", LOOPS)
@pytest.mark.parametrize("server", SERVERS)
def test_serves_every_style_at_or_above_its_floor(start, loop, server):
    s = start(loop=loop, server=server)
    ready = s.ready
    assert set(ready) == {"listening", "styles", "threads", "runtime"}
    assert ready["styles"] == STYLES[server]
    assert ready["threads"] is None
    assert ready["runtime"].startswith("CPython ")
    assert ("uvloop" in ready["runtime"]) == (loop == "uvloop")
    assert ("aiohttp" in ready["runtime"]) == (server == "aiohttp")
    assert listening_addresses(s.port) == [f"0100007F:{s.port:04X}"]

    conn = s.connect()
    assert get(conn, "/health")[:3] == (200, "ok", "text/plain")
    kept = conn.sock
    for style in STYLES[server]:
        for num in (0, 7, 2**31 - 1):
            status, body, ctype, took = get(conn, f"/{style}/{num}")
            assert (status, body, ctype) == (200, str(2 * num + num // 2), "text/plain"), style
            floor = FLOOR[style] * D / 1000 - allowance(loop, style)
            assert took >= floor, f"{style}/{num} answered in {took:.4f} s, under its floor {floor} s"
    assert conn.sock is kept, "the keep-alive connection was not reused"

    status_of = {
        "/nope/5": 404, "/sync": 404, "/": 404, "/health/1": 404, "/SYNC/1": 404,
        "/sync/abc": 400, "/sync/-1": 400, "/parallel/+5": 400, "/sync/2147483648": 400,
        "/sync-over-async/": 400, "/sync/1.5": 400, "/sync/99999999999999999999": 400,
        "/sync/1/2": 400, "/sync/%D9%A5": 400,  # ARABIC-INDIC FIVE
    }
    if server == "threads":
        status_of.update({"/async/5": 404, "/when-all/5": 404})
    for path, want in status_of.items():
        status, body, _, _ = get(conn, path)
        assert status == want, (path, status, body)

    conn.request("POST", "/sync/1", body=b"x")
    resp = conn.getresponse()
    resp.read()
    assert resp.status == 405
    conn.close()

    code, rest, err = s.stop(signal.SIGTERM)
    assert (code, rest) == (0, ""), err
    assert "Traceback" not in err
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", s.port), timeout=2).close()


@pytest.mark.parametrize("server", SERVERS)
def test_threads_reported_and_sigint_exits_0(start, server):
    s = start("--threads", 3, server=server)
    assert s.ready["threads"] == 3
    assert timed_get(s.port, "/parallel/10")[:2] == (200, "25")
    code, rest, err = s.stop(signal.SIGINT)
    assert (code, rest) == (0, ""), err
    assert "Traceback" not in err


@pytest.mark.parametrize("loop", LOOPS)
@pytest.mark.parametrize("server", SERVERS)
def test_sigterm_during_a_blocking_request_exits_0(start, loop, server):
    # sync blocks the aiohttp loop (the signal waits for it, at most 3·D) or
    # a pool thread (dropped at once).
    s = start(loop=loop, server=server, delay_ms=300)
    pending = threading.Thread(target=lambda: _ignore_errors(timed_get, s.port, "/sync/1"))
    pending.start()
    time.sleep(0.3)
    began = time.perf_counter()
    code, rest, err = s.stop(signal.SIGTERM)
    assert (code, rest) == (0, ""), err
    assert "Traceback" not in err
    assert time.perf_counter() - began < 10
    pending.join(30)


def _ignore_errors(fn, *args):
    try:
        fn(*args)
    except (OSError, http.client.HTTPException):
        pass


@pytest.mark.parametrize("loop", LOOPS)
def test_aiohttp_blocking_styles_block_the_loop(start, loop):
    # The finding: a blocking style holds the one thread that serves every
    # connection. Three sync requests at once end one after the other, and a
    # /health sent meanwhile waits for the loop too. Lower bounds only.
    d = 60
    s = start(loop=loop, delay_ms=d)
    results = concurrently(s.port, ["/sync/2"] * 3 + ["/health"], gap=0.02)
    assert [r[:2] for r in results] == [(200, "5")] * 3 + [(200, "ok")]
    ends = sorted(r[3] for r in results[:3])
    assert ends[-1] >= 3 * 3 * d / 1000, ends
    assert results[3][3] >= 3 * d / 1000, "/health answered while the loop was blocked"


@pytest.mark.parametrize("loop", LOOPS)
@pytest.mark.parametrize("style", ["async", "when-all"])
def test_aiohttp_non_blocking_styles_overlap(start, loop, style):
    d, n = 100, 4
    s = start(loop=loop, delay_ms=d)
    results = concurrently(s.port, [f"/{style}/2"] * n)
    assert all(r[:2] == (200, "5") for r in results)
    # Served one after the other they would need n floors; here they wait
    # together. The bound is loose (3 floors) for a loaded machine.
    serial = n * FLOOR[style] * d / 1000
    assert max(r[3] for r in results) < 0.75 * serial, results


@pytest.mark.parametrize("style", ["sync", "sync-over-async", "parallel"])
def test_thread_pool_serves_blocking_requests_at_once(start, style):
    d, n = 100, 4
    s = start("--threads", n, server="threads", delay_ms=d)
    results = concurrently(s.port, [f"/{style}/2"] * n)
    assert all(r[:2] == (200, "5") for r in results)
    serial = n * FLOOR[style] * d / 1000
    assert max(r[3] for r in results) < 0.75 * serial, results


def test_thread_pool_of_one_serves_one_request_at_a_time(start):
    d = 60
    s = start("--threads", 1, server="threads", delay_ms=d)
    results = concurrently(s.port, ["/sync/2", "/sync/2", "/health"], gap=0.02)
    assert [r[:2] for r in results] == [(200, "5"), (200, "5"), (200, "ok")]
    assert max(r[3] for r in results[:2]) >= 2 * 3 * d / 1000
    assert results[2][3] >= 2 * 3 * d / 1000  # queued behind both


def test_thread_pool_holds_a_thread_per_request_not_per_connection(start):
    # An idle keep-alive connection waits in the selector, not on a pool
    # thread: with one thread, a second connection is still served.
    s = start("--threads", 1, server="threads", delay_ms=5)
    idle = s.connect()
    assert get(idle, "/sync/2")[:2] == (200, "5")
    other = s.connect()
    assert get(other, "/sync/2")[:2] == (200, "5")
    assert get(idle, "/health")[:2] == (200, "ok")
    idle.close()
    other.close()


def raw_exchange(port, data, expect_close=True):
    """Send raw bytes, return everything received until the server closes
    (or 2 s of silence, if expect_close is False)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(data)
        sock.settimeout(10 if expect_close else 2)
        received = b""
        try:
            while chunk := sock.recv(65536):
                received += chunk
        except socket.timeout:
            if expect_close:
                raise
        return received.decode("latin-1")


@pytest.mark.parametrize("server", SERVERS)
def test_http_framing(start, server):
    s = start(server=server, delay_ms=5)
    # Pipelined: two requests in one write, two answers in order.
    out = raw_exchange(s.port, b"GET /sync/1 HTTP/1.1\r\nHost: x\r\n\r\n"
                               b"GET /parallel/10 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert out.count("HTTP/1.1 200") == 2
    assert out.index("\r\n\r\n2HTTP/1.1 200") > 0 and out.endswith("\r\n\r\n25")
    # HTTP/1.0 without keep-alive: answered, then closed.
    out = raw_exchange(s.port, b"GET /health HTTP/1.0\r\n\r\n")
    assert out.startswith("HTTP/1.") and " 200 " in out.splitlines()[0] and out.endswith("\r\n\r\nok")
    # A GET with a body: the body is read and ignored.
    out = raw_exchange(s.port, b"GET /sync/4 HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello"
                               b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert out.count(" 200 OK") == 2 and "\r\n\r\n10HTTP/1.1" in out and out.endswith("ok")
    # Not a request.
    assert raw_exchange(s.port, b"NONSENSE\r\n\r\n").startswith("HTTP/1.")
    assert " 400 " in raw_exchange(s.port, b"NONSENSE\r\n\r\n").splitlines()[0]
    code, rest, err = s.stop()
    assert (code, rest) == (0, ""), err


def test_threads_server_rejects_oversized_heads(start):
    s = start(server="threads", delay_ms=5)
    out = raw_exchange(s.port, b"GET /health HTTP/1.1\r\nX: " + b"a" * 70000)
    assert out.startswith("HTTP/1.1 431 ")
    out = raw_exchange(s.port, b"GET /health HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n")
    assert out.startswith("HTTP/1.1 501 ")
    out = raw_exchange(s.port, b"GET /health HTTP/2.0\r\n\r\n")
    assert out.startswith("HTTP/1.1 505 ")


def run(*args):
    return subprocess.run([sys.executable, str(BENCH), *map(str, args)],
                          capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("server", SERVERS)
def test_port_in_use_is_exit_1_with_one_line(server):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = run("--server", server, "serve", "--port", port, "--delay-ms", 10)
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout == ""
    assert len(proc.stderr.splitlines()) == 1 and "in use" in proc.stderr, proc.stderr


BAD_SERVE_ARGS = [
    [],
    ["--port", "0"],
    ["--delay-ms", "10"],
    ["--port", "0", "--delay-ms", "0"],
    ["--port", "0", "--delay-ms", "-5"],
    ["--port", "0", "--delay-ms", "abc"],
    ["--port", "-1", "--delay-ms", "10"],
    ["--port", "65536", "--delay-ms", "10"],
    ["--port", "0x10", "--delay-ms", "10"],
    ["--port", "0", "--delay-ms", "10", "--threads", "0"],
    ["--port", "0", "--delay-ms", "10", "--threads", "-2"],
    ["--port", "0", "--delay-ms", "10", "--threads"],
    ["--port", "0", "--delay-ms", "10", "--threads", "32768"],
    ["--port", "0", "--delay-ms", "99999999999999999999999"],
    ["--port", "0", "--delay-ms", "1073741824"],  # 2^30: 2*D would not fit 31 bits
    ["--port", "0", "--delay-ms", "10", "--n", "5"],
    ["--port", "0", "--delay-ms", "10", "--iterations", "1"],
    ["--port", "0", "--delay-ms", "10", "extra"],
    ["--port", "0", "--delay-ms", "10", "--bogus\nsecond line"],
    ["--port", "0", "--delay-ms", "\u0665"],
    ["--port", "0", "--delay", "10"],
]


@pytest.mark.parametrize("loop", LOOPS)
@pytest.mark.parametrize("server", SERVERS)
def test_bad_serve_args_exit_2_with_one_line(loop, server):
    for args in BAD_SERVE_ARGS + [["--server", "nope", "--port", "0", "--delay-ms", "10"]]:
        proc = run("--loop", loop, "--server", server, "serve", *args)
        assert proc.returncode == 2, (args, proc.stderr)
        assert proc.stdout == "", args
        assert len(proc.stderr.splitlines()) == 1, (args, proc.stderr)
        assert "Traceback" not in proc.stderr


def test_server_option_is_only_for_serve_and_version():
    proc = run("--server", "threads", "chain", "--n", 1, "--iterations", 1)
    assert proc.returncode == 2 and proc.stdout == "" and len(proc.stderr.splitlines()) == 1
    assert run("--server", "threads", "--version").stdout.strip().endswith("stdlib threads")
    assert "aiohttp" in run("--loop", "uvloop", "--server", "aiohttp", "--version").stdout


@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_serve_help_is_usage_on_stdout(flag):
    proc = run("serve", flag)
    assert proc.returncode == 0 and proc.stderr == ""
    assert proc.stdout.startswith("usage: bench.py [--loop asyncio|uvloop] [--server aiohttp|threads] serve")
    assert "--delay-ms D" in proc.stdout and "--threads T" in proc.stdout


def test_other_workloads_do_not_import_the_server():
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import bench; "
            "bench.main(['--loop', 'uvloop', 'chain', '--n', '3', '--iterations', '1']); "
            "loaded = {'aiohttp', 'server', 'importlib.metadata'} & set(sys.modules); "
            "assert not loaded, loaded")
    proc = subprocess.run([sys.executable, "-c", code, str(BENCH.parent)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["result"] == 3
