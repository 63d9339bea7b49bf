"""The run directory: runs.csv, samples.csv, env.json and results/latest."""

from __future__ import annotations

import csv
import json
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from .launcher import Sample

RUN_COLUMNS = [
    "run_id", "impl", "language", "runtime", "workload", "n", "buffer", "rep", "status",
    "exit_code", "signal", "wall_s", "cpu_user_s", "cpu_sys_s", "peak_rss_bytes",
    "peak_rss_method", "sampled_peak_rss_bytes", "max_threads", "result", "expected",
    "iterations", "first_iter_s", "warm_iter_s", "spawn_s", "started_at", "command", "error",
    "output",
]
SAMPLE_COLUMNS = ["run_id", "impl", "workload", "n", "buffer", "rep", "t_s", "rss_bytes", "threads"]
STATUSES = ("ok", "invalid", "timeout", "oom", "crashed", "skipped", "build-failed")


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def new_run_id() -> str:
    return datetime.now().strftime("%Y%m%d-%H%M%S")


def row_key(row: dict[str, Any]) -> tuple[str, str, str, str, str]:
    """Identity of a planned run across a resume."""
    return (str(row["impl"]), str(row["workload"]), str(row["n"]),
            "" if row["buffer"] is None else str(row["buffer"]), str(row["rep"]))


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        # Nanosecond resolution: seed 003's small cases take microseconds.
        return f"{value:.9f}".rstrip("0").rstrip(".") if value else "0"
    return str(value)


class RunStore:
    """Appends rows as runs finish and flushes each, so an interrupted suite
    keeps every completed row."""

    def __init__(self, run_dir: Path) -> None:
        self.dir = run_dir
        self.runs_path = run_dir / "runs.csv"
        self.samples_path = run_dir / "samples.csv"
        self.env_path = run_dir / "env.json"

    def create(self) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        for path, columns in ((self.runs_path, RUN_COLUMNS), (self.samples_path, SAMPLE_COLUMNS)):
            if not path.exists():
                with path.open("w", newline="") as f:
                    csv.writer(f).writerow(columns)

    def read_runs(self) -> list[dict[str, str]]:
        if not self.runs_path.exists():
            return []
        with self.runs_path.open(newline="") as f:
            return list(csv.DictReader(f))

    def keep_only_ok(self) -> set[tuple[str, str, str, str, str]]:
        """For --resume: keep ok rows, move the rest to retried.csv (they are
        about to be run again), and return the keys already done."""
        rows = self.read_runs()
        ok = [r for r in rows if r["status"] == "ok"]
        retried = [r for r in rows if r["status"] != "ok"]
        if retried:
            retried_path = self.dir / "retried.csv"
            new = not retried_path.exists()
            with retried_path.open("a", newline="") as f:
                writer = csv.DictWriter(f, RUN_COLUMNS)
                if new:
                    writer.writeheader()
                writer.writerows(retried)
            tmp = self.runs_path.with_suffix(".tmp")
            with tmp.open("w", newline="") as f:
                writer = csv.DictWriter(f, RUN_COLUMNS)
                writer.writeheader()
                writer.writerows(ok)
            tmp.replace(self.runs_path)
        return {row_key(r) for r in ok}

    def append_run(self, row: dict[str, Any]) -> None:
        with self.runs_path.open("a", newline="") as f:
            csv.writer(f).writerow([_cell(row.get(c)) for c in RUN_COLUMNS])
            f.flush()
            os.fsync(f.fileno())

    def append_samples(self, row: dict[str, Any], samples: list[Sample]) -> None:
        if not samples:
            return
        prefix = [_cell(row.get(c)) for c in SAMPLE_COLUMNS[:6]]
        with self.samples_path.open("a", newline="") as f:
            writer = csv.writer(f)
            writer.writerows(prefix + [f"{s.t_s:.4f}", s.rss_bytes, s.threads] for s in samples)

    def write_env(self, env: dict[str, Any]) -> None:
        tmp = self.env_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(env, indent=2) + "\n")
        tmp.replace(self.env_path)

    def read_env(self) -> dict[str, Any]:
        return json.loads(self.env_path.read_text()) if self.env_path.exists() else {}


def point_latest(out: Path, run_dir: Path) -> None:
    """results/latest -> the newest run directory (a relative symlink)."""
    link = out / "latest"
    tmp = out / ".latest.tmp"
    if tmp.is_symlink() or tmp.exists():
        tmp.unlink()
    tmp.symlink_to(run_dir.name)
    tmp.replace(link)
