"""A fake http server for the harness tests: the protocol's `serve`
(docs/protocol.md), misbehaving the way --mode asks: good, die (exits on
its first /STYLE request), silent (never says it is listening), wrong (a
wrong body), fast (answers without waiting), stall (once, from STALL_AT_S
after its first /STYLE request, the variable FAKE_STALL_AT_S if set, holds every
request that arrives for STALL_S, as a collector's pause would: what a
closed loop hides)."""

import json
import os
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

mode = sys.argv[2]
args = sys.argv[3:]
if args[:1] != ["serve"] or "--delay-ms" not in args:
    print("server.py: error: usage: serve --port P --delay-ms D", file=sys.stderr)
    sys.exit(2)
delay = int(args[args.index("--delay-ms") + 1]) / 1000
port = int(args[args.index("--port") + 1])
STYLES = ["sync", "sync-over-async", "parallel", "async", "when-all"]
STALL_AT_S, STALL_S = float(os.environ.get("FAKE_STALL_AT_S", "0.5")), 0.6
first_request: list[float] = []
first_lock = threading.Lock()


def stall() -> None:
    """Hold a request that arrives during the stall until the stall ends."""
    now = time.monotonic()
    with first_lock:
        if not first_request:
            first_request.append(now)
    start = first_request[0] + STALL_AT_S
    if start <= now < start + STALL_S:
        time.sleep(start + STALL_S - now)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # one write per response (flushed after each): headers and body in two
    # would meet delayed ACKs, 40 ms a request
    wbufsize = 65536

    def log_message(self, *_args):
        pass

    def do_GET(self):
        if self.path == "/health":
            return self._send(200, "ok")
        _, style, num = self.path.split("/", 2)
        if mode == "die":
            os._exit(3)
        if mode == "stall":
            stall()
        if mode != "fast":
            time.sleep((3 if style in ("sync", "sync-over-async", "async") else 2) * delay)
        n = int(num)
        self._send(200, str(2 * n + n // 2 + (1 if mode == "wrong" else 0)))

    def _send(self, status, body):
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


if mode == "silent":
    time.sleep(3600)
ThreadingHTTPServer.request_queue_size = 128  # an open loop opens connections in bursts
server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
server.daemon_threads = True
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
print(json.dumps({"listening": server.server_address[1], "styles": STYLES, "threads": None,
                  "runtime": "fake"}), flush=True)
try:
    server.serve_forever()
except SystemExit:
    server.server_close()
    raise
