"""report.md, summary.csv and results.json for one run directory.

Reads runs.csv and env.json (written by the runner), never re-measures.
"""

from __future__ import annotations

import csv
import json
import math
import re
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from . import stats
from .stats import Group

WORKLOAD_TITLES = {
    "sleep": "sleep: N tasks sleeping concurrently (seed 002)",
    "chain": "chain: N tasks linked by channels (seeds 000/001)",
    "chain-await": "chain-await: N tasks awaiting each other (seed 000)",
    "bounded": "bounded: N producers, one bounded channel (seed 003)",
}
SETUP_STATUSES = ("skipped", "build-failed")  # failures of the language, not of one run
# Environment variables that change how a runtime behaves; the report shows
# these, env.json keeps the whole environment.
RUNTIME_ENV = re.compile(r"(GOGC|GOMAXPROCS|GODEBUG|GOMEMLIMIT|GOEXPERIMENT|RUST_|TOKIO_|ASYNC_STD_|DOTNET_|"
                         r"COMPlus_|JAVA_|JDK_|_JAVA_OPTIONS|NODE_|UV_|PYTHON|MALLOC_|GLIBC_|"
                         r"LD_PRELOAD|LC_ALL)")


# ---------------------------------------------------------------- formatting

def fmt_seconds(value: float | None) -> str:
    if value is None or math.isnan(value):
        return "—"
    mag = abs(value)
    for limit, scale, unit in ((1e-6, 1e9, "ns"), (1e-3, 1e6, "µs"), (1.0, 1e3, "ms")):
        if mag < limit:
            return f"{value * scale:.3g} {unit}"
    return f"{value:.3g} s"


def fmt_bytes(value: float | None) -> str:
    if value is None or math.isnan(value):
        return "—"
    mag = abs(value)
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if mag >= size:
            return f"{value / size:.3g} {unit}"
    return f"{value:.3g} B"


def fmt_metric(metric: str, value: float | None) -> str:
    return fmt_bytes(value) if stats.METRICS[metric][1] == "bytes" else fmt_seconds(value)


def fmt_ratio(ratio: float | None) -> str:
    if ratio is None:
        return "—"
    text = f"{ratio:.2f}×"
    return f"**{text}**" if ratio == 1.0 else text


def group_label(g: Group) -> str:
    label = f"{g.impl} {g.workload}"
    if g.n is not None:
        label += f" N={g.n}"
    if g.buffer is not None:
        label += f" buffer={g.buffer}"
    return label


def cell(g: Group, metric: str) -> str:
    """Median with its spread (stdev as % of the median); ⚠ marks noisy."""
    s = g.metrics.get(metric)
    if s is None:
        return "—"
    text = fmt_metric(metric, s.median)
    if s.cv is not None:
        text += f" ±{s.cv * 100:.0f}%"
    if s.noisy:
        text += " ⚠"
    return text


def workload_order(workloads: set[str]) -> list[str]:
    return sorted(workloads, key=stats.workload_rank)


# ---------------------------------------------------------------- analysis

def ratios(groups: list[Group]) -> dict[stats.GroupKey, dict[str, float]]:
    """Per group: time and RSS relative to the best implementation at the same
    workload, N and buffer. Sleep has no time ratio: its time is the sleep."""
    out: dict[stats.GroupKey, dict[str, float]] = defaultdict(dict)
    for (workload, _, _), members in stats.comparable_sets(groups).items():
        if workload != "sleep":
            metric = stats.iter_metric(members)
            for key, r in stats.ratios_to_best(members, metric).items():
                out[key]["time"] = r
        for key, r in stats.ratios_to_best(members, "peak_rss_bytes").items():
            out[key]["rss"] = r
    return out


# The figures each workload is read for (seed 002: memory; 000 and 003: time).
HEADLINE_TIMES = ("first_iter_s", "warm_iter_s", "peak_rss_bytes")
HEADLINE = {"sleep": ("peak_rss_bytes",)}


