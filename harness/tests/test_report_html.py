"""report.html in a real browser: headless Chromium (Debian's package
`chromium`, installed here when missing, announced like every other
install) loads the file from disk and is driven through its DevTools
protocol: no console error, the verdicts and every table present, and a
click on a column header sorts the column by value. A screenshot is kept
under results/ci-artifacts/ (git-ignored) for CI to publish."""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from harness import publish

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = Path(__file__).parent / "fixtures" / "run"
ARTIFACTS = ROOT / "results" / "ci-artifacts"
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync")
INSTALL_NOTE = ("harness tests: installing Debian's chromium for the report.html test "
                "(about 155 MB to download, 480 MB on disk) ...")


def _announce(config, text: str) -> None:
    """One line the user sees even while pytest captures output."""
    capture = config.pluginmanager.getplugin("capturemanager")
    with capture.global_and_fixture_disabled():
        print(text, file=sys.stderr, flush=True)


def ensure_chromium(config=None) -> str:
    """The chromium binary; installed with apt-get when missing (as root).
    Skips the test with the reason when it cannot be had: never a silent pass."""
    found = shutil.which("chromium")
    if found:
        return found
    if shutil.which("apt-get") is None:
        pytest.skip("chromium is not installed and apt-get is unavailable to install it")
    if os.geteuid() != 0:
        pytest.skip("chromium is not installed and installing it needs root "
                    "(apt-get install -y chromium)")
    if config is not None:
        _announce(config, INSTALL_NOTE)
    else:
        print(INSTALL_NOTE, file=sys.stderr, flush=True)
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    proc = subprocess.run(["apt-get", "install", "-y", "-q", "chromium"], env=env,
                          capture_output=True, text=True)
    if proc.returncode != 0:  # stale package lists: once more after an update
        subprocess.run(["apt-get", "update", "-q"], env=env, capture_output=True, text=True)
        proc = subprocess.run(["apt-get", "install", "-y", "-q", "chromium"], env=env,
                              capture_output=True, text=True)
    found = shutil.which("chromium")
    if proc.returncode != 0 or not found:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        pytest.skip(f"installing chromium failed (apt-get exited {proc.returncode}: {last})")
    return found


class DevTools:
    """Chromium's DevTools protocol over a websocket, in the standard
    library only: the handshake, masked text frames out, frames in."""

    def __init__(self, ws_url: str) -> None:
        m = re.match(r"ws://([^:/]+):(\d+)(/.*)", ws_url)
        assert m, ws_url
        self.sock = socket.create_connection((m[1], int(m[2])), timeout=30)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall((f"GET {m[3]} HTTP/1.1\r\nHost: {m[1]}:{m[2]}\r\nUpgrade: websocket\r\n"
                           f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                           f"Sec-WebSocket-Version: 13\r\n\r\n").encode())
        reply = b""
        while b"\r\n\r\n" not in reply:
            reply += self.sock.recv(4096)
        assert b" 101 " in reply.split(b"\r\n")[0], reply
        self.buffer = reply.split(b"\r\n\r\n", 1)[1]
        self.next_id = 0
        self.events: list[dict] = []

    def _read(self, n: int) -> bytes:
        while len(self.buffer) < n:
            chunk = self.sock.recv(1 << 16)
            if not chunk:
                raise ConnectionError("DevTools closed the connection")
            self.buffer += chunk
        out, self.buffer = self.buffer[:n], self.buffer[n:]
        return out

    def _frame(self) -> tuple[int, bytes]:
        b0, b1 = self._read(2)
        length = b1 & 0x7F
        if length == 126:
            length = int.from_bytes(self._read(2), "big")
        elif length == 127:
            length = int.from_bytes(self._read(8), "big")
        mask = self._read(4) if b1 & 0x80 else None
        data = self._read(length)
        if mask:
            data = bytes(c ^ mask[i % 4] for i, c in enumerate(data))
        return b0, data

    def _message(self) -> dict:
        parts = b""
        while True:
            b0, data = self._frame()
            if b0 & 0x0F == 0x9:  # ping: answered by the browser's own keep-alive, ignored
                continue
            parts += data
            if b0 & 0x80:
                return json.loads(parts)

    def send(self, method: str, **params) -> dict:
        self.next_id += 1
        payload = json.dumps({"id": self.next_id, "method": method, "params": params}).encode()
        header = bytes([0x81])
        n = len(payload)
        header += bytes([0x80 | n]) if n < 126 else (
            bytes([0x80 | 126]) + n.to_bytes(2, "big") if n < 1 << 16
            else bytes([0x80 | 127]) + n.to_bytes(8, "big"))
        mask = os.urandom(4)
        self.sock.sendall(header + mask + bytes(c ^ mask[i % 4] for i, c in enumerate(payload)))
        while True:
            message = self._message()
            if message.get("id") == self.next_id:
                assert "error" not in message, message
                return message.get("result", {})
            self.events.append(message)

    def wait_for(self, method: str, timeout: float = 30) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            for e in self.events:
                if e.get("method") == method:
                    return e
            assert time.monotonic() < deadline, f"no {method} within {timeout} s"
            self.events.append(self._message())

    def evaluate(self, expression: str):
        result = self.send("Runtime.evaluate", expression=expression, returnByValue=True,
                           awaitPromise=True)
        assert "exceptionDetails" not in result, result
        return result["result"].get("value")


def _errors(events: list[dict]) -> list[str]:
    """Console errors, uncaught exceptions and failed loads among the events."""
    out = []
    for e in events:
        method, params = e.get("method"), e.get("params", {})
        if method == "Runtime.exceptionThrown":
            out.append(json.dumps(params.get("exceptionDetails"))[:500])
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            out.append(json.dumps(params.get("args"))[:500])
        elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
            out.append(params["entry"].get("text", "")[:500])
    return out


