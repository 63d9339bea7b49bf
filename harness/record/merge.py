"""`harness merge`: run directories from several machines (a CI matrix's
artifacts: README, "Results from many machines") combined into one run directory. Every row
keeps its own run_id and gains a `machine` (a dimension of every workload,
workloads.MACHINE), so report, plots and compare read the machines side by
side; env.json keeps each machine's environment under `machines`.

merge_replicates does the same for the replicates of a run on a cluster
(slurm.py), into that run's own directory: each row also gains its `node`,
and nodes of one kind are one machine."""

from __future__ import annotations

import json
import os
import dataclasses
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from .. import UsageError
from ..processes.launcher import Sample
from .rundir import RunDir, merged_env, open_run_dir
from ..core.schema import FORMAT_VERSION, SAMPLE_KEY, Env, Row, SampleRow, utc_now


def machine_label(env: Env) -> str:
    """A machine's name from its env.json: CPU model and cores (never the
    host name, which may say more about its owner than the figures need)."""
    host = env.host
    model = re.sub(r"\s+", " ", str(host.get("cpu_model") or "unknown CPU")).strip()
    cores = host.get("cores")
    return f"{model} x{cores}" if cores else model


def _unique(labels: list[str]) -> list[str]:
    """Two machines of the same kind get #2, #3... in the order given."""
    out: list[str] = []
    for label in labels:
        name, k = label, 2
        while name in out:
            name, k = f"{label} #{k}", k + 1
        out.append(name)
    return out


def merge(dirs: list[str], out: Path, labels: list[str] | None = None,
          report: Callable[[Path], Any] | None = None) -> RunDir:
    """A new run directory in `out` holding every row and sample of `dirs`,
    each tagged with its machine. A directory that is itself a merge keeps
    the machines its rows already name. Every input is read and checked
    first; the directory is written aside, with its report (report(path),
    if given), and renamed into place at the end, or removed on any error."""
    if len(dirs) < 2:
        raise UsageError("merge needs at least two run directories")
    if labels is not None and len(labels) != len(dirs):
        raise UsageError(f"--labels: {len(labels)} labels for {len(dirs)} run directories")
    runs = [open_run_dir(d) for d in dirs]
    envs = [r.env() for r in runs]
    names = _unique(labels or [machine_label(e) for e in envs])
    tables = [r.runs() for r in runs]
    samples = [r.samples() for r in runs]
    _refuse_overlap(dirs, envs, [r.path for r in runs])
    for r, t in zip(runs, tables):
        if t.torn:
            print(f"merge: {r.path}: {t.torn}")

    def fill(merged: RunDir) -> None:
        for name, table, rows in zip(names, tables, samples):
            for row in table.rows:
                row.machine = row.machine or name
            merged.append_runs(table.rows)
            for s in rows:
                s.machine = s.machine or name
            _append_samples(merged, rows)
        if report is not None:
            report(merged.path)

    return RunDir.create_staged(out, lambda run_id: merged_env(
        run_id, envs, names, [r.path for r in runs]), fill)


def _runs_in(env: Env, path: Path) -> set[tuple[Any, ...]]:
    """The runs a directory holds, each named by its id, start, host and
    settings (a merged directory: each of its machines'): two runs started
    in the same second on one host differ in what they ran; by its path
    where env.json says nothing."""
    envs = list(env.machines.values()) or [env.data]
    named = {(e.get("run_id"), e.get("started_at"), (e.get("host") or {}).get("hostname"),
              json.dumps(e.get("settings"), sort_keys=True)) for e in envs}
    return {n for n in named if any(n[:3])} or {(str(path.resolve()),)}


