"""One `run`: plan the suite, build what it needs, run and validate each
program, record every row in the run directory, and say what happened."""

from __future__ import annotations

import json
import os
import shlex
import signal
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Sequence

from . import ROOT, HarnessError, UsageError
from .builder import Readiness, prepare
from .envinfo import git, host, redact
from .formatting import fmt_bytes, fmt_duration
from .launcher import STDOUT_CAP_BYTES, LauncherError, Outcome, ensure_launcher, run_process
from .loadgen import Unavailable, ensure_k6
from .loadtest import measure_server
from .machineload import LoadProbe, load_avg_1m
from .plan import Planned, estimate_s, load_history, omitted, plan
from .progress import Progress
from .registry import Impl, Language, load_registry, program_env, select
from .rundir import (RowWriteError, RunDir, RunDirError, check_out, latest, point_latest,
                     utc_now)
from .settings import Settings
from .validation import validate

NS = 1e9


class Interrupted(Exception):
    def __init__(self, signum: int) -> None:
        self.signum = signum


def _raise_interrupted(signum: int, _frame: object) -> None:
    raise Interrupted(signum)


# A closed terminal (HUP) stops a suite the way Ctrl-C (INT) and kill (TERM) do.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def relative(path: Path) -> str:
    """A path as the user would type it from the repository."""
    try:
        return str(path.resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


def resolve_impls(names: list[str], registries: Sequence[str] = ()) -> list[Impl]:
    impls = load_registry([Path(r) for r in registries])
    return impls if names == ["all"] else select(impls, names)


def iteration_fields(iter_ns: list[int], warmup_ns: list[int]) -> dict[str, Any]:
    """Cold is the process's first run of the workload, the warm-up's first
    when there was one; warm is the median of the timed iterations after
    the warm-up, or after the first iteration when there was none."""
    fields: dict[str, Any] = {"first_iter_s": (warmup_ns or iter_ns)[0] / NS,
                              "warmup_runs": len(warmup_ns), "warmup_s": sum(warmup_ns) / NS}
    warm = iter_ns if warmup_ns else iter_ns[1:]
    if warm:
        fields["warm_iter_s"] = statistics.median(warm) / NS
    return fields


def make_row(run_id: str, p: Planned, status: str, **fields: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "run_id": run_id, "impl": p.impl.id, "language": p.impl.language.name,
        "runtime": p.impl.runtime, "workload": p.key.workload, "n": p.key.n,
        "buffer": p.key.buffer, **dict(p.key.params), "rep": p.rep, "status": status,
        "expected": p.workload.expected(p.key.n) if p.workload.expected else None,
        "iterations": p.iterations, "warmup_ms": p.warmup_ms, "started_at": utc_now(),
        "command": shlex.join(p.argv()),
    }
    row.update(fields)
    return row


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:300] if lines else ""


def classify(p: Planned, s: Settings, out: Outcome) -> tuple[str, str, dict[str, Any]]:
    """(status, error, program JSON) for one finished process."""
    if out.status == "oom":
        return "oom", f"RSS passed --max-rss {fmt_bytes(s.max_rss_bytes)}; process tree killed", {}
    if out.status == "timeout":
        return "timeout", f"no exit within {p.timeout_s:g} s; process tree killed", {}
    if out.stdout_truncated:  # the launcher stopped it with SIGKILL: before the signal
        return "invalid", f"output too large (over {fmt_bytes(STDOUT_CAP_BYTES)} on stdout); " \
                          "process tree killed", {}
    detail = _last_line(out.stderr_tail)
    if out.signal is not None:
        try:
            name = signal.Signals(out.signal).name
        except ValueError:
            name = f"signal {out.signal}"
        # Named only on evidence: the kernel's OOM-kill count rose during the run.
        hint = " by the kernel's OOM killer" if out.oom_killed else ""
        return "crashed", f"killed by {name}{hint}" + (f": {detail}" if detail else ""), {}
    if out.exit_code != 0:
        return "crashed", f"exit {out.exit_code}: {detail or 'no message'}", {}
    verdict = validate(out.stdout, p.request)
    return ("ok" if verdict.ok else "invalid"), verdict.error, verdict.data


