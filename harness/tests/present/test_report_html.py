"""report.html in a real browser: headless Chromium (Debian's package
`chromium`, installed here when missing, announced like every other
install) loads the file from disk and is driven through its DevTools
protocol: no console error, the verdicts and every table present, and a
click on a column header sorts the column by value. A screenshot is kept
under results/ci-artifacts/ (git-ignored) for CI to publish."""

from __future__ import annotations

import base64
import contextlib
import csv
import http.server
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from typing import Callable, Iterator

import pytest

from harness.present import outputs

from ..conftest import tool_missing

ROOT = Path(__file__).resolve().parents[3]
FIXTURE = Path(__file__).parents[1] / "fixtures" / "run"
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
    When it cannot be had, tool_missing(): skipped with the reason, under CI a failure."""
    found = shutil.which("chromium")
    if found:
        return found
    if os.environ.get("BENCH_NO_SYSTEM_INSTALL") == "1":  # docs/usage.md: refuses this one too
        tool_missing("chromium", "not installed, and BENCH_NO_SYSTEM_INSTALL=1 refuses to "
                            "apt-get install it")
    if shutil.which("apt-get") is None:
        tool_missing("chromium", "not installed, and no apt-get to install it")
    if os.geteuid() != 0:
        tool_missing("chromium", "not installed, and installing it needs root "
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
        tool_missing("chromium", f"installing it failed (apt-get exited {proc.returncode}: {last})")
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


def _requests(events: list[dict]) -> list[str]:
    """The URLs the page asked for (Network.requestWillBeSent), but its own
    embedded data: URLs (the plots), which fetch nothing."""
    return [url for e in events if e.get("method") == "Network.requestWillBeSent"
            if not (url := e["params"]["request"]["url"]).startswith("data:")]


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
    outputs.write_report(run)
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


@contextlib.contextmanager
def _page(chromium: str, profile: Path, url: str) -> Iterator[DevTools]:
    """A headless Chromium showing url, driven through DevTools; the console
    and log are recorded from before the page loads (page.events)."""
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
        page.send("Network.enable")  # every request the page makes is an event
        page.send("Page.navigate", url=url)
        page.wait_for("Page.loadEventFired")
        yield page
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_report_html_in_headless_chromium(chromium, page_file, tmp_path):
    with _page(chromium, tmp_path / "profile", page_file.as_uri()) as page:
        # nothing but the file itself: every resource is inline
        resources = page.evaluate(
            "performance.getEntriesByType('resource').map(e => e.name)")
        assert resources == [], resources

        # a bar of links to every section, each one landing
        targets = page.evaluate(
            "[...document.querySelectorAll('nav a')].map(a => a.getAttribute('href').slice(1))")
        assert {"verdicts", "workload-chain", "standings", "environment"} <= set(targets), targets
        assert page.evaluate(f"{targets!r}.every(t => document.getElementById(t))"), targets
        # the verdicts first: the headline rankings' places before any other table or
        # list, the floor's leaders table after the claims and rankings, then the failures
        assert page.evaluate("document.querySelector('section').id") == "verdicts"
        first = page.evaluate("""(() => {
            const s = document.getElementById('verdicts');
            return [...s.querySelectorAll('table, ul')].map(e => e.tagName + '#' + e.id);
        })()""")
        assert first[0] == "TABLE#table-places", first
        assert first.index("TABLE#table-rankings") < first.index("TABLE#table-verdicts"), first
        places = page.evaluate(
            "[...document.querySelectorAll('#table-places tbody tr')].map(r => r.textContent)")
        assert any(r.startswith("chain, N = 1M: warm iteration") and " of 2" in r
                   for r in places), places
        assert page.evaluate("document.querySelector('#table-places a').getAttribute('href')"
                             ).startswith("#workload-")
        verdict_rows = page.evaluate(
            "[...document.querySelectorAll('#table-verdicts tbody tr')].map(r => r.textContent)")
        assert any(r.startswith("chain") and "rust-tokio" in r for r in verdict_rows), verdict_rows
        assert page.evaluate("document.querySelector('#table-verdicts a').getAttribute('href')"
                             ).startswith("#workload-")
        failures = page.evaluate(
            "[...document.querySelectorAll('#verdicts ul.failures li')].map(li => li.textContent)")
        assert any(s.startswith("node:") and "ran out of memory at N = 1M" in s
                   for s in failures), failures
        # every workload's table, and the legend and environment
        tables = page.evaluate("[...document.querySelectorAll('table')].map(t => t.id)")
        for workload in ("sleep", "chain", "bounded"):
            assert f"table-{workload}" in tables, tables
        assert {"table-implementations", "table-environment"} <= set(tables)
        assert page.evaluate("document.querySelectorAll('img[src^=\"data:image/\"]').length") >= 8

        # a click on a column header sorts the column by value
        column = page.evaluate("""(() => {
            const t = document.getElementById('table-chain');
            return [...t.tHead.rows[0].cells].findIndex(th => th.textContent === 'peak RSS');
        })()""")
        assert column > 0

        def values() -> list:
            return page.evaluate(f"""[...document.getElementById('table-chain').tBodies[0].rows]
                .map(r => r.cells[{column}].getAttribute('data-value'))
                .filter(v => v !== null && v !== '').map(Number)""")
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
        assert _errors(page.events) == []  # the page's own script and styles pass its CSP
        assert _requests(page.events) == [page_file.as_uri()]  # the file, and nothing else

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



def test_a_quick_report_shows_the_check_on_its_first_screen(chromium, tmp_path):
    """The quick suite's report.html at 1366x768: the check's result (its
    counts, then each failure) is the first section and within the first
    screen, nothing is ranked, and the page asks for nothing but itself."""
    run = tmp_path / "run"
    shutil.copytree(FIXTURE, run)
    env = json.loads((run / "env.json").read_text())
    env["settings"]["suite"] = "quick"
    (run / "env.json").write_text(json.dumps(env))
    outputs.write_report(run)
    page_file = run / "report.html"
    with _page(chromium, tmp_path / "profile", page_file.as_uri()) as page:
        page.evaluate("window.resizeTo(1366, 768)")
        assert page.evaluate("document.querySelector('section').id") == "verdicts"
        check = page.evaluate("document.querySelector('#verdicts p.settled').textContent")
        assert check.startswith("Check: ") and " ok" in check, check
        bottom = page.evaluate(
            "document.querySelector('#verdicts ul.failures').getBoundingClientRect().top")
        assert bottom < 768, bottom  # the failures start on the first screen
        assert page.evaluate("document.getElementById('table-verdicts')") is None
        assert page.evaluate("!!document.querySelector('.banner')")
        assert _requests(page.events) == [page_file.as_uri()]
        assert _errors(page.events) == []


# Markup a hostile run directory may carry: each kind of element that can run
# script (a handler that sets window.pwned) or end the element it sits in.
PAYLOADS = ('<details open ontoggle="window.pwned=1">', '<img src=x onerror="window.pwned=2">',
            '"><script>window.pwned=3</script>', "'></table></td><svg onload=window.pwned=4>",
            "**bold** `code` [link](javascript:window.pwned=5)")


def planted(field: str) -> str:
    """The text planted in a field: every payload, then the field's name (to
    find it in the page). A cell starting with markup is the likeliest to
    be taken for the report's own."""
    return "".join(PAYLOADS) + f" ({field})"


