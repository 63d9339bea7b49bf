"""The pipeline's stages apart: the plan decides, an executor runs, the run
directory records. A fake executor (hyperfine's mock executor) drives the
session's loop without starting a process."""

from __future__ import annotations

import ast
from pathlib import Path

from harness import session
from harness.builder import Readiness
from harness.executor import Executed, make_row
from harness.plan import Planned, plan
from harness.progress import Progress
from harness.registry import resolve
from harness.rundir import RunDir
from harness.settings import settings_from

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


def _imports(path: Path) -> list[tuple[str, str]]:
    tree = ast.parse(path.read_text())
    return [(node.module or "", alias.name) for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.level > 0 for alias in node.names]


def test_nothing_private_is_imported_across_modules() -> None:
    private = [f"{path.relative_to(HARNESS)}: {module}.{name}"
               for path in [*HARNESS.glob("*.py"), *HARNESS.glob("plots/*.py")]
               for module, name in _imports(path) if name.startswith("_") and not name.startswith("__")]
    assert not private


def test_no_module_both_plans_and_runs() -> None:
    """The plan decides what runs and starts nothing; the executor runs one
    planned run and decides nothing about which: neither imports the other's
    side, and the session, which wires them, does neither itself."""
    def modules(name: str) -> set[str]:
        return {m for m, _ in _imports(HARNESS / f"{name}.py")}
    assert not modules("plan") & {"launcher", "executor", "builder", "loadtest", "session"}
    session_calls = (HARNESS / "session.py").read_text()
    assert "run_process" not in session_calls and "measure_server" not in session_calls
    assert "def plan(" not in session_calls


def test_no_import_cycle() -> None:
    graph = {path.stem: {m.split(".")[0] for m, _ in _imports(path) if m}
             for path in HARNESS.glob("*.py")}
    graph["launcher"] = {m.split(".")[0] for m, _ in _imports(HARNESS / "launcher" / "__init__.py")
                         if m}
    # the plots package as one node: what any of its modules imports (its
    # modules' own names are none of the harness's, so they lead nowhere here)
    graph["plots"] = {m.split(".")[0] for path in (HARNESS / "plots").glob("*.py")
                      for m, _ in _imports(path) if m}
    done: set[str] = set()

    def visit(name: str, path: tuple[str, ...]) -> None:
        assert name not in path, " -> ".join(path + (name,))
        if name in done or name not in graph:
            return
        for dep in graph[name]:
            visit(dep, path + (name,))
        done.add(name)

    for name in graph:
        visit(name, ())