def _run(p: Planned, s: Settings, k6: Path | None) -> tuple[Outcome, str, str, dict[str, Any],
                                                           dict[str, Any]]:
    """Run one planned program (or serve and load it): (outcome, status,
    error, program JSON, extra row fields)."""
    with tempfile.TemporaryDirectory(prefix="harness-cache-") as cache:
        env = program_env(p.impl.env_for(p.request.param("cpus"))) | fresh_caches(cache)
        return _run_with(p, s, k6, env)


# Runtimes keep caches between runs (Deno's V8 code cache in ~/.cache/deno,
# Bun's transpiler cache): each run gets its own empty ones, so that every run
# starts in the same state (docs/protocol.md, "Every run starts cold");
# Python instead writes no bytecode at all (registry.program_env).
def fresh_caches(folder: str) -> dict[str, str]:
    return {"XDG_CACHE_HOME": folder, "DENO_DIR": os.path.join(folder, "deno"),
            "BUN_RUNTIME_TRANSPILER_CACHE_PATH": os.path.join(folder, "bun"),
            "NODE_COMPILE_CACHE": os.path.join(folder, "node")}


def _run_with(p: Planned, s: Settings, k6: Path | None, env: dict[str, str]
              ) -> tuple[Outcome, str, str, dict[str, Any], dict[str, Any]]:
    argv, cwd = p.argv(), str(p.impl.language.dir)
    if p.workload.kind == "server":
        assert k6 is not None
        served = measure_server(argv, env, cwd, p.request, k6, p.timeout_s, s.max_rss_bytes,
                                s.sample_interval_s)
        if served.status is not None:
            return served.outcome, served.status, served.error, {}, served.fields
        status, error, _ = classify(p, s, served.outcome)
        if status == "timeout":  # a server is not expected to exit: its load did not finish
            error = f"the load did not finish within {p.timeout_s:g} s; server tree killed"
        if served.error:  # what the load generator saw before the server died or was killed
            error += f"; k6: {served.error}"
        return served.outcome, status, error, {}, served.fields
    out = run_process(argv, env, cwd, p.timeout_s, s.max_rss_bytes, s.sample_interval_s,
                      p.request.param("cpus"))
    status, error, data = classify(p, s, out)
    fields: dict[str, Any] = {}
    if status == "ok":
        fields.update(iteration_fields(data["iter_ns"], data.get("warmup_ns") or []))
        if p.workload.fields is not None:
            fields.update(p.workload.fields(data))
    return out, status, error, data, fields


def measure(run_id: str, p: Planned, s: Settings,
            k6: Path | None = None) -> tuple[dict[str, Any], Outcome]:
    started = utc_now()
    probe = LoadProbe.start()
    out, status, error, data, fields = _run(p, s, k6)
    # The load generator's CPU is the machine's load too, but it is part of
    # the measurement: it is counted as measured, and recorded (gen_cpu_s).
    measured_cpu = sum(v or 0.0 for v in (out.cpu_user_s, out.cpu_sys_s, out.sampler_cpu_s,
                                          fields.get("gen_cpu_s")))
    other_cpu_frac = probe.other_cpu_frac(measured_cpu)
    row = make_row(
        run_id, p, status, started_at=started, exit_code=out.exit_code, signal=out.signal,
        wall_s=out.wall_s, cpu_user_s=out.cpu_user_s, cpu_sys_s=out.cpu_sys_s,
        peak_rss_bytes=out.peak_rss_bytes, peak_rss_method=out.peak_rss_method,
        sampled_peak_rss_bytes=out.sampled_peak_rss_bytes, max_threads=out.max_threads,
        result=data.get("result"), capacity=data.get("capacity"), error=error,
        load_avg_1m=probe.load_avg_1m, other_cpu_frac=other_cpu_frac,
        stderr_tail=out.stderr_tail.strip() if status != "ok" else None, strays=out.strays,
        output=out.stdout.strip()[:2000], **fields)
    return row, out


