"""RSS and thread count of a measured program over time.

The sampling itself runs in the native launcher (launcher/launch.c), which
re-reads /proc/PID/stat every interval and appends "t_ns rss_bytes threads"
lines to a file: a few microseconds a sample, where a Python thread cost over
100 (benchmarks/sampler_overhead.py). This module reads those lines back.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass
class Sample:
    t_s: float
    rss_bytes: int
    threads: int


def read_samples(path: Path) -> list[Sample]:
    samples = []
    with path.open() as f:
        for line in f:
            parts = line.split()
            if len(parts) == 3:  # a line cut short by a kill is dropped
                samples.append(Sample(int(parts[0]) / 1e9, int(parts[1]), int(parts[2])))
    return samples
