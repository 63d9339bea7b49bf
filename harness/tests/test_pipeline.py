"""The pipeline's stages apart: the plan decides, an executor runs, the run
directory records. A fake executor (hyperfine's mock executor) drives the
session's loop without starting a process."""

from __future__ import annotations

from pathlib import Path

from harness import session
from harness.execute.builder import Readiness
from harness.execute.executor import Executed, make_row
from harness.plan.plan import Planned, plan
from harness.execute.progress import Progress
from harness.core.registry import resolve
from harness.record.rundir import RunDir
from harness.plan.settings import settings_from

HARNESS = Path(__file__).resolve().parents[1]


class FakeExecutor:
    """Answers each planned run with a made-up row: no process, no clock."""

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        self.ran: list[str] = []

    def run(self, p: Planned) -> Executed:
        self.ran.append(p.label)
        status = "ok" if p.rep == 1 else "crashed"
        return Executed(make_row(self.run_id, p, status, wall_s=0.5 * p.key.n,
                                 error="" if status == "ok" else "exit 1: boom"))


def test_the_session_records_what_the_executor_returns(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("BENCH_IMPLS_PATH", str(HARNESS / "tests" / "fakes"))
    s = settings_from({"impl": "fake-good,fake-wrong", "workload": "chain", "n": "3,4",
                       "repeat": 2}, ram_bytes=1 << 30)
    runs = plan(resolve(s.impls), s)
    run = RunDir.create_new(tmp_path)
    fake = FakeExecutor(run.name)
    # fake-wrong cannot start: its rows are skipped rows, and the executor never sees it
    ready = lambda p: Readiness("ready") if p.impl.id == "fake-good" else Readiness(  # noqa: E731
        "skipped", "toolchain missing: none here")
    counts = session.execute(run, runs, ready, fake, Progress(len(runs), [0.0] * len(runs)))
    rows = run.runs().rows
    assert [(r["impl"], r["n"], r["rep"], r["status"]) for r in rows] == [
        (p.impl.id, p.key.n, p.rep, "skipped" if p.impl.id == "fake-wrong" else
         "ok" if p.rep == 1 else "crashed") for p in runs]
    assert fake.ran == [p.label for p in runs if p.impl.id == "fake-good"]
    assert counts == {"ok": 2, "crashed": 2, "skipped": 4}
    assert rows[0]["wall_s"] == 1.5 and rows[-1]["error"] == "toolchain missing: none here"

