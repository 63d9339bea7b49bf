"""summary.csv and results.json: a run's statistics for other programs."""

from __future__ import annotations

import csv
import json
import math
from dataclasses import fields
from json.encoder import encode_basestring as _encode_str
from operator import add, attrgetter
from typing import Any, Callable, Iterable

from ..analyse import analysis
from ..analyse.analysis import Group, Ranks, Results
from ..core.formatting import csv_number, fmt_plain, fmt_share
from ..execute.machineload import LOADED_FRAC
from ..core.metrics import METRICS
from ..core.schema import CONFIG_COLUMNS, DIMENSIONS, Row, escape_cell
from ..core.stats import LEVEL, Interval

PARTS = ("median", "min", "max", "mean", "stdev", "count")
# A figure's confidence interval (docs/statistics.md): its bounds and its
# exact confidence, empty with one run. Appended after the earlier columns so
# that readers of older files keep their places.
CI_PARTS = ("ci_low", "ci_high", "ci_level")
RATIO_FIGURES = (("time_ratio_to_best", "time"), ("rss_ratio_to_best", "rss"),
                 ("floor_ratio", "floor"))
SUMMARY_FIELDS = ([*CONFIG_COLUMNS, "runs", "ok", "statuses"]
                  + [f"{m}_{s}" for m in METRICS for s in PARTS]
                  + ["mem_per_task_bytes", "mem_per_task_n", "time_ratio_to_best",
                     "rss_ratio_to_best", "noisy", "outliers"]
                  + [f"{m}_{s}" for m in METRICS for s in CI_PARTS]
                  + ["floor_ratio"]
                  + [f"{name}_{s}" for name, _ in RATIO_FIGURES for s in CI_PARTS]
                  + [f"mem_per_task_{s}" for s in CI_PARTS] + ["mem_per_task_note"]
                  # every ok run's value, space-separated in run order: any ratio of two
                  # configurations (harness/publish/claims.py) gets its interval from summary.csv
                  + [f"{m}_values" for m in METRICS])


def _ci(prefix: str, iv: Interval | None) -> dict[str, Any]:
    if iv is None:
        return {}
    return {f"{prefix}_ci_low": iv.low, f"{prefix}_ci_high": iv.high,
            f"{prefix}_ci_level": iv.confidence}


def interval_json(iv: Interval | None) -> dict[str, Any] | None:
    """{low, high, confidence}, and settled (confidence at least 95%)."""
    if iv is None:
        return None
    return {"low": iv.low, "high": iv.high, "confidence": iv.confidence, "settled": iv.settled}


_DIMENSION_NAMES = frozenset(c.name for c in DIMENSIONS)


def config_cells(g: Group) -> dict[str, Any]:
    """A configuration's cells by CONFIG_COLUMNS: the group's own (impl,
    language, runtime, workload, n, buffer), then the dimensions its key
    holds (ConfigKey.params; one it lacks is left out)."""
    params = dict(g.params)
    return {name: params[name] if name in _DIMENSION_NAMES else getattr(g, name)
            for name in CONFIG_COLUMNS if name in params or name not in _DIMENSION_NAMES}


def summary_rows(groups: list[Group], ranks: Ranks) -> list[dict[str, Any]]:
    rows = []
    for g in groups:
        row: dict[str, Any] = {
            **config_cells(g),
            "runs": len(g.rows),
            "ok": g.ok, "statuses": g.statuses,
            "mem_per_task_bytes": g.mem_per_task_bytes,
            "mem_per_task_n": " ".join(str(n) for n in g.mem_points),
            "time_ratio_to_best": ranks[g.key].get("time"),
            "rss_ratio_to_best": ranks[g.key].get("rss"),
            "noisy": " ".join(g.noisy), "outliers": g.outliers,
            "floor_ratio": ranks[g.key].get("floor"),
            **_ci("mem_per_task", g.mem_interval),
            "mem_per_task_note": analysis.BELOW_RESOLUTION if g.mem_below_resolution else "",
        }
        for metric, s in g.metrics.items():
            for part in PARTS:
                row[f"{metric}_{part}"] = getattr(s, part)
            row.update(_ci(metric, s.interval))
            row[f"{metric}_values"] = " ".join(csv_number(v) for v in s.values)
        for name, kind in RATIO_FIGURES:
            row.update(_ci(name, ranks.interval(g.key, kind)))
        rows.append(row)
    return rows


