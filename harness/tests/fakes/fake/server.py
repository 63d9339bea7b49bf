"""A fake http server for the harness tests: the protocol's `serve`
(docs/protocol.md), misbehaving the way --mode asks: good, die (exits on
its first /STYLE request), silent (never says it is listening), wrong (a
wrong body), fast (answers without waiting)."""

import json
import os
import signal
import sys
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


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *_args):
        pass

    def do_GET(self):
        if self.path == "/health":
            return self._send(200, "ok")
        _, style, num = self.path.split("/", 2)
        if mode == "die":
            os._exit(3)
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
