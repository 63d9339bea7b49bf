"""`harness merge`: run directories from several machines (a CI matrix's
artifacts: README, "Results from many machines") combined into one run directory. Every row
keeps its own run_id and gains a `machine` (a dimension of every workload,
workloads.MACHINE), so report, plots and compare read the machines side by
side; env.json keeps each machine's environment under `machines`."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from . import UsageError
from .launcher import Sample
from .rundir import SAMPLE_KEY, RunDir, open_run_dir, utc_now


def machine_label(env: dict[str, Any]) -> str:
    """A machine's name from its env.json: CPU model and cores (never the
    host name, which may say more about its owner than the figures need)."""
    host = env.get("host") or {}
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


def merge(dirs: list[str], out: Path, labels: list[str] | None = None) -> RunDir:
    """A new run directory in `out` holding every row and sample of `dirs`,
    each tagged with its machine. A directory that is itself a merge keeps
    the machines its rows already name."""
    if len(dirs) < 2:
        raise UsageError("merge needs at least two run directories")
    if labels is not None and len(labels) != len(dirs):
        raise UsageError(f"--labels: {len(labels)} labels for {len(dirs)} run directories")
    runs = [open_run_dir(d) for d in dirs]
    envs = [r.env() for r in runs]
    names = _unique(labels or [machine_label(e) for e in envs])
    tables = [r.runs() for r in runs]
    for r, t in zip(runs, tables):
        if t.torn:
            print(f"merge: {r.path}: {t.torn}")
    merged = RunDir.create_new(out)
    machines: dict[str, Any] = {}
    for run, env, name, table in zip(runs, envs, names, tables):
        for row in table.rows:
            row["machine"] = row.get("machine") or name
            merged.append_run(row)
        samples = run.samples()
        for s in samples:
            s["machine"] = s.get("machine") or name
        _append_samples(merged, samples)
        if "machines" in env:  # a merge of merges: its machines as they were
            machines.update(env["machines"])
        else:
            machines[name] = {k: env.get(k) for k in ("run_id", "started_at", "finished_at",
                                                      "host", "git", "toolchains", "settings",
                                                      "runtimes")}
            machines[name]["dir"] = str(run.path)
    started = [e["started_at"] for e in envs if e.get("started_at")]
    finished = [e["finished_at"] for e in envs if e.get("finished_at")]
    merged.write_env({
        "run_id": merged.name, "merged_at": utc_now(),
        "started_at": min(started, default=None), "finished_at": max(finished, default=None),
        "host": {"hostname": f"{len(machines)} machines merged"},
        "floor_impls": sorted({i for e in envs for i in e.get("floor_impls") or ()}),
        "machines": machines,
        # A figure's machine is in its row; settings and toolchains per machine above.
        "settings": envs[0].get("settings") or {},
    })
    return merged


def _append_samples(run: RunDir, samples: list[dict[str, Any]]) -> None:
    """Samples keep their own times and readings, in their run's order."""
    by_run: dict[tuple, list[dict[str, Any]]] = {}
    for s in samples:
        by_run.setdefault(tuple(s.get(k) for k in SAMPLE_KEY), []).append(s)
    for members in by_run.values():
        run.append_samples(members[0], (Sample(s["t_s"], s["rss_bytes"], s["threads"])
                                        for s in members))
