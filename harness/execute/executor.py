"""One planned run, executed: launch the program (or serve and load it),
validate what it printed, classify how it ended, and turn all of it into a
runs.csv row. Decides nothing about what runs: the plan did.

`Executor` is the interface the session drives; `ProcessExecutor` is the
real one, and a test may put a fake in its place (hyperfine's mock
executor) to check the pipeline without starting a process.
"""

from __future__ import annotations

import dataclasses
import os
import shlex
import shutil
import signal
import statistics
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Protocol

from .builder import Readiness
from ..core.envinfo import mask_value, scrub, secrets_in
from ..core.formatting import fmt_bytes, fmt_number
from ..processes.launcher import STDOUT_CAP_BYTES, Ended, Outcome, Sample, alive, run_process
from .loadtest import measure_server
from .machineload import LoadProbe
from ..plan.plan import Planned
from ..core.registry import program_env
from ..core.schema import Row, Status, utc_now
from ..core.workloads import CPUS
from ..plan.settings import Settings
from .validation import Answer, validate

NS = 1e9


@dataclass
class Executed:
    """What one run leaves: its row and the launcher's samples."""
    row: Row
    samples: list[Sample] = field(default_factory=list)


class Executor(Protocol):
    def run(self, p: Planned) -> Executed:
        """Run one planned program to its row."""


def make_row(run_id: str, p: Planned, status: Status, started_at: str | None = None,
             **figures: Any) -> Row:
    """The row of one planned run: its configuration from the plan, then
    what was measured (Row's fields, as keywords)."""
    return Row(
        run_id=run_id, impl=p.impl.id, variant=p.impl.variant or None,
        version=p.impl.release or None, language=p.impl.language.name,
        runtime=p.impl.runtime, workload=p.key.workload, n=p.key.n,
        buffer=p.key.buffer, **dict(p.key.params), rep=p.rep, status=status,
        expected=p.workload.expected(p.key.n) if p.workload.expected else None,
        iterations=p.iterations, warmup_ms=p.warmup_ms,
        started_at=started_at if started_at is not None else utc_now(),
        duration_ms=p.duration_ms if p.workload.uses_duration else None,
        command=shlex.join(mask_value(arg) for arg in p.command()), **figures)


def masked_output(row: Row, secrets: list[str]) -> Row:
    """The row's cells that hold what a program (or its build) printed, its
    error and its stderr's tail, with each secret the harness handed it
    masked (envinfo.secrets_in). The output is masked where it is cut
    (ProcessExecutor.run), so that a secret across the cut is masked whole."""
    if isinstance(row.error, str):
        row.error = scrub(row.error, secrets)
    if isinstance(row.stderr_tail, str):
        row.stderr_tail = scrub(row.stderr_tail, secrets)
    return row


def unready_row(run_id: str, p: Planned, ready: Readiness) -> Executed:
    """The row of a run that could not start (skipped, build-failed)."""
    return Executed(masked_output(make_row(run_id, p, ready.status, error=ready.reason),
                                  secrets_in(p.impl.env, p.argv())))


@dataclass
class Iterations:
    """A program's iteration times as its row records them (Row's fields of
    the same names)."""
    first_iter_s: float
    warmup_runs: int
    warmup_s: float
    warm_iter_s: float | None = None


def iteration_fields(iter_ns: list[int], warmup_ns: list[int]) -> Iterations:
    """Cold is the process's first run of the workload, the warm-up's first
    when there was one; warm is the median of the timed iterations after
    the warm-up, or after the first iteration when there was none."""
    warm = iter_ns if warmup_ns else iter_ns[1:]
    return Iterations(first_iter_s=(warmup_ns or iter_ns)[0] / NS, warmup_runs=len(warmup_ns),
                      warmup_s=sum(warmup_ns) / NS,
                      warm_iter_s=statistics.median(warm) / NS if warm else None)


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:300] if lines else ""


def classify(p: Planned, s: Settings, out: Outcome) -> tuple[Status, str, dict[str, Any]]:
    """(status, error, program JSON) for one finished process."""
    if out.launcher_failure:  # the instrument failed, not the program: never blamed on it
        return Status.CRASHED, (f"the launcher {out.launcher_failure}; its program tree was "
                                f"killed by the harness"), {}
    if out.status == Ended.OOM:
        return (Status.OOM, f"RSS passed --max-rss {fmt_bytes(s.max_rss_bytes)}; process tree "
                "killed", {})
    if out.status == Ended.TIMEOUT:
        return (Status.TIMEOUT, f"no exit within {fmt_number(p.timeout_s)} s; process tree killed",
                {})
    if out.stdout_truncated:  # the launcher stopped it with SIGKILL: before the signal
        return Status.INVALID, (f"output too large (over {fmt_bytes(STDOUT_CAP_BYTES)} on "
                                "stdout); process tree killed"), {}
    detail = _last_line(out.stderr_tail)
    if out.signal is not None:
        try:
            name = signal.Signals(out.signal).name
        except ValueError:
            name = f"signal {out.signal}"
        # Named only on evidence: the kernel's OOM-kill count rose during the run.
        hint = " by the kernel's OOM killer" if out.oom_killed else ""
        return Status.CRASHED, f"killed by {name}{hint}" + (f": {detail}" if detail else ""), {}
    if out.exit_code != 0:
        return Status.CRASHED, f"exit {out.exit_code}: {detail or 'no message'}", {}
    verdict = validate(out.stdout, p.request)
    return (Status.OK if verdict.ok else Status.INVALID), verdict.error, verdict.data


