"""A stand-in program for harness tests: follows docs/protocol.md, or
misbehaves in the way --mode asks."""

import json
import os
import subprocess
import sys
import time

mode = sys.argv[2] if sys.argv[1:2] == ["--mode"] else "good"
args = sys.argv[3:] if sys.argv[1:2] == ["--mode"] else sys.argv[1:]
# --mode release FOLDER: another release's build (IMPL@VERSION), its
# slowdown written into FOLDER by its install (impls.toml, fake-releases)
release_dir = None
if mode == "release":
    release_dir, args = args[0], args[1:]
workload, opts = args[0], dict(zip(args[1::2], args[2::2]))
n = int(opts["--n"])
k = int(opts.get("--iterations", "1"))
buffer = int(opts["--buffer"]) if workload == "bounded" else None
expected = n * (n - 1) // 2 if workload in ("bounded", "skynet") else n

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

# Descendants that leave the fake's session and process group: one in its own
# session (setsid), one double-forked (its parent exits, so it is orphaned).
ESCAPERS = [
    "import os, time; os.setsid(); time.sleep(1000)",
    "import os, time\nif os.fork() == 0:\n    os.setsid(); time.sleep(1000)",
]
if mode in ("escape", "daemon"):
    for code in ESCAPERS:
        subprocess.Popen([sys.executable, "-c", code, "fake-escaper"])
    time.sleep(0.3)  # the double fork has happened
    print("started", file=sys.stderr, flush=True)
    if mode == "escape":
        time.sleep(1000)  # until the timeout; "daemon" answers and exits, leaving them
if mode == "flood":
    chunk = "y" * 65536
    while True:
        sys.stdout.write(chunk)
if mode == "selfkill":
    import signal
    os.kill(os.getpid(), signal.SIGKILL)
if mode == "stderr":
    for i in range(1, 31):
        print(f"fake: line {i}", file=sys.stderr)
    sys.exit(4)

# FAKE_SLOWDOWN=1.5: a build whose iterations take 1.5 times as long
slowdown = float(os.environ.get("FAKE_SLOWDOWN", "1"))
if release_dir is not None:
    with open(os.path.join(release_dir, "slowdown")) as f:
        slowdown = float(f.read())
out = {"workload": workload, "n": n, "buffer": buffer,
       "iter_ns": [round((1000 + i) * slowdown) for i in range(k)]}
result = expected + 1 if mode == "wrong" else expected
if workload == "sleep":
    d = int(opts.get("--duration-ms", "10000"))
    time.sleep(d / 1000)
    out["spawn_ns"] = 10
    out["iter_ns"] = [d * 1_000_000 + 5] * k
if workload in ("chain", "chain-await"):  # docs/protocol.md, Priming
    out["primed"] = min(n, 1000)
# What a runtime's cache would find: the harness gives each run an empty one.
cache = os.environ.get("XDG_CACHE_HOME")
found = sorted(os.listdir(cache)) if cache and os.path.isdir(cache) else None
if cache:
    open(os.path.join(cache, "fake-was-here"), "w").close()
# --warmup-ms W: a cold run like an iteration, then one said to take W ms,
# which ends the warm-up (docs/protocol.md).
warmup_ms = int(opts.get("--warmup-ms", "0"))
out.update(warmup_ns=[round(1000 * slowdown), warmup_ms * 1_000_000] if warmup_ms else [],
           warmup_results=[result] * 2 if warmup_ms else [])
out.update(result=result, results=[result] * k, lang_env=os.environ.get("LANG"),
           make_env=os.environ.get("MAKEFLAGS"), cache_found=found,
           pycache_prefix=sys.pycache_prefix, writes_bytecode=not sys.dont_write_bytecode,
           cpus_seen=len(os.sched_getaffinity(0)), cpus_knob=os.environ.get("FAKE_CPUS"),
           env_names=sorted(os.environ), collect_env=os.environ.get("BENCH_COLLECT"))
print(json.dumps(out))