def warnings(groups: list[Group], env: dict[str, Any]) -> list[str]:
    notes: list[str] = []
    if env and not env.get("finished_at"):
        notes.append("The run did not finish (env.json has no finished_at): figures are partial.")
    if (env.get("git") or {}).get("dirty"):
        notes.append("The working tree was dirty: the code measured is not exactly the commit shown.")

    # Languages that never ran: one line per impl, not one per group.
    setup: dict[tuple[str, str], str] = {}
    for g in groups:
        for r in g.rows:
            if r["status"] in SETUP_STATUSES:
                setup.setdefault((g.impl, r["status"]), r.get("error") or "no reason recorded")
    for (impl, status), error in sorted(setup.items()):
        notes.append(f"{impl}: {status} ({error}).")

    methods = Counter(r.get("peak_rss_method") for g in groups for r in g.rows
                      if r["status"] == "ok" and r.get("peak_rss_method"))
    if len(methods) > 1:
        usual = methods.most_common(1)[0][0]
        for g in groups:
            odd = {r["peak_rss_method"] for r in g.rows if r["status"] == "ok"
                   and r.get("peak_rss_method") and r["peak_rss_method"] != usual}
            if odd:
                notes.append(f"{group_label(g)}: peak RSS measured by {', '.join(sorted(odd))}, "
                             f"not {usual}.")

    # groups come in reading order (stats.group_sort_key); failures first: they matter most
    for g in groups:
        failed = [r for r in g.rows if r["status"] not in ("ok",) + SETUP_STATUSES]
        if failed:
            errors = sorted({r.get("error") or "no reason recorded" for r in failed})
            notes.append(f"{group_label(g)}: {g.statuses} — {'; '.join(errors)}.")
    # Noise and outliers in the figures each workload is read for, one line
    # per workload; the tables mark every other noisy cell with ⚠.
    by_workload: dict[str, list[str]] = {}
    totals: Counter[str] = Counter(g.workload for g in groups if g.ok)
    for g in groups:
        noisy = [m for m in g.noisy if m in HEADLINE.get(g.workload, HEADLINE_TIMES)]
        if noisy:
            spread = ", ".join(f"{stats.METRICS[m][0]} {g.metrics[m].cv * 100:.0f}%" for m in noisy)
            buf = f" B={g.buffer}" if g.buffer is not None else ""
            by_workload.setdefault(g.workload, []).append(f"{g.impl} N={g.n}{buf} ({spread})")
    for workload, entries in by_workload.items():
        notes.append(f"{workload}: {len(entries)} of {totals[workload]} groups are noisy "
                     f"(stdev above 10% of the median): {'; '.join(entries)}.")
    outliers: dict[str, list[str]] = {}
    for g in groups:
        for r in g.rows:
            marked = [m for m in r.get("outliers") or []
                      if m in HEADLINE.get(g.workload, HEADLINE_TIMES)]
            if marked:
                values = ", ".join(f"{stats.METRICS[m][0]} {fmt_metric(m, r[m])} "
                                   f"(median {fmt_metric(m, g.median(m))})" for m in marked)
                buf = f" B={g.buffer}" if g.buffer is not None else ""
                outliers.setdefault(g.workload, []).append(
                    f"{g.impl} N={g.n}{buf} rep {r['rep']}: {values}")
    for workload, entries in outliers.items():
        notes.append(f"{workload}: {len(entries)} outlier runs, kept: {'; '.join(entries)}.")
    return notes


# ---------------------------------------------------------------- markdown

def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def _runs_cell(g: Group) -> str:
    text = g.statuses if g.ok else f"**{g.statuses}**"
    if g.outliers:
        text += f" ({g.outliers} outlier{'s' if g.outliers > 1 else ''})"
    return text


def workload_table(workload: str, groups: list[Group],
                   rank: dict[stats.GroupKey, dict[str, float]]) -> list[str]:
    """One table for a workload: one row per (N, buffer, impl), the best first."""
    bounded = any(g.buffer is not None for g in groups)
    if workload == "sleep":
        columns = [("peak RSS", lambda g: cell(g, "peak_rss_bytes")),
                   ("×best RSS", lambda g: fmt_ratio(rank[g.key].get("rss"))),
                   ("mem/task", lambda g: fmt_bytes(g.mem_per_task_bytes)),
                   ("spawn", lambda g: cell(g, "spawn_s")),
                   ("wall", lambda g: cell(g, "wall_s")),
                   ("CPU", lambda g: cell(g, "cpu_s"))]
        primary = "rss"
    else:
        columns = [("cold iter", lambda g: cell(g, "first_iter_s")),
                   ("warm iter", lambda g: cell(g, "warm_iter_s")),
                   ("×best time", lambda g: fmt_ratio(rank[g.key].get("time"))),
                   ("peak RSS", lambda g: cell(g, "peak_rss_bytes")),
                   ("×best RSS", lambda g: fmt_ratio(rank[g.key].get("rss"))),
                   ("mem/task", lambda g: fmt_bytes(g.mem_per_task_bytes)),
                   ("wall", lambda g: cell(g, "wall_s")),
                   ("CPU", lambda g: cell(g, "cpu_s"))]
        primary = "time"

    def order(g: Group) -> tuple:
        r = rank[g.key].get(primary)
        return (g.n or 0, g.buffer or 0, r is None, r or 0.0, g.impl)

    header = ["N"] + (["buffer"] if bounded else []) + ["impl", "runtime", "runs"]
    rows = []
    for g in sorted(groups, key=order):
        row = [str(g.n) if g.n is not None else "—"]
        if bounded:
            row.append(str(g.buffer) if g.buffer is not None else "—")
        row += [g.impl, g.runtime or "—", _runs_cell(g)]
        row += [fn(g) for _, fn in columns]
        rows.append(row)
    return _table(header + [name for name, _ in columns], rows)


