"""Plan a suite of runs, build what it needs, run and record each."""

from __future__ import annotations

import csv
import shlex
import signal
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .builder import build_language
from .progress import Progress, fmt_bytes
from .registry import Impl, Language, program_env
from .launcher import Outcome, run_process
from .storage import RunStore, row_key, utc_now
from .validation import validate
from .workloads import WORKLOADS


@dataclass(frozen=True)
class Part:
    """One block of a suite: these workloads at these sizes, optionally with
    their own repeat count, sleep time and iteration count."""
    workloads: list[str]
    ns: list[int]
    buffers: list[int]
    repeat: int | None = None
    duration_ms: int | None = None
    iterations: int | None = None


@dataclass(frozen=True)
class Settings:
    parts: list[Part]
    repeat: int
    duration_ms: int
    iterations: int | None
    timeout_s: float
    max_rss_bytes: int
    sample_interval_s: float
    build: bool = True


@dataclass(frozen=True)
class Planned:
    impl: Impl
    workload: str
    n: int
    buffer: int | None
    rep: int
    duration_ms: int
    iterations: int

    @property
    def label(self) -> str:
        buf = f" B={self.buffer}" if self.buffer is not None else ""
        return f"{self.impl.id} {self.workload} N={self.n}{buf} rep {self.rep}"

    @property
    def key(self) -> tuple[str, str, str, str, str]:
        """The identity storage.row_key gives its recorded row."""
        return row_key({"impl": self.impl.id, "workload": self.workload, "n": self.n,
                        "buffer": self.buffer, "rep": self.rep})


def plan(impls: list[Impl], s: Settings) -> list[Planned]:
    """Repeats are the outer loop, so that a drift in the machine's state
    spreads over all implementations instead of hitting one, and an
    interrupted suite already holds a complete first pass."""
    runs: list[Planned] = []
    seen: set[tuple[str, str, int, int | None, int]] = set()
    for rep in range(1, max((p.repeat or s.repeat for p in s.parts), default=0) + 1):
        for impl in impls:
            for part in s.parts:
                if rep > (part.repeat or s.repeat):
                    continue
                for workload in part.workloads:
                    if workload not in impl.workloads:
                        continue
                    buffers: list[int | None] = (list(part.buffers) if WORKLOADS[workload].uses_buffer
                                                 else [None])
                    for n in part.ns:
                        for buffer in buffers:
                            key = (impl.id, workload, n, buffer, rep)
                            if key in seen:
                                continue
                            seen.add(key)
                            runs.append(Planned(
                                impl, workload, n, buffer, rep,
                                duration_ms=part.duration_ms or s.duration_ms,
                                iterations=(part.iterations or s.iterations
                                            or WORKLOADS[workload].default_iterations)))
    return runs


History = dict[tuple[str, str, str, str, str], float]


def load_history(out: Path) -> History:
    """Median seconds per (impl, workload, n, buffer, iterations) over the
    earlier runs in OUT, to estimate a suite from this machine's own past.
    For sleep it keeps the spawn time, since the sleep itself is known."""
    seen: dict[tuple[str, str, str, str, str], list[float]] = {}
    for path in out.glob("*/runs.csv"):
        try:
            with path.open(newline="") as f:
                for r in csv.DictReader(f):
                    value = r.get("spawn_s") if r.get("workload") == "sleep" else r.get("wall_s")
                    if value:
                        key = (r["impl"], r["workload"], r["n"], r["buffer"], r["iterations"])
                        seen.setdefault(key, []).append(float(value))
        except (OSError, csv.Error, KeyError, ValueError):
            continue
    return {k: statistics.median(v) for k, v in seen.items()}


def history_key(p: Planned) -> tuple[str, str, str, str, str]:
    return (p.impl.id, p.workload, str(p.n), "" if p.buffer is None else str(p.buffer),
            str(p.iterations))


def estimate_s(p: Planned, history: History | None = None) -> float:
    """How long one run should take: from this machine's earlier runs when
    there are any, else a rough guess."""
    start = 0.3
    past = (history or {}).get(history_key(p))
    if p.workload == "sleep":
        spawn = past if past is not None else p.n * 5e-6
        return start + p.iterations * (p.duration_ms / 1000 + spawn)
    if past is not None:
        return past
    per_task = 1e-6 if p.workload == "bounded" else 2e-6
    return start + p.iterations * p.n * per_task


def make_row(run_id: str, p: Planned, status: str, **fields: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "run_id": run_id, "impl": p.impl.id, "language": p.impl.language.name,
        "runtime": p.impl.runtime, "workload": p.workload, "n": p.n, "buffer": p.buffer,
        "rep": p.rep, "status": status, "expected": WORKLOADS[p.workload].expected(p.n),
        "iterations": p.iterations, "started_at": utc_now(),
    }
    row.update(fields)
    return row