def _languages(impls: list[Impl]) -> list[Language]:
    langs: list[Language] = []
    for i in impls:
        if i.language not in langs:
            langs.append(i.language)
    return langs


def execute(run: RunDir, runs: list[Planned], s: Settings, progress: Progress) -> dict[str, int]:
    """Build each language once, then run the plan in order, appending each
    row as it finishes. Returns the count of rows per status."""
    state: dict[str, Readiness] = {}
    for lang in _languages([p.impl for p in runs]):
        if lang.toolchain.present and s.build:
            progress.message(f"building {lang.name} ({lang.toolchain.version}) ...")
        state[lang.name] = prepare(lang, run.path / f"build-{lang.name}.log", s.build)
    counts: dict[str, int] = {}
    checked: dict[str, Readiness] = {}
    k6: Path | None = None
    generator = Readiness("ready")
    if any(p.workload.kind == "server" for p in runs):
        progress.message("checking the load generator (k6) ...")
        try:
            k6 = ensure_k6()
        except Unavailable as exc:
            generator = Readiness("skipped", f"no load generator: {exc}")
    for i, p in enumerate(runs):
        progress.start(i, p.label)
        ready = state[p.impl.language.name]
        if ready.ready:
            if p.impl.id not in checked:
                avail = p.impl.available()
                checked[p.impl.id] = Readiness("ready") if avail.present else Readiness(
                    "skipped", f"not available: {avail.reason}")
            ready = checked[p.impl.id]
        if ready.ready and p.workload.kind == "server":
            ready = generator
        if not ready.ready:
            row = make_row(run.name, p, ready.status, error=ready.reason)
        else:
            row, out = measure(run.name, p, s, k6)
            if out.samples:
                run.append_samples(row, out.samples)
        run.append_run(row)
        counts[row["status"]] = counts.get(row["status"], 0) + 1
        progress.finish(row)
    return counts


def _basis(runs: list[Planned], history: dict, out: Path) -> str:
    """What an estimate rests on, in words."""
    known = sum(1 for p in runs if (p.key, p.iterations, p.warmup_ms) in history)
    if known == len(runs):
        return f"every run timed before on this machine ({relative(out)})"
    if not known:
        return "a rough guess: no earlier run of these configurations in " + relative(out)
    return f"{known} of {len(runs)} runs timed before in {relative(out)}, the rest guessed"


def _registries(s: Settings) -> dict[str, str]:
    """The --registry files' contents: a run says how its programs were declared."""
    out = {}
    for name in s.registries:
        path = Path(name).resolve()
        try:
            out[str(path)] = path.read_text()
        except OSError:
            out[str(path)] = ""
    return out


def _invocation(s: Settings, impls: list[Impl], resumed: bool) -> dict[str, Any]:
    return {"started_at": utc_now(), "finished_at": None, "command": sys.argv,
            "resumed": resumed, "git": git(), "impls": [i.id for i in impls],
            "settings": s.record(), "load_avg_1m": {"start": load_avg_1m(), "end": None}}