def environment_block(env: dict[str, Any], groups: list[Group]) -> list[str]:
    if not env:
        return ["(no env.json in this run directory)"]
    host = env.get("host") or {}
    ram = host.get("ram_bytes")
    git = env.get("git") or {}
    settings = env.get("settings") or {}
    toolchains = env.get("toolchains") or {}
    methods = sorted({r.get("peak_rss_method") for g in groups for r in g.rows
                      if r.get("peak_rss_method")})
    commit = (git.get("commit") or "unknown")[:12] + (" (dirty)" if git.get("dirty") else "")
    rows = [
        ["run", f"`{env.get('run_id', '?')}`"],
        ["host", f"{host.get('hostname', '?')}: {host.get('cpu_model', '?')}, "
                 f"{host.get('cores', '?')} cores, {fmt_bytes(ram)} RAM"],
        ["OS", f"{host.get('os', '?')}, kernel {host.get('kernel', '?')}"],
        ["started / finished", f"{env.get('started_at', '?')} / {env.get('finished_at') or 'not finished'}"],
        ["git", commit],
        ["toolchains", ", ".join(f"{k} {v or 'absent'}" for k, v in sorted(toolchains.items())) or "—"],
        ["repeats", str(settings.get("repeat", "?"))],
        ["sleep duration", f"{settings['duration_ms']} ms" if settings.get("duration_ms") else "—"],
        ["iterations", str(settings.get("iterations") or "program defaults")],
        ["limits", f"timeout {settings.get('timeout_s', '?')} s, "
                   f"max RSS {fmt_bytes(settings.get('max_rss_bytes'))}"],
        ["RSS sampling", f"every {settings.get('sample_interval_s', '?')} s; "
                         f"peak RSS from {', '.join(methods) or '?'}"],
    ]
    relevant = {k: v for k, v in (env.get("program_env") or {}).items() if RUNTIME_ENV.match(k)
                and "CERT" not in k}
    rows.append(["program env", (", ".join(f"`{k}={v}`" for k, v in sorted(relevant.items()))
                                 or "no runtime variables set") + " (all of it: env.json)"])
    return _table(["", ""], rows)


HOW_TO_READ = """\
Each cell is the **median** over the repeats with status `ok`; `±` is the
standard deviation as a percentage of the median, and ⚠ marks a noisy figure
(stdev above {noisy:.0f}% of the median). `runs` counts every repeat by status:
failed runs are never dropped, they show up there and under Warnings. ×best is
the ratio to the best implementation at the same N (and buffer); 1.00× is the
best. Time ratios use the warm iteration when every implementation has one,
else the cold one. mem/task = (peak RSS at N − peak RSS at the smallest N of
the run) / (N − that N). Outliers (outside median ± {k:g}·max(1.4826·MAD,
{floor:.0%} of the median)) are flagged, never removed.
""".format(noisy=stats.NOISY_CV * 100, k=stats.OUTLIER_K, floor=stats.MAD_FLOOR)


def render_markdown(run_dir: Path, groups: list[Group], env: dict[str, Any],
                    rank: dict[stats.GroupKey, dict[str, float]]) -> str:
    plots_dir = run_dir / "plots"
    pngs = sorted(p.name for p in plots_dir.glob("*.png")) if plots_dir.is_dir() else []
    lines = [f"# Benchmark report: run {env.get('run_id') or run_dir.name}", ""]
    lines += ["## Environment", ""] + environment_block(env, groups) + [""]
    lines += ["## How to read", "", HOW_TO_READ]
    notes = warnings(groups, env)
    lines += ["## Warnings", ""] + ([f"- {n}" for n in notes] or ["None."]) + [""]

    if not groups:
        lines += ["No runs were recorded in runs.csv.", ""]
    by_workload: dict[str, list[Group]] = defaultdict(list)
    for g in groups:
        if any(r["status"] not in SETUP_STATUSES for r in g.rows):
            by_workload[g.workload].append(g)
    for workload in workload_order(set(by_workload)):
        lines += [f"## {WORKLOAD_TITLES.get(workload, workload)}", ""]
        lines += workload_table(workload, by_workload[workload], rank) + [""]
        for kind in ("time", "rss", "mem_per_task"):
            name = f"{workload}_{kind}.png"
            if name in pngs:
                lines += [f"![{workload} {kind.replace('_', ' ')}](plots/{name})", ""]
    over_time = [f"rss_over_time_{w}.png" for w in workload_order(set(by_workload))
                 if f"rss_over_time_{w}.png" in pngs]
    if over_time:
        lines += ["## RSS over time (largest N of each implementation)", ""]
        lines += [f"![{name[:-4]}](plots/{name})" for name in over_time] + [""]
    lines += ["## Files", "",
              "`runs.csv` (every raw run), `samples.csv` (RSS and threads over time), "
              "`summary.csv` (these statistics, one row per group), `results.json` "
              "(environment, statistics and raw rows with outlier flags), `plots/`.", ""]
    return "\n".join(lines)