def program_argv(p: Planned) -> list[str]:
    argv = [*p.impl.argv(), p.workload, "--n", str(p.n)]
    if p.buffer is not None:
        argv += ["--buffer", str(p.buffer)]
    if p.workload == "sleep":
        argv += ["--duration-ms", str(p.duration_ms)]
    argv += ["--iterations", str(p.iterations)]
    return argv


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:300] if lines else ""


def classify(p: Planned, s: Settings, out: Outcome) -> tuple[str, str, dict[str, Any]]:
    """(status, error, program JSON) for one finished process."""
    if out.status == "oom":
        return "oom", f"RSS passed --max-rss {fmt_bytes(s.max_rss_bytes)}; process tree killed", {}
    if out.status == "timeout":
        return "timeout", f"no exit within {s.timeout_s:g} s; process tree killed", {}
    if out.signal is not None:
        try:
            name = signal.Signals(out.signal).name
        except ValueError:
            name = f"signal {out.signal}"
        hint = " (the kernel's OOM killer?)" if out.signal == 9 else ""
        detail = _last_line(out.stderr)
        return "crashed", f"killed by {name}{hint}" + (f": {detail}" if detail else ""), {}
    if out.exit_code != 0:
        return "crashed", f"exit {out.exit_code}: {_last_line(out.stderr) or 'no message'}", {}
    verdict = validate(out.stdout, p.workload, p.n, p.buffer, p.iterations, p.duration_ms,
                       p.impl.tasks_start)
    return ("ok" if verdict.ok else "invalid"), verdict.error, verdict.data


def measure(run_id: str, p: Planned, s: Settings) -> tuple[dict[str, Any], Outcome]:
    argv = program_argv(p)
    started = utc_now()
    out = run_process(argv, program_env(p.impl.env), str(p.impl.language.dir), s.timeout_s,
                      s.max_rss_bytes, s.sample_interval_s)
    status, error, data = classify(p, s, out)
    iter_ns = data.get("iter_ns") or []
    row = make_row(
        run_id, p, status, started_at=started, exit_code=out.exit_code, signal=out.signal,
        wall_s=out.wall_s, cpu_user_s=out.cpu_user_s, cpu_sys_s=out.cpu_sys_s,
        peak_rss_bytes=out.peak_rss_bytes, peak_rss_method=out.peak_rss_method,
        sampled_peak_rss_bytes=out.sampled_peak_rss_bytes, max_threads=out.max_threads,
        result=data.get("result"), command=shlex.join(argv), error=error,
        output=out.stdout.strip()[:2000])
    if status == "ok":
        row["first_iter_s"] = iter_ns[0] / 1e9
        if len(iter_ns) > 1:
            row["warm_iter_s"] = statistics.median(iter_ns[1:]) / 1e9
        if "spawn_ns" in data:
            row["spawn_s"] = data["spawn_ns"] / 1e9
    return row, out


def prepare_languages(langs: list[Language], s: Settings, run_dir: Path,
                      progress: Progress | None) -> dict[str, tuple[str, str]]:
    """For each language: ("ready", "") or (status, reason) for its rows."""
    state: dict[str, tuple[str, str]] = {}
    for lang in langs:
        tool = lang.toolchain
        if not tool.present:
            state[lang.name] = ("skipped", f"toolchain missing: {tool.version}")
        elif s.build:
            if progress:
                progress.message(f"building {lang.name} ({tool.version}) ...")
            result = build_language(lang, run_dir / f"build-{lang.name}.log")
            state[lang.name] = ("ready", "") if result.ok else ("build-failed", result.error)
        else:
            state[lang.name] = ("ready", "")
    return state


def execute(run_id: str, runs: list[Planned], s: Settings, store: RunStore,
            progress: Progress) -> dict[str, int]:
    langs: list[Language] = []
    for p in runs:
        if p.impl.language not in langs:
            langs.append(p.impl.language)
    state = prepare_languages(langs, s, store.dir, progress)
    counts: dict[str, int] = {}
    checked: dict[str, tuple[str, str]] = {}
    for i, p in enumerate(runs):
        progress.start(i, p.label)
        lang_status, reason = state[p.impl.language.name]
        if lang_status == "ready":
            if p.impl.id not in checked:
                avail = p.impl.available()
                checked[p.impl.id] = ("ready", "") if avail.present else (
                    "skipped", f"not available: {avail.version}")
            lang_status, reason = checked[p.impl.id]
        if lang_status != "ready":
            row = make_row(run_id, p, lang_status, error=reason, command=shlex.join(program_argv(p)))
        else:
            row, out = measure(run_id, p, s)
            store.append_samples(row, out.samples)
        store.append_run(row)
        counts[row["status"]] = counts.get(row["status"], 0) + 1
        progress.finish(row)
    return counts
