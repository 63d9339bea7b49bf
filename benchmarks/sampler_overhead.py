"""How much CPU the RSS/thread sampler costs the harness.

    .venv/bin/python benchmarks/sampler_overhead.py [--seconds 10] [--interval-ms 10]

Samples a running process (a Python program holding 200 threads, so that
/proc has real work to do) and reports the harness's CPU time as a share of
one core. The goal is under 1%. Run it on a quiet machine; it is a
benchmark, not a test.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.sampler import Sampler  # noqa: E402

TARGET = ("import threading, time\n"
          "for _ in range(200): threading.Thread(target=time.sleep, args=(3600,), daemon=True).start()\n"
          "time.sleep(3600)")


def cpu_s() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--interval-ms", type=float, default=10.0)
    args = parser.parse_args()

    target = subprocess.Popen([sys.executable, "-c", TARGET])
    try:
        time.sleep(1.0)  # let its threads start
        idle_start, wall_start = cpu_s(), time.monotonic()
        time.sleep(args.seconds)
        idle = (cpu_s() - idle_start) / (time.monotonic() - wall_start)

        sampler = Sampler(target.pid, args.interval_ms / 1000)
        busy_start, wall_start = cpu_s(), time.monotonic()
        sampler.start()
        time.sleep(args.seconds)
        sampler.stop()
        wall = time.monotonic() - wall_start
        busy = (cpu_s() - busy_start) / wall
    finally:
        target.kill()
        target.wait()

    cost = busy - idle
    rate = len(sampler.samples) / wall
    print(f"samples: {len(sampler.samples)} in {wall:.1f} s ({rate:.0f}/s, "
          f"max threads seen {sampler.max_threads})")
    print(f"sampler CPU: {cost * 100:.3f}% of one core "
          f"({cost / rate * 1e6:.1f} us per sample); goal < 1%: {'met' if cost < 0.01 else 'MISSED'}")
    return 0 if cost < 0.01 else 1


if __name__ == "__main__":
    sys.exit(main())
