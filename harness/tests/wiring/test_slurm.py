"""`run --on slurm`: the plan cut into replicates, the merge of what the
tasks wrote, a row with a status for what they did not, --resume; first on
a fake cluster (a scheduler whose tasks write their rows as a mock
executor would, no process), then on a real one-node Slurm brought up on
this machine by cluster/slurm-local.sh."""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import fcntl
import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

from harness import UsageError
from harness.cluster import slurm_task
from harness.execute.executor import make_row
from harness.processes.interrupts import Interrupted
from harness.plan.plan import Planned, plan
from harness.core.registry import resolve
from harness.cluster.replicates import complete, count, missing, replicate
from harness.record.rundir import RunDir, new_env, point_latest
from harness.core.schema import utc_now
from harness.plan.options import Options
from harness.plan.settings import Part, settings_from
from harness.cluster.layout import OPTIONS_ENV, Layout, options_json, write_json
from harness.cluster.sbatch import JobState, ranges
from harness.cluster.slurm import TOKENS, Cluster, cluster_options, run_on_slurm, task_options

from ..conftest import FAKES, ROOT, SLURM_LOCAL, harness, install_slurm, tool_missing

SUITE = {"impl": "fake-good,fake-wrong", "workload": "chain,bounded", "n": "10", "repeat": 3}


@pytest.fixture(autouse=True)
def fakes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BENCH_IMPLS_PATH", str(FAKES))


def planned(opts: dict[str, Any]) -> list[Planned]:
    s = settings_from(Options.from_record(opts), ram_bytes=1 << 30)
    return plan(resolve(s.impls), s)


# ---------------------------------------------------------------- cutting

def test_each_replicate_is_the_whole_plan_once_in_plan_order() -> None:
    runs = planned(SUITE)
    assert count(runs) == 3
    configurations = [p.key for p in runs if p.rep == 1]
    for r in (1, 2, 3):
        block = replicate(runs, r)
        assert [p.key for p in block] == configurations  # the interleaved order, every configuration
        assert {p.rep for p in block} == {r}  # its rows' rep is the replicate: no two collide
    assert sorted((p.key, p.rep) for r in (1, 2, 3) for p in replicate(runs, r)) == \
        sorted((p.key, p.rep) for p in runs)


def test_a_part_with_fewer_repeats_is_in_the_first_replicates_only() -> None:
    s = settings_from(Options.from_record(SUITE), ram_bytes=1 << 30)
    s = s.__class__(**{**s.__dict__, "parts": [
        Part(["chain"], [10], [1]), Part(["bounded"], [10], [1], repeat=1)]})
    runs = plan(resolve(s.impls), s)
    assert {p.key.workload for p in replicate(runs, 1)} == {"chain", "bounded"}
    assert {p.key.workload for p in replicate(runs, 3)} == {"chain"}


def test_a_replicate_takes_no_sequential_passes_and_leaves_out_failed_builds() -> None:
    runs = planned({**SUITE, "until_settled": True, "max_repeat": 6})
    assert all(p.max_repeat is not None for p in runs)
    block = replicate(runs, 2)
    assert all(p.max_repeat is None and not p.until_settled and p.until_ci is None for p in block)
    assert replicate(runs, 2, languages={"fake"}) == []
    assert {p.impl.id for p in replicate(runs, 2, impls={"fake-wrong"})} == {"fake-good"}


def test_missing_and_complete_read_rows_by_configuration_and_rep() -> None:
    runs = replicate(planned(SUITE), 2)
    rows = [make_row("r", p, "ok") for p in runs]
    assert missing(runs, rows) == [] and complete(runs, rows)
    rows[0].status = "crashed"
    assert missing(runs, rows) == [] and not complete(runs, rows)
    assert missing(runs, rows[1:]) == runs[:1]


def test_ranges_are_slurm_array_lists() -> None:
    assert ranges([3, 1, 2, 5, 8, 7]) == "1-3,5,7-8"
    assert ranges([4]) == "4"


# ---------------------------------------------------------------- options