# The free-text columns of runs.csv, each planted. The reader refuses markup
# in the others (rundir): language is an id, workload a known one, started_at
# a time; impl is a label, planted in a variant's value (any printable text
# but brackets and ';'); style is a dimension only http declares.
RUN_TEXT = ("run_id", "runtime", "variant", "version", "node", "peak_rss_method", "command", "error",
            "stderr_tail", "output")


def plant_run(run: Path, mark: Callable[[str], str] = planted, name: str = "1") -> dict[str, str]:
    """The fixture run in `run`, with mark(field) in every text field of
    runs.csv, of env.json (run id, host, toolchains, git, environment,
    variants, registries) and of the registry (language name, runtime: in
    runs.csv and env.json); `name` keeps runs apart for merge. Returns the
    planted texts by field."""
    shutil.copytree(FIXTURE, run)
    with (run / "runs.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    value = "".join(c for c in mark("variant value") if c.isprintable() and c not in "[];")
    variant = f"node[X={value}]"
    for row in rows:
        row.update({c: mark(c) for c in RUN_TEXT})
        if row["impl"] == "node":
            row["impl"] = variant
    with (run / "runs.csv").open("w", newline="") as f:
        writer = csv.DictWriter(f, [*rows[0]])
        writer.writeheader()
        writer.writerows(rows)
    env = json.loads((run / "env.json").read_text())
    env.update(  # its times are left: the reader takes only ISO 8601 times (rundir)
        run_id=mark("env run_id") + name,
        host={"hostname": mark("hostname") + name, "cpu_model": mark("cpu_model"), "cores": 2,
              "ram_bytes": 1 << 30, "kernel": mark("kernel"), "os": mark("os")},
        toolchains={mark("toolchain name"): mark("toolchain"), "go": None},
        git={"commit": mark("commit"), "dirty": True},
        program_env={"GOGC": mark("GOGC"), "GOFLAGS": "`" + mark("GOFLAGS") + "`"},
        runtimes={mark("language name"): mark("runtime string")},  # the registry's
        registries={mark("registry name"): mark("registry path")},
        floor_impls=[variant],
        variants={variant: {"impl": "node", "version": mark("release"),
                            "env": {"X": mark("variant value")}, "flags": [mark("flag")]}},
        settings=dict(env["settings"], suite=mark("suite")))
    (run / "env.json").write_text(json.dumps(env))
    return {"hostname": env["host"]["hostname"], "runtime": mark("runtime"),
            "variant": variant, "release": mark("release"), "variant value": value}


def test_markup_in_the_data_stays_text_in_chromium(chromium, tmp_path):
    """Markup planted in every text field of a run directory, and in merge's
    labels, reaches report.html as text: no element, attribute or handler
    of it is in the page, nothing of it runs, and no CSP error is logged."""
    one, two = tmp_path / "one", tmp_path / "two"
    shown = plant_run(one, name="1")
    plant_run(two, name="2")
    outputs.write_report(one, draw=False)  # the merged one has the plots
    labels = [planted("label").replace(",", ";") + n for n in "12"]
    merged = tmp_path / "merged"
    done = subprocess.run([sys.executable, "-m", "harness", "merge", str(one), str(two),
                           "--out", str(merged), "--labels", ",".join(labels)],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    pages = [one / "report.html", merged / "latest" / "report.html"]
    for number, path in enumerate(pages):
        with _page(chromium, tmp_path / f"profile{number}", path.as_uri()) as page:
            found = page.evaluate("""(() => {
                const all = [...document.querySelectorAll('*')];
                return {
                  handlers: all.flatMap(e => [...e.attributes].filter(a => /^on/i.test(a.name))
                                               .map(a => e.tagName + ' ' + a.name)),
                  scripts: document.scripts.length,
                  styles: document.querySelectorAll('style').length,
                  foreign: all.filter(e => ['IFRAME', 'SVG', 'OBJECT', 'EMBED', 'FORM', 'BASE',
                                            'LINK'].includes(e.tagName.toUpperCase()))
                              .map(e => e.tagName),
                  images: [...document.images].filter(i => !(i.classList.contains('plot')
                              && ['data:image/png;', 'data:image/webp;']
                                     .some(k => i.src.startsWith(k))))
                              .map(i => i.outerHTML),
                  details: [...document.querySelectorAll('details')]
                              .filter(d => !d.id.startsWith('cfg-')).map(d => d.outerHTML),
                  tables: [...document.querySelectorAll('table')]
                              .filter(t => !t.id.startsWith('table-')).length,
                  links: [...document.querySelectorAll('a')].map(a => a.getAttribute('href'))
                              .filter(h => !h.startsWith('#')),
                  pwned: window.pwned === undefined ? null : window.pwned,
                  text: document.body.textContent,
                  csp: document.querySelector('meta[http-equiv="Content-Security-Policy"]')
                          ?.getAttribute('content') ?? null,
                };
            })()""")
            text, csp = found.pop("text"), found.pop("csp")
            assert found == {"handlers": [], "scripts": 1, "styles": 1, "foreign": [],
                             "images": [], "details": [], "tables": 0, "links": [],
                             "pwned": None}, path
            assert csp, "report.html has no Content-Security-Policy"
            # the planted text is shown as it is, markup and all
            wanted = [planted("label")] if number else [
                shown["hostname"], shown["runtime"], shown["variant"],
                planted("toolchain"), planted("GOGC")]
            for value in wanted:
                assert value.replace(",", ";") in text, value[:40]
            assert _errors(page.events) == []


def test_the_csp_forbids_inline_script_and_fetches(chromium, page_file, tmp_path):
    """Should markup reach report.html after all, its Content-Security-Policy
    keeps it inert: no inline script or handler runs and nothing is fetched,
    while the page's own script still sorts its tables."""
    asked: list[str] = []

    class Recorder(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            asked.append(self.path)
            self.send_error(404)

        def log_message(self, *args) -> None:
            pass

    with http.server.ThreadingHTTPServer(("127.0.0.1", 0), Recorder) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        url = f"http://127.0.0.1:{server.server_address[1]}"
        tampered = tmp_path / "report.html"
        tampered.write_text(page_file.read_text(encoding="utf-8").replace(
            "<body>", f'<body><script>window.pwned=1</script><img src=x onerror="window.pwned=2">'
                      f'<img src="{url}/img"><link rel=stylesheet href="{url}/css">', 1),
            encoding="utf-8")
        try:
            with _page(chromium, tmp_path / "profile", tampered.as_uri()) as page:
                assert page.evaluate("window.pwned === undefined")
                th = "document.getElementById('table-chain').tHead.rows[0].cells[0]"
                page.evaluate(f"{th}.click()")
                assert page.evaluate(f"{th}.getAttribute('aria-sort')") == "ascending"
                blocked = [e for e in _errors(page.events) if "Content Security Policy" in e]
                assert blocked, "no CSP violation reported for the planted script"
        finally:
            server.shutdown()
    assert asked == [], "the page fetched from the network"


if __name__ == "__main__":  # install ahead of the tests: python harness/tests/present/test_report_html.py
    print(ensure_chromium())


# issue 64: a default run's report.html within 1.5 MB (it was 1.67 MB: the plots
# as PNG and every cell's text repeated as its sort value)
HTML_LIMIT = 1_500_000
RESULTS = ROOT / "docs" / "results"


def test_the_largest_committed_runs_report_html_stays_within_its_limit(tmp_path):
    """The committed run with the most rows, its plots drawn: report.html
    within HTML_LIMIT bytes, its plots inline as lossless WebP where that is
    smaller than the PNG."""
    largest = max(RESULTS.glob("*/runs.csv"), key=lambda p: p.stat().st_size).parent
    run = tmp_path / "run"
    shutil.copytree(largest, run)
    outputs.write_report(run)
    text = (run / "report.html").read_text()
    size = len(text.encode())
    assert size <= HTML_LIMIT, f"{largest.name}'s report.html is {size:,} bytes, over {HTML_LIMIT:,}"
    assert text.count('src="data:image/webp;base64,') >= 8
    # no sort value repeats the text it sorts
    assert not re.search(r'<td data-value="([^"<]+)">\1</td>', text)
