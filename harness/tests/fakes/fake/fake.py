"""A stand-in program for harness tests: follows docs/protocol.md, or
misbehaves in the way --mode asks."""

import json
import os
import subprocess
import sys
import time

mode = sys.argv[2] if sys.argv[1:2] == ["--mode"] else "good"
args = sys.argv[3:] if sys.argv[1:2] == ["--mode"] else sys.argv[1:]
workload, opts = args[0], dict(zip(args[1::2], args[2::2]))
n = int(opts["--n"])
k = int(opts.get("--iterations", "1"))
buffer = int(opts["--buffer"]) if workload == "bounded" else None
expected = n * (n - 1) // 2 if workload == "bounded" else n

if mode == "hang":
    # A grandchild too, so the test can check that the whole tree goes.
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(1000)", "fake-grandchild"])
    print("started", file=sys.stderr, flush=True)
    time.sleep(1000)
if mode == "hog":
    chunks = []
    while True:
        chunks.append(bytearray(16 * 1024 * 1024))
        time.sleep(0.01)
if mode == "crash":
    print("fake: something broke", file=sys.stderr)
    sys.exit(3)
if mode == "garbage":
    print("this is not json")
    sys.exit(0)

out = {"workload": workload, "n": n, "buffer": buffer, "iter_ns": [1000 + i for i in range(k)]}
result = expected + 1 if mode == "wrong" else expected
if workload == "sleep":
    d = int(opts.get("--duration-ms", "10000"))
    time.sleep(d / 1000)
    out["spawn_ns"] = 10
    out["iter_ns"] = [d * 1_000_000 + 5] * k
out.update(result=result, results=[result] * k, lang_env=os.environ.get("LANG"),
           make_env=os.environ.get("MAKEFLAGS"))
print(json.dumps(out))