@pytest.fixture(scope="module")
def chromium(pytestconfig) -> str:
    return ensure_chromium(pytestconfig)


@pytest.fixture(scope="module")
def page_file(tmp_path_factory) -> Path:
    """The committed fixture run, reported with its plots."""
    run = tmp_path_factory.mktemp("html") / "run"
    shutil.copytree(FIXTURE, run)
    publish.write_report(run)
    assert (run / "report.html").is_file()
    return run / "report.html"


def _launch(chromium: str, profile: Path, *extra: str) -> subprocess.Popen:
    return subprocess.Popen([chromium, *FLAGS, f"--user-data-dir={profile}", *extra],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _devtools_port(proc: subprocess.Popen, profile: Path, timeout: float = 60) -> int:
    """The port Chromium chose (--remote-debugging-port=0): from its stderr
    line 'DevTools listening on ws://...', or its DevToolsActivePort file."""
    deadline = time.monotonic() + timeout
    os.set_blocking(proc.stderr.fileno(), False)
    seen = ""
    while time.monotonic() < deadline:
        active = profile / "DevToolsActivePort"
        if active.is_file() and active.read_text().strip():
            return int(active.read_text().split()[0])
        try:
            seen += os.read(proc.stderr.fileno(), 1 << 16).decode(errors="replace")
        except BlockingIOError:
            pass
        if m := re.search(r"DevTools listening on ws://[^:]+:(\d+)/", seen):
            return int(m[1])
        assert proc.poll() is None, f"chromium exited {proc.returncode}: {seen[-2000:]}"
        time.sleep(0.1)
    raise AssertionError(f"chromium gave no DevTools port within {timeout} s: {seen[-2000:]}")


def test_report_html_in_headless_chromium(chromium, page_file, tmp_path):
    profile = tmp_path / "profile"
    profile.mkdir()
    proc = _launch(chromium, profile, "--remote-debugging-port=0", "about:blank")
    try:
        port = _devtools_port(proc, profile)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=30) as r:
            target = next(t for t in json.load(r) if t["type"] == "page")
        page = DevTools(target["webSocketDebuggerUrl"])
        page.send("Runtime.enable")
        page.send("Log.enable")
        page.send("Page.enable")
        page.send("Page.navigate", url=page_file.as_uri())
        page.wait_for("Page.loadEventFired")
        # nothing but the file itself: every resource is inline
        resources = page.evaluate(
            "performance.getEntriesByType('resource').map(e => e.name)")
        assert resources == [], resources

        # the verdicts first, with a sentence per figure
        assert page.evaluate("document.querySelector('section').id") == "verdicts"
        sentences = page.evaluate(
            "[...document.querySelectorAll('#verdicts li')].map(li => li.textContent)")
        assert any("leads on" in s or "used the least" in s for s in sentences), sentences
        assert any(s.startswith("Failures:") and "node: ran out of memory at N = 1M" in s
                   for s in sentences), sentences
        # every workload's table, and the legend and environment
        tables = page.evaluate("[...document.querySelectorAll('table')].map(t => t.id)")
        for workload in ("sleep", "chain", "bounded"):
            assert f"table-{workload}" in tables, tables
        assert {"table-implementations", "table-environment"} <= set(tables)
        assert page.evaluate("document.querySelectorAll('img[src^=\"data:image/png\"]').length") >= 8

        # a click on a column header sorts the column by value
        column = page.evaluate("""(() => {
            const t = document.getElementById('table-chain');
            return [...t.tHead.rows[0].cells].findIndex(th => th.textContent === 'peak RSS');
        })()""")
        assert column > 0

        def values() -> list:
            return page.evaluate(f"""[...document.getElementById('table-chain').tBodies[0].rows]
                .map(r => r.cells[{column}].getAttribute('data-value'))
                .filter(v => v !== null).map(Number)""")
        before = values()
        assert before != sorted(before)  # the table starts in N order, not by peak RSS
        page.evaluate(f"document.getElementById('table-chain').tHead.rows[0].cells[{column}].click()")
        up = values()
        assert up == sorted(up) and len(up) == len(before)
        assert page.evaluate(f"document.getElementById('table-chain').tHead.rows[0]"
                             f".cells[{column}].getAttribute('aria-sort')") == "ascending"
        page.evaluate(f"document.getElementById('table-chain').tHead.rows[0].cells[{column}].click()")
        assert values() == sorted(before, reverse=True)
        # by value, not by text: text order would put '9.x MiB' after '10 MiB'
        texts = page.evaluate(f"""[...document.getElementById('table-chain').tBodies[0].rows]
            .map(r => r.cells[{column}].textContent)""")
        assert texts != sorted(texts, reverse=True) or len(set(texts)) < 2
        # each row links to its command and the environment
        assert page.evaluate("document.querySelectorAll('#table-chain details code').length") > 0
        assert page.evaluate("!!document.querySelector('#table-chain a[href=\"#environment\"]')")
        assert _errors(page.events) == []
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    # the screenshot CI keeps: the top of the page, the verdicts first
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTIFACTS / "report-html.png"
    shot.unlink(missing_ok=True)
    second = tmp_path / "profile2"
    second.mkdir()
    done = subprocess.run([chromium, *FLAGS, f"--user-data-dir={second}",
                           f"--screenshot={shot}", "--window-size=1400,1800",
                           page_file.as_uri() + "#sort=table-chain:3"],
                          capture_output=True, text=True, timeout=120)
    assert shot.is_file() and shot.stat().st_size > 10_000, done.stderr[-2000:]


if __name__ == "__main__":  # install ahead of the tests: python harness/tests/test_report_html.py
    print(ensure_chromium())