def _group_json(g: Group, ranks: Ranks) -> dict[str, Any]:
    return {
        **config_cells(g),
        "status_counts": dict(g.status_counts),
        "metrics": {m: {"median": s.median, "min": s.min, "max": s.max, "mean": s.mean,
                        "stdev": s.stdev, "count": s.count, "noisy": s.noisy,
                        "interval": interval_json(s.interval)}
                    for m, s in g.metrics.items()},
        "mem_per_task_bytes": g.mem_per_task_bytes, "mem_per_task_n": list(g.mem_points),
        "mem_per_task_interval": interval_json(g.mem_interval),
        "mem_per_task_below_resolution": g.mem_below_resolution,
        "ratio_to_best": dict(ranks[g.key]),
        "ratio_intervals": {kind: interval_json(ranks.interval(g.key, kind))
                            for kind in ranks[g.key]},
        "settled_best": dict(ranks.best.get(g.key, {})),
        "noisy": g.noisy,
    }


def write_exports(results: Results) -> None:
    groups, ranks, run_dir = results.groups, results.ranks, results.run.path
    with (run_dir / "summary.csv").open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=SUMMARY_FIELDS, lineterminator="\n")
        writer.writeheader()
        for row in summary_rows(groups, ranks):  # text as runs.csv writes it (escape_cell)
            writer.writerow({k: escape_cell(v) if isinstance(v, str) else csv_number(v)
                             for k, v in row.items()})

    document = {
        "env": results.env.data,
        "rules": {"headline": "median of ok repeats",
                  "interval": f"median: sign-test order statistics; ratios: Hodges-Lehmann "
                              f"with the exact Mann-Whitney coverage; settled at confidence "
                              f">= {fmt_plain(LEVEL)} (docs/statistics.md)",
                  "noisy_width": analysis.NOISY_WIDTH,
                  "outlier": f"outside median ± {fmt_plain(analysis.OUTLIER_K)}·max("
                             f"{analysis.MAD_SCALE}·MAD, "
                             f"{fmt_plain(analysis.MAD_FLOOR)}·|median|)",
                  "mem_per_task": "least-squares slope of median peak RSS over the run's N up to "
                                  "this one, kept when the growth exceeds "
                                  f"{analysis.MEM_RESOLUTION_BYTES} bytes and its interval "
                                  "(from the medians' intervals) lies above zero",
                  "loaded": f"other processes used over {fmt_share(LOADED_FRAC)} of all cores"},
        "notes": results.notes,
        "groups": [_group_json(g, ranks) for g in groups],
        "runs": [],  # filled in by _with_runs: a large run's bulk
    }
    runs = (_run_text(r, marked) for g in groups for r, marked in zip(g.rows, g.row_outliers))
    (run_dir / "results.json").write_text(_with_runs(document, runs))


def _with_runs(document: dict[str, Any], runs: Iterable[str]) -> str:
    """json.dumps(document, indent=1, ensure_ascii=False) + "\\n" with runs
    (_run_text) as its last member, "runs": the standard library's indented
    encoder is pure Python, and a large run's rows took most of the time."""
    text = json.dumps(document, indent=1, ensure_ascii=False)
    records = ",\n".join(runs)
    if not records:
        return text + "\n"
    assert list(document)[-1] == "runs" and text.endswith('"runs": []\n}')
    return text[:-len("[]\n}")] + "[\n" + records + "\n ]\n}\n"


# A run in results.json: Row.as_dict and its outliers. Its values are
# scalars (but the outliers), each written as json's encoder writes it.
_ROW_FIELDS = tuple(f.name for f in fields(Row))
_row_values = attrgetter(*_ROW_FIELDS)
_KEYS = tuple(f"   {_encode_str(name)}: " for name in (*_ROW_FIELDS, "outliers"))


def _run_text(row: Row, outliers: list[str]) -> str:
    """One run, {**row.as_dict(), "outliers": outliers}, as json.dumps(indent=1)
    writes it at depth 2 (in the document's list "runs"); the same text."""
    values = map(_value, (*_row_values(row), outliers))
    return "  {\n" + ",\n".join(map(add, _KEYS, values)) + "\n  }"


def _value(v: Any) -> str:
    """A value at depth 3 as json's encoder writes it: a scalar by its rules
    (a str subclass, the statuses, as its text); anything else by json.dumps,
    indented to the depth (its text has no newline of its own: json escapes
    those in strings)."""
    scalar = _SCALARS.get(type(v))
    if scalar is not None:
        return scalar(v)
    if isinstance(v, str):
        return _encode_str(v)
    return json.dumps(v, indent=1, ensure_ascii=False).replace("\n", "\n   ")


def _float_text(v: float) -> str:
    """A float as json writes it (allow_nan: NaN and Infinity as JavaScript's)."""
    if v != v:
        return "NaN"
    if v in (math.inf, -math.inf):
        return "Infinity" if v > 0 else "-Infinity"
    return float.__repr__(v)


_SCALARS: dict[type, Callable[[Any], str]] = {
    str: _encode_str, type(None): lambda v: "null", bool: lambda v: "true" if v else "false",
    int: int.__repr__, float: _float_text}