def run_suite(s: Settings, out: Path, resume: bool = False, dry_run: bool = False,
              report: bool = True) -> int:
    """The `run` command. Returns the exit status: 0 when every row is ok or
    skipped, 1 otherwise."""
    impls = resolve_impls(s.impls, s.registries)
    runs = plan(impls, s)
    for line in omitted(s):
        print(line, file=sys.stderr)
    if not runs:
        raise UsageError("nothing to run: no selected implementation supports those workloads")
    history = load_history(out)
    if dry_run:
        print(f"{len(runs)} runs, estimated {fmt_duration(sum(estimate_s(p, history) for p in runs))}"
              f" plus builds; {_basis(runs, history, out)}")
        for p in runs:
            print(f"  {p.label}: {shlex.join(p.argv())}")
        return 0
    try:
        ensure_launcher()
    except LauncherError as exc:
        raise HarnessError(str(exc)) from None

    try:
        check_out(out)
        if resume:
            run = latest(out)
            if run is None:
                raise UsageError(f"--resume: no previous run in {out}")
            kept, torn = run.prepare_resume({p.row_key for p in runs})
            if torn:
                print(f"note: {torn}")
            print(f"resuming {run.name}: {sum(1 for p in runs if p.row_key in kept)} runs already ok")
            runs = [p for p in runs if p.row_key not in kept]
            env = run.env()
        else:
            run = RunDir.create_new(out)
            env = {"run_id": run.name, "started_at": utc_now(), "host": host()}
        point_latest(out, run)
    except OSError as exc:
        raise UsageError(f"--out: cannot write {out}: {exc.strerror}") from None
    except RunDirError as exc:
        raise UsageError(str(exc)) from None

    estimates = [estimate_s(p, history) for p in runs]
    print(f"{len(runs)} runs of {len({p.impl.id for p in runs})} implementations, "
          f"estimated {fmt_duration(sum(estimates))} plus builds; {_basis(runs, history, out)}")
    invocation = _invocation(s, impls, resume)
    # The newest invocation's settings and commit at the top; every one of them below.
    env.update(finished_at=None, settings=invocation["settings"], git=invocation["git"],
               toolchains={lang.name: lang.toolchain.version or None for lang in _languages(impls)},
               program_env=redact(program_env()), registries=_registries(s),
               # the implementations the report reads the others against (×floor)
               floor_impls=sorted(set(env.get("floor_impls", [])) | {i.id for i in impls if i.floor}))
    env["invocations"] = env.get("invocations", []) + [invocation]
    write_env(run, env)
    print(f"recording to {relative(run.path)}")

    progress = Progress(len(runs), estimates)
    previous = {sig: signal.signal(sig, _raise_interrupted) for sig in STOP_SIGNALS}
    try:
        counts = execute(run, runs, s, progress)
    except Interrupted as exc:
        progress.close()
        kept_rows = len(run.runs().rows)
        print(f"\ninterrupted: {kept_rows} completed rows kept in {relative(run.runs_path)}; "
              f"continue with --resume", file=sys.stderr)
        return 128 + exc.signum
    except RowWriteError as exc:
        progress.close()
        figures = {k: v for k, v in exc.row.items() if v not in (None, "")}
        print(f"harness: error: {exc}\nharness: the lost row's figures: {json.dumps(figures)}",
              file=sys.stderr)
        return 1
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        progress.close()
    # Runtime versions come from the built programs, so only after the build.
    env["runtimes"] = {i.id: i.runtime for i in impls if i.language.toolchain.present}
    env["finished_at"] = invocation["finished_at"] = utc_now()
    invocation["load_avg_1m"]["end"] = load_avg_1m()
    write_env(run, env)
    summary = ", ".join(f"{v} {k}" for k, v in sorted(counts.items())) or "nothing new"
    print(f"done: {summary}; rows in {relative(run.runs_path)}")
    if report:
        write_report(run.path)
    return 0 if set(counts) <= {"ok", "skipped"} else 1


def write_env(run: RunDir, env: dict[str, Any]) -> None:
    try:
        run.write_env(env)
    except OSError as exc:
        raise HarnessError(f"cannot write {run.env_path}: {exc.strerror or exc}") from None


def write_report(run_dir: Path) -> None:
    """report.md and plots, drawn in a separate process: the measuring
    process never imports matplotlib."""
    proc = subprocess.run([sys.executable, "-m", "harness", "report", str(run_dir)], cwd=ROOT)
    if proc.returncode != 0:
        print("harness: the report could not be written (the rows are kept)", file=sys.stderr)
