"""Run a command K times; print one JSON line a process: its passes (the JSON
line the program prints), its user and system CPU, its minor faults and the
change of /proc/vmstat's counters of transparent huge pages and compaction
around it (machine-wide: run it with nothing else running, under
/tmp/bench.lock).

    python3 vmstat_runs.py K LABEL 'NAME=VALUE,...' COMMAND...
    python3 vmstat_runs.py 1 stock '' rust/target/release/rust-tokio chain --n 20000 --iterations 2
"""
import json
import os
import resource
import subprocess
import sys

KEYS = ("thp_fault_alloc", "thp_fault_fallback", "compact_stall", "compact_success",
        "compact_fail", "pgfault")


def vmstat() -> dict[str, int]:
    with open("/proc/vmstat") as f:
        pairs = (line.split() for line in f)
        return {k: int(v) for k, v in pairs if k in KEYS}


def main() -> None:
    k, label, extra, cmd = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4:]
    env = {**os.environ, **dict(x.split("=", 1) for x in extra.split(",") if x)}
    for i in range(k):
        before, r0 = vmstat(), resource.getrusage(resource.RUSAGE_CHILDREN)
        out = subprocess.run(cmd, capture_output=True, text=True, env=env).stdout
        r1, after = resource.getrusage(resource.RUSAGE_CHILDREN), vmstat()
        passes = json.loads(out.strip().splitlines()[-1])
        print(json.dumps({"label": label, "run": i,
                          "iter_ms": [round(x / 1e6, 2) for x in passes["iter_ns"]],
                          "user_s": round(r1.ru_utime - r0.ru_utime, 4),
                          "sys_s": round(r1.ru_stime - r0.ru_stime, 4),
                          "minflt": r1.ru_minflt - r0.ru_minflt,
                          **{x: after[x] - before[x] for x in KEYS}}), flush=True)


if __name__ == "__main__":
    main()
