"""How much CPU the RSS/thread sampler costs.

    .venv/bin/python benchmarks/sampler_overhead.py [--seconds 10] [--interval-ms 10]

Runs a program holding 1 and then 5000 threads (the thread-per-task
baselines reach thousands) through the harness's launcher, which samples it,
and reports the launcher's own CPU time as a share of one core. The goal is
under 1%. It is a benchmark, not a test: run it on a quiet machine.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.core.registry import program_env  # noqa: E402
from harness.processes.launcher import run_process  # noqa: E402

TARGET = ("import sys, threading, time\n"
          "threading.stack_size(64 * 1024)\n"
          "for _ in range(int(sys.argv[2]) - 1):\n"
          "    threading.Thread(target=time.sleep, args=(3600,), daemon=True).start()\n"
          "time.sleep(float(sys.argv[1]))")


def main() -> int:
    parser = argparse.ArgumentParser(description="CPU cost of the harness's sampler")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--interval-ms", type=float, default=10.0)
    args = parser.parse_args()

    worst = 0.0
    for threads in (1, 5000):
        out = run_process([sys.executable, "-c", TARGET, str(args.seconds), str(threads)],
                          program_env(), "/", args.seconds + 120, None, args.interval_ms / 1000)
        assert out.wall_s and out.sampler_cpu_s is not None, out
        cost = out.sampler_cpu_s / out.wall_s
        worst = max(worst, cost)
        print(f"{threads:>5} threads: {len(out.samples)} samples in {out.wall_s:.1f} s, "
              f"sampler CPU {out.sampler_cpu_s * 1000:.1f} ms = {cost * 100:.3f}% of one core "
              f"({out.sampler_cpu_s / max(len(out.samples), 1) * 1e6:.1f} us per sample)")
    print(f"goal < 1% of one core: {'met' if worst < 0.01 else 'MISSED'}")
    return 0 if worst < 0.01 else 1


if __name__ == "__main__":
    sys.exit(main())
