"""Run node/bench.mjs K times with V8's trace flags; print one JSON line a
process: its passes, its user CPU and the count of the trace's lines of each
kind (optimizations completed, deoptimizations, OSR lines: --trace-opt writes
3 an OSR compilation).

    python3 node_trace.py 20 '--trace-opt --trace-deopt' chain --n 20000 --iterations 2
"""
import json
import re
import resource
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[4] / "node" / "bench.mjs"
KINDS = {"opt_done": r"completed (optimizing|compiling)", "deopt": r"bailout \(kind|deoptimiz",
         "scavenge": r"Scavenge", "marksweep": r"Mark-Compact|Mark-sweep", "osr": r"OSR"}


def main() -> None:
    k, flags, args = int(sys.argv[1]), sys.argv[2].split(), sys.argv[3:]
    for i in range(k):
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        p = subprocess.run(["node", *flags, "--expose-gc", str(BENCH), *args],
                           capture_output=True, text=True)
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        lines = p.stdout.splitlines()
        passes = next(json.loads(x) for x in lines if x.startswith('{"workload"'))
        counts = {name: sum(1 for x in lines if re.search(kind, x)) for name, kind in KINDS.items()}
        print(json.dumps({"run": i, "iter_ms": [round(x / 1e6, 1) for x in passes["iter_ns"]],
                          "warmup_n": len(passes["warmup_ns"]),
                          "user_s": round(r1.ru_utime - r0.ru_utime, 3), **counts}), flush=True)


if __name__ == "__main__":
    main()
