"""summary.csv and results.json: a run's statistics for other programs."""

from __future__ import annotations

import csv
import json
from typing import Any

from . import analysis
from .analysis import Group, Ranks, Results
from .formatting import csv_number
from .machineload import LOADED_FRAC
from .metrics import METRICS
from .rundir import DIMENSIONS

PARTS = ("median", "min", "max", "mean", "stdev", "count")
SUMMARY_FIELDS = (["impl", "language", "runtime", "workload", "n", "buffer",
                   *(c.name for c in DIMENSIONS), "runs", "ok", "statuses"]
                  + [f"{m}_{s}" for m in METRICS for s in PARTS]
                  + ["mem_per_task_bytes", "mem_per_task_n", "time_ratio_to_best",
                     "rss_ratio_to_best", "noisy", "outliers"])


def summary_rows(groups: list[Group], ranks: Ranks) -> list[dict[str, Any]]:
    rows = []
    for g in groups:
        row: dict[str, Any] = {
            "impl": g.impl, "language": g.language, "runtime": g.runtime,
            "workload": g.workload, "n": g.n, "buffer": g.buffer, **dict(g.params),
            "runs": len(g.rows),
            "ok": g.ok, "statuses": g.statuses,
            "mem_per_task_bytes": g.mem_per_task_bytes,
            "mem_per_task_n": " ".join(str(n) for n in g.mem_points),
            "time_ratio_to_best": ranks[g.key].get("time"),
            "rss_ratio_to_best": ranks[g.key].get("rss"),
            "noisy": " ".join(g.noisy), "outliers": g.outliers,
        }
        for metric, s in g.metrics.items():
            for part in PARTS:
                row[f"{metric}_{part}"] = getattr(s, part)
        rows.append(row)
    return rows


def _group_json(g: Group, ranks: Ranks) -> dict[str, Any]:
    return {
        "impl": g.impl, "language": g.language, "runtime": g.runtime,
        "workload": g.workload, "n": g.n, "buffer": g.buffer, **dict(g.params),
        "status_counts": dict(g.status_counts),
        "metrics": {m: {"median": s.median, "min": s.min, "max": s.max, "mean": s.mean,
                        "stdev": s.stdev, "count": s.count, "noisy": s.noisy}
                    for m, s in g.metrics.items()},
        "mem_per_task_bytes": g.mem_per_task_bytes, "mem_per_task_n": list(g.mem_points),
        "ratio_to_best": dict(ranks[g.key]),
        "noisy": g.noisy,
    }


def write_exports(results: Results) -> None:
    groups, ranks, run_dir = results.groups, results.ranks, results.run.path
    with (run_dir / "summary.csv").open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=SUMMARY_FIELDS, lineterminator="\n")
        writer.writeheader()
        for row in summary_rows(groups, ranks):
            writer.writerow({k: csv_number(v) for k, v in row.items()})

    document = {
        "env": results.env,
        "rules": {"headline": "median of ok repeats", "noisy_cv": analysis.NOISY_CV,
                  "outlier": f"outside median ± {analysis.OUTLIER_K:g}·max("
                             f"{analysis.MAD_SCALE}·MAD, {analysis.MAD_FLOOR:g}·|median|)",
                  "mem_per_task": "least-squares slope of median peak RSS over the run's N up to "
                                  "this one, kept when the growth exceeds "
                                  f"{analysis.MEM_RESOLUTION_BYTES} bytes and the readings' spread",
                  "loaded": f"other processes used over {LOADED_FRAC:.0%} of all cores"},
        "notes": results.notes,
        "groups": [_group_json(g, ranks) for g in groups],
        "runs": [r for g in groups for r in g.rows],
    }
    (run_dir / "results.json").write_text(json.dumps(document, indent=1, ensure_ascii=False)
                                          + "\n")