# Runtimes keep caches between runs (Deno's V8 code cache in ~/.cache/deno,
# Bun's transpiler cache): each run gets its own empty ones, so that every run
# starts in the same state (docs/protocol.md, "Every run starts cold");
# Python instead writes no bytecode at all (registry.program_env).
def fresh_caches(folder: str) -> dict[str, str]:
    return {"XDG_CACHE_HOME": folder, "DENO_DIR": os.path.join(folder, "deno"),
            "BUN_RUNTIME_TRANSPILER_CACHE_PATH": os.path.join(folder, "bun"),
            "NODE_COMPILE_CACHE": os.path.join(folder, "node")}


Measured = tuple[Outcome, Status, str, Answer, dict[str, Any], float | None]

# Each run's runtime caches: a folder in TMPDIR named for the harness's pid,
# removed after the run; one left by a harness that was SIGKILLed is removed
# by the next one (sweep_caches).
CACHE_PREFIX = "harness-cache-"


def sweep_caches() -> None:
    """Remove the cache folders of harnesses that are gone: ours (same
    user), named CACHE_PREFIX + a pid no longer running."""
    tmp = Path(tempfile.gettempdir())
    for folder in tmp.glob(CACHE_PREFIX + "*"):
        pid = folder.name[len(CACHE_PREFIX):].partition("-")[0]
        try:
            owned = folder.lstat().st_uid == os.getuid() and folder.is_dir()
        except OSError:
            continue
        if owned and pid.isdigit() and not alive(int(pid)):
            shutil.rmtree(folder, ignore_errors=True)


class ProcessExecutor:
    """Runs each planned program as a real process under the launcher (a
    server workload: under load from the load generator)."""

    def __init__(self, run_id: str, s: Settings,
                 loadgen: Callable[[], Path | None] = lambda: None,
                 perf: str | None = None) -> None:
        self.run_id, self.s, self.loadgen, self.perf = run_id, s, loadgen, perf
        sweep_caches()

    def run(self, p: Planned) -> Executed:
        started = utc_now()
        probe = LoadProbe.start()
        with tempfile.TemporaryDirectory(prefix=f"{CACHE_PREFIX}{os.getpid()}-") as cache:
            env = (program_env(p.workload.env(p.request) | p.impl.env_for(
                p.request.param(CPUS.name)), self.s.inherit_env) | fresh_caches(cache))
            secrets = secrets_in(env, p.argv())
            out, status, error, answer, figures, generator_cpu = self._measure(p, env, secrets)
        # The load generator's CPU is the machine's load too, but it is part of
        # the measurement: it is counted as measured (and recorded by loadtest).
        measured_cpu = sum(v or 0.0 for v in (out.cpu_user_s, out.cpu_sys_s,
                                              out.sampler_cpu_s, generator_cpu))
        row = make_row(
            self.run_id, p, status, started_at=started, exit_code=out.exit_code,
            signal=out.signal, wall_s=out.wall_s, cpu_user_s=out.cpu_user_s,
            cpu_sys_s=out.cpu_sys_s, **out.counters.counted(),
            peak_rss_bytes=out.peak_rss_bytes, peak_rss_method=out.peak_rss_method,
            sampled_peak_rss_bytes=out.sampled_peak_rss_bytes, max_threads=out.max_threads,
            result=answer.result, capacity=answer.capacity, error=error,
            load_avg_1m=probe.load_avg_1m, other_cpu_frac=probe.other_cpu_frac(measured_cpu),
            stderr_tail=out.stderr_tail.strip() if status != Status.OK else None, strays=out.strays,
            output=scrub(out.stdout.strip(), secrets)[:2000], **figures)  # masked before it is cut
        return Executed(masked_output(row, secrets), list(out.samples))

    def _measure(self, p: Planned, env: dict[str, str], secrets: list[str]) -> Measured:
        """(outcome, status, error, the program's answer, the workload's
        figures (Row's fields, by name), the load generator's CPU seconds). stderr is masked before its last
        line is cut into the error (a secret cut in two would not be found);
        stdout after it is validated (a mask must not change the answer)."""
        s, argv, cwd = self.s, p.argv(), str(p.impl.language.dir)
        if p.workload.kind == "server":
            # found by the time a server's run is ready (builder.Preparation)
            loadgen = self.loadgen()
            assert loadgen is not None
            served = measure_server(argv, env, cwd, p.request, loadgen, p.timeout_s,
                                    s.max_rss_bytes, s.sample_interval_s, self.perf)
            cpu = served.generator_cpu_s
            served.outcome = _masked_stderr(served.outcome, secrets)
            figures = dataclasses.asdict(served.figures)
            if served.status is not None:
                return served.outcome, served.status, served.error, Answer(), figures, cpu
            status, error, _ = classify(p, s, served.outcome)
            if status == Status.TIMEOUT:  # a server need not exit: its load did not finish
                error = (f"the load did not finish within {fmt_number(p.timeout_s)} s; server tree "
                         "killed")
            if served.error:  # what the load generator saw before the server died or was killed
                error += f"; the load generator: {served.error}"
            return served.outcome, status, error, Answer(), figures, cpu
        out = _masked_stderr(run_process(argv, env, cwd, p.timeout_s, s.max_rss_bytes,
                                         s.sample_interval_s, p.request.param(CPUS.name),
                                         self.perf),
                             secrets)
        status, error, data = classify(p, s, out)
        answer = Answer.of(data)
        figures: dict[str, Any] = {}
        if status == Status.OK:
            figures.update(dataclasses.asdict(iteration_fields(answer.iter_ns,
                                                               answer.warmup_ns or [])))
            if p.workload.fields is not None:  # the workload's declared figures
                figures.update(p.workload.fields(data))
        return out, status, error, answer, figures, None


def _masked_stderr(out: Outcome, secrets: list[str]) -> Outcome:
    return dataclasses.replace(out, stderr_tail=scrub(out.stderr_tail, secrets))