def _refuse_overlap(dirs: list[str], envs: list[Env], paths: list[Path]) -> None:
    """The same rows twice would make one run two machines: the same
    directory given twice (or through a link, or copied), or a merged
    directory merged with one of its own runs, is refused before anything
    is written."""
    seen: dict[tuple[Any, ...], int] = {}
    for i, (env, path) in enumerate(zip(envs, paths)):
        for run in _runs_in(env, path):
            if seen.setdefault(run, i) != i:
                raise UsageError(f"merge: {dirs[i]} and {dirs[seen[run]]} hold the same rows "
                                 f"(run {run[0]}): the same run given twice, or a merge of it")


def _append_samples(run: RunDir, samples: list[SampleRow]) -> None:
    """Samples keep their own times and readings, in their run's order."""
    by_run: dict[tuple, list[SampleRow]] = {}
    for s in samples:
        by_run.setdefault(tuple(getattr(s, k) for k in SAMPLE_KEY), []).append(s)
    for members in by_run.values():
        run.append_samples(members[0], (Sample(s.t_s, s.rss_bytes, s.threads) for s in members))


@dataclass
class Replicate:
    """One replicate of a run on a cluster: its task's run directory, as
    read, and the node that ran it."""
    number: int
    node: str
    env: Env
    rows: list[Row]
    samples: list[SampleRow]
    path: Path

    @property
    def machine(self) -> str:
        """Its node's kind, named as `harness merge` names a machine: the
        nodes of one kind are one machine, each node a block within it."""
        return machine_label(self.env)


def merge_replicates(run: RunDir, replicates: list[Replicate], failures: list[Row],
                     env: Env) -> list[Row]:
    """Every replicate's rows and samples into run, each row with its node
    and machine kind, then failures (the rows of the planned runs no
    replicate recorded); runs.csv and samples.csv are written whole (aside,
    then moved into place), env.json last. Each row keeps its own run_id
    (its replicate's run directory) and rep (its replicate's number).
    Returns the rows."""
    rows: list[Row] = []
    samples: list[SampleRow] = []
    for rep in replicates:
        rows += [dataclasses.replace(row, node=row.node or rep.node,
                                     machine=row.machine or rep.machine) for row in rep.rows]
        samples += [dataclasses.replace(s, machine=s.machine or rep.machine) for s in rep.samples]
    rows += failures
    _write_rows(run, rows, samples)
    run.write_env(env)
    return rows


def replicates_env(run_id: str, base: Env, replicates: list[Replicate]) -> Env:
    """The env.json of a run on a cluster: each machine kind's environment
    under `machines` (its first replicate's: the nodes of a kind run the
    same build), the host naming the nodes, and the run's own start,
    invocations and settings (base: its env.json so far)."""
    first: dict[str, Replicate] = {}
    for rep in replicates:
        first.setdefault(rep.machine, rep)
    env = (merged_env(run_id, [r.env for r in first.values()], list(first),
                      [r.path for r in first.values()]) if first else
           Env({"format_version": FORMAT_VERSION, "run_id": run_id, "merged_at": utc_now(),
                "floor_impls": [], "machines": {}}))
    nodes = sorted({rep.node for rep in replicates if rep.node})
    env.data.update(started_at=base.started_at, finished_at=utc_now(),
                    host={"hostname": f"{len(nodes)} node{'s' if len(nodes) != 1 else ''} of a "
                                      f"Slurm cluster: {', '.join(nodes) or 'none'}"},
                    invocations=base.invocations,
                    settings=base.data.get("settings") or {})  # as recorded, byte for byte
    variants = {k: v for r in replicates for k, v in (r.env.variants or {}).items()}
    if variants:
        env.variants = variants
    return env


def _write_rows(run: RunDir, rows: list[Row], samples: list[SampleRow]) -> None:
    """runs.csv and samples.csv of run replaced by these rows, written by
    RunDir's own writer in a hidden folder of run, then moved into place."""
    staging = run.path / ".merging"
    shutil.rmtree(staging, ignore_errors=True)
    try:
        staged = RunDir.create_new(staging)
        staged.append_runs(rows)
        _append_samples(staged, samples)
        os.replace(staged.samples_path, run.samples_path)
        os.replace(staged.runs_path, run.runs_path)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