@pytest.mark.parametrize("opts, message", [
    ({"on": "pbs"}, "--on 'pbs': unknown (known: local, slurm)"),
    ({"on": "slurm", "nodes": 0}, "--nodes must be a positive integer"),
    ({"nodes": 2}, "--nodes is for --on slurm"),
    ({"on": "local", "partition": "p"}, "--partition is for --on slurm"),
    ({"on": "slurm", "partition": "a,b"}, "name one partition"),
    ({"on": "slurm", "slurm_opt": "--account 'x"}, "--slurm-opt: No closing quotation"),
    ({"on": "slurm", "slurm_opt": "--qos=q --array=1-9"}, "--slurm-opt: --array is set by the harness"),
    ({"on": "slurm", "slurm_opt": "-o x"}, "--slurm-opt: -o is set by the harness"),
    ({"on": "slurm", "until_settled": True}, "--until-settled picks runs from every node's rows"),
])
def test_bad_cluster_options_are_usage_errors(opts: dict[str, Any], message: str) -> None:
    with pytest.raises(UsageError, match=re.escape(message)):
        cluster_options(Options.from_record(opts))


def test_cluster_options() -> None:
    assert cluster_options(Options()) is None and cluster_options(Options(on="local")) is None
    assert cluster_options(Options(on="slurm", partition="amd", nodes=4,
                                   slurm_opt="--account=a --time='1:00:00'")) == \
        Cluster("amd", 4, ("--account=a", "--time=1:00:00"))


@pytest.mark.parametrize("args, path", [
    (["--on", "pbs"], None),
    (["--on", "slurm", "--nodes", "0"], None),
    (["--partition", "p"], None),
    (["--on", "slurm"], "no-sbatch"),
])
def test_bad_input_is_one_line_exit_2_and_writes_nothing(args: list[str], path: str | None,
                                                         tmp_path: Path) -> None:
    out = tmp_path / "results"
    empty = tmp_path / "bin"
    empty.mkdir()
    proc = harness("run", "--impl", "fake-good", "--workload", "chain", "--n", "10", "--out",
                   str(out), *args, extra_env={"PATH": str(empty)} if path else None)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr
    if path:
        assert "no sbatch on PATH" in proc.stderr
    assert not out.exists()