# ---------------------------------------------------------------- exports

SUMMARY_FIELDS = ["impl", "language", "runtime", "workload", "n", "buffer", "runs", "ok",
                  "statuses"]
for _m in stats.METRICS:
    SUMMARY_FIELDS += [f"{_m}_{s}" for s in ("median", "min", "max", "mean", "stdev", "count")]
SUMMARY_FIELDS += ["mem_per_task_bytes", "mem_base_n", "time_ratio_to_best",
                   "rss_ratio_to_best", "noisy", "outliers"]


def summary_rows(groups: list[Group], rank: dict[stats.GroupKey, dict[str, float]]) -> list[dict[str, Any]]:
    rows = []
    for g in groups:
        row: dict[str, Any] = {
            "impl": g.impl, "language": g.language, "runtime": g.runtime,
            "workload": g.workload, "n": g.n, "buffer": g.buffer, "runs": len(g.rows),
            "ok": g.ok, "statuses": g.statuses,
            "mem_per_task_bytes": g.mem_per_task_bytes, "mem_base_n": g.mem_base_n,
            "time_ratio_to_best": rank[g.key].get("time"),
            "rss_ratio_to_best": rank[g.key].get("rss"),
            "noisy": " ".join(g.noisy), "outliers": g.outliers,
        }
        for metric, s in g.metrics.items():
            for part in ("median", "min", "max", "mean", "stdev", "count"):
                row[f"{metric}_{part}"] = getattr(s, part)
        rows.append(row)
    return rows


def _csv_value(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, float):
        return format(value, ".10g")  # drops float noise such as 0.010100999999999999
    return value


def _group_json(g: Group, rank: dict[stats.GroupKey, dict[str, float]]) -> dict[str, Any]:
    return {
        "impl": g.impl, "language": g.language, "runtime": g.runtime,
        "workload": g.workload, "n": g.n, "buffer": g.buffer,
        "status_counts": dict(g.status_counts),
        "metrics": {m: {"median": s.median, "min": s.min, "max": s.max, "mean": s.mean,
                        "stdev": s.stdev, "count": s.count, "noisy": s.noisy}
                    for m, s in g.metrics.items()},
        "mem_per_task_bytes": g.mem_per_task_bytes, "mem_base_n": g.mem_base_n,
        "ratio_to_best": dict(rank[g.key]),
        "noisy": g.noisy,
    }


def load(run_dir: Path) -> tuple[list[Group], dict[str, Any]]:
    """The run's groups (statistics computed) and its env.json ({} if absent)."""
    groups = stats.group_runs(stats.read_runs(run_dir / "runs.csv"))
    env_path = run_dir / "env.json"
    env = json.loads(env_path.read_text()) if env_path.exists() else {}
    return groups, env


def write_report(run_dir: Path, draw: bool = True) -> Path:
    """Write report.md, summary.csv and results.json into run_dir (drawing the
    plots first unless draw is False) and return report.md's path."""
    run_dir = Path(run_dir)
    if draw:
        from . import plots  # matplotlib stays out of every other code path
        plots.draw_all(run_dir)
    groups, env = load(run_dir)
    rank = ratios(groups)

    with (run_dir / "summary.csv").open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=SUMMARY_FIELDS, lineterminator="\n")
        writer.writeheader()
        for row in summary_rows(groups, rank):
            writer.writerow({k: _csv_value(v) for k, v in row.items()})

    results = {
        "env": env,
        "rules": {"headline": "median of ok repeats", "noisy_cv": stats.NOISY_CV,
                  "outlier": f"outside median ± {stats.OUTLIER_K:g}·max({stats.MAD_SCALE}·MAD, "
                             f"{stats.MAD_FLOOR:g}·|median|)",
                  "mem_per_task": "(peak RSS at N − peak RSS at the smallest N) / (N − smallest N)"},
        "groups": [_group_json(g, rank) for g in groups],
        "runs": [r for g in groups for r in g.rows],
    }
    (run_dir / "results.json").write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n")

    report = run_dir / "report.md"
    report.write_text(render_markdown(run_dir, groups, env, rank))
    return report