def test_task_options_are_the_runs_own_with_absolute_paths(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    opts = Options(on="slurm", nodes=2, out="res", impl="go", registry=("mine/impls.toml",),
                   n="10")
    kept = task_options(opts)
    assert kept == dataclasses.replace(opts, registry=(str(tmp_path / "mine" / "impls.toml"),))
    given = options_json(kept)  # what the task is given: not where it runs
    assert not {"on", "partition", "nodes", "slurm_opt", "out"} & set(given)
    assert given == options_json(Options(impl="go", n="10")) | {
        "registry": [str(tmp_path / "mine" / "impls.toml")]}


# ---------------------------------------------------------------- a fake cluster

class FakeCluster:
    """Slurm as the harness sees it, for a test. sbatch records a job; each
    squeue moves time on one step. The build job is listed PENDING, then
    COMPLETED (writing build.json, the languages in failed_languages
    failed); the array's tasks wait for it, then run at most --array's %K
    at once, in order: PENDING, RUNNING, then their fate plays out and they
    are listed ended. A task's fate, by replicate: "ok" writes every row of
    its replicate as a mock executor would (make_row, no process) and its
    exit status; "died" writes its first row and stops, its output ending
    with Slurm's time-limit line; "cancelled" never starts."""

    def __init__(self, runs: list[Planned], fates: dict[int, str], nodes: tuple[str, ...] = ("n1",),
                 failed_languages: tuple[str, ...] = (), build_fails: bool = False) -> None:
        self.runs, self.fates, self.nodes = runs, fates, nodes
        self.failed_languages, self.build_fails = failed_languages, build_fails
        self.submitted: list[list[str]] = []
        self.cancelled: list[str] = []
        self.jobs: dict[str, list[int]] = {}  # an array's tasks; a job's: []
        self.throttle: dict[str, int] = {}
        self.steps: dict[tuple[str, int], int] = {}  # 0 pending, 1 running, 2 ended
        self.ended: dict[tuple[str, int], str] = {}
        self.built = self.build_failed = False
        self.layout: Layout | None = None
        self.interrupt_at: int | None = None  # the squeue call that gets Ctrl-C
        self.calls = 0

    def __call__(self) -> FakeCluster:
        return self

    def partitions(self) -> dict[str, bool]:
        return {"bench": True, "big": False}

    def submit(self, options: list[str], script: Path, env: dict[str, str]) -> str:
        self.submitted.append(options)
        self.env = env
        self.layout = Layout(script.parent.parent)
        job = str(100 + len(self.submitted))
        self.jobs[job] = []

        for option in options:
            if option.startswith("--array="):
                spec, throttle = option.split("=", 1)[1].split("%")
                self.throttle[job] = int(throttle)
                self.jobs[job] = [n for part in spec.split(",") for n in range(
                    int(part.split("-")[0]), int(part.split("-")[-1]) + 1)]
                if not any(o.startswith("--dependency=") for o in options):
                    self.built = True  # --no-build: no build job to wait for
        return job

    def states(self, jobs: list[str]) -> list[JobState]:
        self.calls += 1
        if self.calls == self.interrupt_at:
            raise Interrupted(signal.SIGINT)
        listed = []
        for job in jobs:
            if job not in self.jobs:  # another cluster's job: long forgotten
                continue
            if job not in self.throttle:
                state = "CANCELLED" if job in self.cancelled else \
                    self._build() if self.calls > 1 else "PENDING"
                listed.append(JobState(job, None, state, "n1", "None"))
                continue
            running = 0
            for task in self.jobs[job]:
                key = (job, task)
                if (job in self.cancelled or self.build_failed) and key not in self.ended:
                    self.ended[key] = "CANCELLED"  # --kill-on-invalid-dep, or scancel
                if key not in self.ended and self.built and running < self.throttle[job]:
                    self.steps[key] = self.steps.get(key, 0) + 1
                    if self.steps[key] == 2:
                        self.ended[key] = self._play(task)
                running += self.steps.get(key, 0) == 1
                state = self.ended.get(key) or ["PENDING", "RUNNING"][self.steps.get(key, 0)]
                node = self.nodes[task % len(self.nodes)] if state != "PENDING" else ""
                reason = "DependencyNeverSatisfied" if self.build_failed else "None"
                listed.append(JobState(job, task, state, node, reason))
        return listed

    def cancel(self, jobs: list[str]) -> None:
        self.cancelled += jobs

    def _build(self) -> str:
        assert self.layout is not None
        if self.build_fails:
            self.build_failed = True
            (self.layout.slurm / "build-101.out").write_text(
                "harness: error: --registry /gone/impls.toml: no such file\n")
            return "FAILED"
        self.built = True
        if not self.layout.build_path.exists():
            write_json(self.layout.build_path, {"node": "n1", "token": "0", "languages": {
                "fake": {"status": "build-failed" if "fake" in self.failed_languages else "ready",
                         "reason": "error[E0433]: failed to resolve"}}, "impls": {}})
        return "COMPLETED"

    def _play(self, r: int) -> str:
        fate = self.fates[r]
        if fate == "cancelled":
            return "CANCELLED"
        self._run_task(r, fate)
        return "COMPLETED" if fate == "ok" else "TIMEOUT"

    def _run_task(self, r: int, fate: str) -> None:
        assert self.layout is not None
        node = self.nodes[r % len(self.nodes)]
        record = {"node": node, "job": "1", "started_at": utc_now(), "build": "job"}
        write_json(self.layout.task_path(r), record)
        out = self.layout.task_dir(r)
        run = (RunDir(out.joinpath("latest").resolve()) if (out / "latest").exists() else
               RunDir.create_new(out, lambda run_id: new_env(run_id, {
                   "hostname": node, "cpu_model": "Fake CPU", "cores": 2})))
        point_latest(out, run)
        langs = set(self.failed_languages)
        block = replicate(self.runs, r, langs)
        kept = {(row.impl, row.workload, row.rep) for row in run.runs().rows
                if row.status == "ok"}
        for p in block[:1] if fate == "died" else block:
            if (p.impl.id, p.key.workload, p.rep) not in kept:
                run.append_run(make_row(run.name, p, "ok", wall_s=0.01, result=p.key.n))
        if fate == "died":
            (out / f"slurm-1_{r}.out").write_text(
                "[1/3] ok\nslurmstepd: error: *** JOB 7 ON n1 CANCELLED AT 2026-11-27T01:44:02 "
                "DUE TO TIME LIMIT ***\n")
        else:
            write_json(self.layout.task_path(r), record | {"exit": 0})


def on_fake(cluster: FakeCluster, out: Path, resume: bool = False, nodes: int = 1,
            opts: dict[str, Any] | None = None) -> int:
    opts = {**SUITE, **(opts or {})}
    options = Options.from_record({"on": "slurm", **opts})
    return run_on_slurm(settings_from(options, ram_bytes=1 << 30), Cluster(None, nodes, ()),
                        options, out, resume=resume,
                        report=False, scheduler=cluster, poll_s=0)


def merged_rows(out: Path) -> list[dict[str, str]]:
    with (out / "latest" / "runs.csv").open(newline="") as f:
        return list(csv.DictReader(f))


def test_every_replicate_is_merged_with_its_node_and_machine(out: Path, capsys) -> None:
    runs = planned(SUITE)
    cluster = FakeCluster(runs, {1: "ok", 2: "ok", 3: "ok"}, nodes=("n1", "n2"))
    assert on_fake(cluster, out, nodes=2) == 0
    build, array = cluster.submitted
    assert "--exclusive" in build and "--exclusive" in array
    assert "--array=1-3%2" in array and "--dependency=afterok:101" in array
    rows = merged_rows(out)
    assert sorted((r["impl"], r["workload"], int(r["rep"])) for r in rows) == \
        sorted((p.impl.id, p.key.workload, p.rep) for p in runs)
    assert {(r["rep"], r["node"]) for r in rows} == {("1", "n2"), ("2", "n1"), ("3", "n2")}
    assert {r["machine"] for r in rows} == {"Fake CPU x2"}
    layout = Layout((out / "latest").resolve())
    # each row keeps its origin: the run directory of its replicate's task
    for r in rows:
        assert (layout.task_dir(int(r["rep"])) / r["run_id"] / "runs.csv").is_file()
    assert "3 replicates: 0 pending, 0 running, 3 done, 0 failed" in capsys.readouterr().out


def test_too_few_replicates_a_node_for_a_verdict_is_said_before_submitting(out: Path,
                                                                          capsys) -> None:
    """3 replicates on up to 2 nodes: a node may hold one run of each
    configuration, which ratios paired within nodes cannot settle."""
    cluster = FakeCluster(planned(SUITE), {1: "ok", 2: "ok", 3: "ok"}, nodes=("n1", "n2"))
    assert on_fake(cluster, out, nodes=2) == 0
    assert "give --repeat 4 or more (2 a node), or fewer --nodes" in capsys.readouterr().err
    cluster = FakeCluster(planned(SUITE), {1: "ok", 2: "ok", 3: "ok"})
    assert on_fake(cluster, out / "one", nodes=1) == 0
    assert "--repeat" not in capsys.readouterr().err


def test_a_credential_in_a_variant_reaches_the_jobs_never_a_file(out: Path) -> None:
    """The tasks get the run's options in their environment, unmasked (the
    program needs the value); options.json and every other file of the run
    directory hold it masked."""
    opts = {**SUITE, "impl": "fake-good[FAKE_PROXY=https://bench:hunter2-in-slurm@proxy.example]"}
    runs = planned(opts)
    cluster = FakeCluster(runs, {1: "ok", 2: "ok", 3: "ok"})
    assert on_fake(cluster, out, opts=opts) == 0
    assert json.loads(cluster.env[OPTIONS_ENV])["impl"] == opts["impl"]
    run = (out / "latest").resolve()
    files = [p for p in run.rglob("*") if p.is_file()]
    assert any(p.name == "options.json" for p in files)
    for path in files:
        assert b"hunter2-in-slurm" not in path.read_bytes(), path.relative_to(run)


def test_a_failed_or_cancelled_task_is_rows_with_a_status(out: Path) -> None:
    runs = planned(SUITE)
    cluster = FakeCluster(runs, {1: "ok", 2: "died", 3: "cancelled"})
    assert on_fake(cluster, out) == 1
    rows = merged_rows(out)
    # every planned run has exactly one row: no silent gap
    assert sorted((r["impl"], r["workload"], int(r["rep"])) for r in rows) == \
        sorted((p.impl.id, p.key.workload, p.rep) for p in runs)
    by_rep = {rep: [r for r in rows if r["rep"] == rep] for rep in ("1", "2", "3")}
    assert {r["status"] for r in by_rep["1"]} == {"ok"}
    died = by_rep["2"]
    assert [r["status"] for r in died] == ["ok", "timeout", "timeout"]
    assert died[1]["error"] == (
        "replicate 2's task on n1 stopped at its time limit (--slurm-opt='--time=...' gives more) "
        "(Slurm: TIMEOUT) before this run: slurmstepd: error: *** JOB 7 ON n1 CANCELLED AT "
        "2026-11-27T01:44:02 DUE TO TIME LIMIT ***")
    assert "DUE TO TIME LIMIT" in died[1]["stderr_tail"] and died[1]["node"] == "n1"
    cancelled = by_rep["3"]
    assert {r["status"] for r in cancelled} == {"crashed"}
    assert cancelled[0]["error"] == "replicate 3 never started: its array task ended CANCELLED"
    assert {r["machine"] for r in rows} == {"Fake CPU x2"} and cancelled[0]["node"] == ""


def test_resume_submits_only_the_replicates_with_a_run_not_ok(out: Path) -> None:
    runs = planned(SUITE)
    assert on_fake(FakeCluster(runs, {1: "ok", 2: "died", 3: "cancelled"}), out) == 1
    before = merged_rows(out)
    again = FakeCluster(runs, {2: "ok", 3: "ok"})
    assert on_fake(again, out, resume=True) == 0
    assert "--array=2-3%1" in again.submitted[-1]
    rows = merged_rows(out)
    assert len(rows) == len(runs) and {r["status"] for r in rows} == {"ok"}
    # replicate 1 untouched; the failure rows moved to retried.csv, as a local --resume's
    assert [r for r in rows if r["rep"] == "1"] == [r for r in before if r["rep"] == "1"]
    with (out / "latest" / "retried.csv").open(newline="") as f:
        retried = list(csv.DictReader(f))
    assert sorted(r["status"] for r in retried) == ["crashed"] * 3 + ["timeout"] * 2
    assert on_fake(FakeCluster(runs, {}), out, resume=True) == 0  # nothing left: merged again


def test_what_the_build_job_could_not_build_is_its_rows(out: Path) -> None:
    runs = planned(SUITE)
    cluster = FakeCluster(runs, {1: "ok", 2: "ok", 3: "ok"}, failed_languages=("fake",))
    assert on_fake(cluster, out) == 1
    rows = merged_rows(out)
    assert len(rows) == len(runs) and {r["status"] for r in rows} == {"build-failed"}
    assert rows[0]["error"].startswith("error[E0433]: failed to resolve (the build job on n1")


def test_a_failed_build_job_is_every_row_with_its_reason(out: Path) -> None:
    runs = planned(SUITE)
    assert on_fake(FakeCluster(runs, {}, build_fails=True), out) == 1
    rows = merged_rows(out)
    assert len(rows) == len(runs) and {r["status"] for r in rows} == {"crashed"}
    assert rows[0]["error"] == (
        "replicate 1 never started: its array task ended CANCELLED (DependencyNeverSatisfied); "
        "the build job 101 ended FAILED: harness: error: --registry /gone/impls.toml: no such file")


def test_no_build_submits_the_array_alone(out: Path) -> None:
    runs = planned(SUITE)
    cluster = FakeCluster(runs, {1: "ok", 2: "ok", 3: "ok"})
    assert on_fake(cluster, out, opts={"no_build": True}) == 0
    (array,) = cluster.submitted
    assert not any(o.startswith("--dependency") for o in array)
    assert len(merged_rows(out)) == len(runs)


def test_an_interrupt_cancels_the_jobs_and_keeps_what_finished(out: Path) -> None:
    runs = planned(SUITE)
    cluster = FakeCluster(runs, {1: "ok", 2: "ok", 3: "ok"})
    cluster.interrupt_at = 4
    assert on_fake(cluster, out) == 128 + signal.SIGINT
    assert cluster.cancelled == ["101", "102"]
    rows = merged_rows(out)
    assert rows and {r["rep"] for r in rows} == {"1"}  # no failure rows for what was stopped


def test_a_resume_while_jobs_are_queued_is_refused(out: Path) -> None:
    runs = planned(SUITE)
    cluster = FakeCluster(runs, {1: "ok", 2: "ok", 3: "ok"})
    cluster.interrupt_at = 2
    on_fake(cluster, out)
    cluster.cancelled.clear()  # as if the cancel had not reached the controller
    cluster.interrupt_at = None
    with pytest.raises(UsageError, match="still queued or running"):
        on_fake(cluster, out, resume=True)


# ---------------------------------------------------------------- the task's side

def test_a_task_measures_its_replicate_with_what_the_build_job_built(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run = tmp_path / "run"
    layout = Layout(run)
    layout.slurm.mkdir(parents=True)
    options = {"impl": "fake-good", "workload": "chain", "n": "10", "repeat": 3,
               "inherit_env": None}
    write_json(layout.options_path, options)
    monkeypatch.setenv(OPTIONS_ENV, json.dumps(options))
    TOKENS.mkdir(parents=True, exist_ok=True)
    token = TOKENS / f"test{os.getpid()}"
    token.write_text("")
    try:
        write_json(layout.build_path, {"node": "n1", "token": token.name,
                                       "languages": {"fake": {"status": "ready"}}, "impls": {}})
        assert slurm_task.main(["task", str(run), "2"]) == 0
        record = layout.task_record(2)
        assert record.exit == 0 and record.build == "job" and record.node
        with (layout.task_dir(2) / "latest" / "runs.csv").open(newline="") as f:
            rows = list(csv.DictReader(f))
        assert [(r["impl"], r["rep"], r["status"]) for r in rows] == [("fake-good", "2", "ok")]
    finally:
        token.unlink()
    # without the token in its checkout, a task has a build folder of its own: it builds
    assert slurm_task.main(["task", str(run), "3"]) == 0
    assert layout.task_record(3).build == "task"
    assert slurm_task.main(["task", str(run)]) == 2


# ---------------------------------------------------------------- a real Slurm

LOCK = Path("/var/tmp/bench-slurm.lock")
SMALL = ["--impl", "fake-good,fake-wrong", "--workload", "chain,bounded", "--n", "10",
         "--repeat", "3", "--no-report"]


def slurm_here(pytestconfig: pytest.Config, for_what: str) -> None:
    """Slurm installed, and the right to start its daemons (root)."""
    if os.geteuid() != 0 and subprocess.run(["sudo", "-n", "true"], capture_output=True).returncode:
        tool_missing("Slurm", "its daemons need root: run as root, or with sudo that asks no password")
    install_slurm(pytestconfig, for_what)


@contextlib.contextmanager
def cluster_lock() -> Iterator[None]:
    """The one-node cluster's ports are fixed (6917, 6918), whatever its
    folder: one test at a time brings one up (other sessions' tests wait)."""
    with LOCK.open("a") as lock:
        deadline = time.monotonic() + 600
        while True:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                assert time.monotonic() < deadline, f"{LOCK} held for 10 minutes by another test"
                time.sleep(1)
        yield


@pytest.fixture
def local_slurm(pytestconfig: pytest.Config) -> Iterator[dict[str, str]]:
    """A one-node Slurm on this machine (cluster/slurm-local.sh), held by
    this test alone (cluster_lock), and torn down after it unless it was up
    before."""
    slurm_here(pytestconfig, "the Slurm test")
    with cluster_lock():
        up = subprocess.run([str(SLURM_LOCAL), "up"], capture_output=True, text=True, timeout=900)
        assert up.returncode == 0, up.stderr
        conf = subprocess.run([str(SLURM_LOCAL), "env"], capture_output=True, text=True, timeout=10)
        slurm_env = {"SLURM_CONF": conf.stdout.strip().split("=", 1)[1]}
        try:
            yield slurm_env
        finally:
            if "already up" not in up.stderr:
                down = subprocess.run([str(SLURM_LOCAL), "down"], capture_output=True, text=True,
                                      timeout=300)
                assert down.returncode == 0, down.stderr
                assert "no daemon or job of it left" in down.stderr
                reap_daemons()
                assert daemons_of(Path(slurm_env["SLURM_CONF"]).parent) == {}


DAEMONS = ("slurmctld", "slurmd", "munged")


def daemons_of(folder: Path) -> dict[int, str]:
    """Every slurmctld, slurmd and munged (by pid) with an argument in
    folder, as the script started them: what `down` must leave none of."""
    found = {}
    for proc in Path("/proc").iterdir():
        try:
            name = (proc / "comm").read_text().strip()
            args = (proc / "cmdline").read_bytes().decode(errors="replace").split("\0")
        except OSError:  # gone meanwhile, or not a process
            continue
        if name in DAEMONS and any(f"{folder}/" in arg for arg in args):
            found[int(proc.name)] = name
    return found


def reap_daemons() -> None:
    """The daemons detach from the script that starts them; where this
    process is a child subreaper (the launcher's process-tree containment
    makes the harness one), they were re-parented here, and once `down` has
    stopped them they wait as zombies to be reaped."""
    for proc in Path("/proc").iterdir():
        try:
            stat = (proc / "stat").read_text()
        except OSError:
            continue
        name, _, rest = stat.partition(" (")[2].rpartition(") ")
        fields = rest.split()
        if (fields[:1] == ["Z"] and int(fields[1]) == os.getpid()
                and name.startswith(("slurm", "munge"))):
            try:
                os.waitpid(int(proc.name), os.WNOHANG)
            except ChildProcessError:
                pass


def test_a_small_suite_through_slurm_matches_the_same_suite_run_here(
        local_slurm: dict[str, str], tmp_path: Path) -> None:
    started = time.monotonic()
    proc = harness("run", "--on", "slurm", "--nodes", "1", *SMALL, "--out",
                   str(tmp_path / "slurm"), extra_env=local_slurm, timeout=300)
    slurm_s = time.monotonic() - started
    assert proc.returncode == 1, proc.stdout + proc.stderr  # fake-wrong's answers are invalid
    started = time.monotonic()
    local = harness("run", *SMALL, "--out", str(tmp_path / "local"), timeout=300)
    local_s = time.monotonic() - started
    assert local.returncode == 1, local.stdout + local.stderr
    print(f"the small suite: {local_s:.1f} s here, {slurm_s:.1f} s through Slurm")

    def table(rows: list[dict[str, str]]) -> list[tuple[str, ...]]:
        return sorted((r["impl"], r["workload"], r["n"], r["buffer"], r["rep"], r["status"],
                       r["result"], r["expected"]) for r in rows)

    on_slurm, here = merged_rows(tmp_path / "slurm"), merged_rows(tmp_path / "local")
    assert table(on_slurm) == table(here)
    assert {r["rep"] for r in on_slurm} == {"1", "2", "3"}
    node = subprocess.run(["hostname", "-s"], capture_output=True, text=True).stdout.strip()
    assert {r["node"] for r in on_slurm} == {node}
    assert len({r["machine"] for r in on_slurm}) == 1 and all(r["machine"] for r in on_slurm)
    layout = Layout((tmp_path / "slurm" / "latest").resolve())
    assert [layout.task_record(r).exit for r in (1, 2, 3)] == [1, 1, 1]
    assert layout.build_record().languages["fake"].ready
