"""report.md for one run directory: the tables per workload, the
environment, the warnings and the plots. Rendering only: the figures come
from analysis, the numbers' text from formatting."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any, Callable

from . import analysis
from .analysis import Group, Ranks, Results
from .formatting import fmt_bytes, fmt_interval, fmt_ratio, fmt_ratio_bound
from .machineload import LOADED_FRAC
from .metrics import METRICS, Metric, fmt_metric
from .presentation import PRESENTATIONS
from .rundir import RunDir
from .stats import Interval, runs_needed
from .workloads import COMMON_DIMENSIONS, WORKLOADS, workload_rank

# Suites that check that everything works rather than measure (suites.toml).
CHECK_SUITES = ("quick",)
# The report shows the environment variables that change how a runtime
# behaves, with their values: exactly those env.json records (envinfo's list).
from .envinfo import recorded as runtime_env  # noqa: E402 (with its reason)


def cell(g: Group, metric: str) -> str:
    """Median with its confidence interval (its own confidence when below
    95%; "1 run, no interval" for one run); ⚠ marks noisy."""
    s = g.metrics.get(metric)
    if s is None:
        return "—"
    text = (fmt_metric(metric, s.median) + " "
            + fmt_interval(s.interval, s.count, lambda v: fmt_metric(metric, v)))
    if s.noisy:
        text += " ⚠"
    return text


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def _runs_cell(g: Group) -> str:
    text = g.statuses if g.ok else f"**{g.statuses}**"
    if g.loaded:
        text += f" ({g.loaded} under load)"
    if g.outliers:
        text += f" ({g.outliers} outlier{'s' if g.outliers > 1 else ''})"
    return text


def ratio_cell(g: Group, ranks: Ranks, kind: str) -> str:
    """A ratio with its interval. The best of its set (1.00×) is in bold
    only when every other implementation's ratio to it is settled above 1;
    otherwise its cell says no winner is settled. One run is never a winner."""
    ratio = ranks[g.key].get(kind)
    if ratio is None:
        return "—"
    winner = ranks.winner(g.key, kind)
    if winner is not None:
        return "**1.00×**" if winner else "1.00× (no settled winner)"
    text = fmt_ratio(ratio, best_in_bold=False)
    if ranks.interval(g.key, kind) is None and ratio == 1.0:
        return text  # the best alone in its set, or the floor itself
    return f"{text} {ratio_interval_text(ranks.interval(g.key, kind))}"


def ratio_interval_text(iv: Interval | None) -> str:
    """A ratio's interval; "(no interval)" where a side has a single run."""
    if iv is None:
        return "(no interval)"
    return fmt_interval(iv, 0, fmt_ratio_bound)


def mem_cell(g: Group) -> str:
    """Memory per task with its interval, or why there is none."""
    if g.mem_per_task_bytes is not None:
        iv = g.mem_interval
        return fmt_bytes(g.mem_per_task_bytes) + " " + (
            fmt_interval(iv, 0, fmt_bytes) if iv is not None else "(1 run, no interval)")
    return analysis.BELOW_RESOLUTION if g.mem_below_resolution else "—"


Column = tuple[str, Callable[[Group, Ranks], str]]


def _metric_column(m: Metric) -> Column:
    return m.heading, lambda g, r: cell(g, m.name)


# Every table column a workload's presentation may name (presentation.Presentation.columns):
# a metric's median by its name, then the ratios and memory per task.
COLUMNS: dict[str, Column] = {
    **{m.name: _metric_column(m) for m in METRICS.values()},
    "time_ratio": ("×best time", lambda g, r: ratio_cell(g, r, "time")),
    "rss_ratio": ("×best RSS", lambda g, r: ratio_cell(g, r, "rss")),
    "mem_per_task": ("mem/task", lambda g, r: mem_cell(g)),
    "x_floor": ("×floor", lambda g, r: ratio_cell(g, r, "floor")),
}


def _param_rank(g: Group) -> tuple:
    """A group's own dimensions in reading order: listed values (styles) in
    their declared order, numbers by size."""
    declared = {d.name: d for d in WORKLOADS[g.workload].dimensions} \
        if g.workload in WORKLOADS else {}
    rank = []
    for name, value in g.params:
        d = declared.get(name)
        if value is None:
            rank.append((1, 0))
        elif d is not None and value in d.choices:
            rank.append((0, d.choices.index(value)))
        else:
            rank.append((0, value))
    return tuple(rank)


def workload_table(workload: str, groups: list[Group], ranks: Ranks) -> list[str]:
    """One table for a workload: one row per (N, buffer, impl), the best first."""
    declared, presented = WORKLOADS.get(workload), PRESENTATIONS.get(workload)
    ids = presented.columns if presented else tuple(COLUMNS)
    if not any("floor" in ranks[g.key] for g in groups):  # no floor implementation in the run
        ids = tuple(c for c in ids if c != "x_floor")
    primary = "time" if presented is None or presented.time_ratio else "rss"
    with_buffer = any(g.buffer is not None for g in groups)

    # The harness's own dimensions (--cpus, merge's machine) only where set.
    dimensions = [d.name for d in declared.dimensions
                  if d not in COMMON_DIMENSIONS or any(g.param(d.name) is not None for g in groups)
                  ] if declared else []
    own = declared is not None and any(d not in COMMON_DIMENSIONS for d in declared.dimensions)

    def order(g: Group) -> tuple:
        if own:  # one block per implementation, its settings in reading order
            return (g.impl, _param_rank(g))
        r = ranks[g.key].get(primary)
        return (g.n or 0, g.buffer or 0, _param_rank(g), r is None, r or 0.0, g.impl)

    with_n = declared is None or declared.uses_n
    header = (["N"] if with_n else []) + (["buffer"] if with_buffer else []) + dimensions \
        + ["impl", "runtime", "runs"]
    rows = []
    for g in sorted(groups, key=order):
        row = [str(g.n) if g.n is not None else "—"] if with_n else []
        if with_buffer:
            buffer = str(g.buffer) if g.buffer is not None else "—"
            if (note := analysis.capacity_note(g)) is not None:
                buffer += f" ({note})"
            row.append(buffer)
        row += ["—" if (v := g.param(name)) is None else str(v) for name in dimensions]
        row += [g.impl, g.runtime or "—", _runs_cell(g)]
        row += [COLUMNS[c][1](g, ranks) for c in ids]
        rows.append(row)
    return _table(header + [COLUMNS[c][0] for c in ids], rows)


def machines_block(machines: dict[str, Any]) -> list[str]:
    """A merged run's machines (harness merge), one row each."""
    rows = []
    for name, m in machines.items():
        host, git = m.get("host") or {}, m.get("git") or {}
        rows.append([name, f"{host.get('cpu_model', '?')}, {host.get('cores', '?')} cores, "
                           f"{fmt_bytes(host.get('ram_bytes'))} RAM",
                     f"{host.get('os', '?')}, kernel {host.get('kernel', '?')}",
                     (git.get("commit") or "unknown")[:12] + (" (dirty)" if git.get("dirty") else ""),
                     f"`{m.get('run_id', '?')}`", m.get("started_at") or "?",
                     ", ".join(f"{k} {v or 'absent'}" for k, v in
                               sorted((m.get("toolchains") or {}).items())) or "—"])
    return _table(["machine", "host", "OS", "git", "run", "started", "toolchains"], rows)


def environment_block(env: dict[str, Any], groups: list[Group]) -> list[str]:
    if not env:
        return ["(no env.json in this run directory)"]
    if env.get("machines"):
        return (["Merged from several machines (`harness merge`): each row's machine is in its "
                 "`machine` column; the machines:", ""] + machines_block(env["machines"]))
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
    relevant = {k: v for k, v in (env.get("program_env") or {}).items() if runtime_env(k)}
    rows.append(["program env", (", ".join(f"`{k}={v}`" for k, v in sorted(relevant.items()))
                                 or "no runtime variables set") + " (all of it: env.json)"])
    return _table(["", ""], rows)


HOW_TO_READ = """\
Each cell is the **median** over the repeats with status `ok`, followed by its
95% confidence interval, `[low, high]`; where the runs are too few for 95% ({median_runs}
are needed for a median, {ratio_runs} a side for a ratio) the interval shown is the widest
they allow and its own, lower confidence follows it, e.g. `(75%)`: such a figure
is **not settled**, and one run has no interval at all. Every ratio (×best,
×floor) is the median of the pairwise ratios of the two sides' runs with the
same kind of interval, and the best (1.00×) is in bold only when every other
implementation's ratio to it is settled above 1, otherwise "no settled winner";
the methods and how to check a figure by hand are in
[docs/statistics.md](../../docs/statistics.md). ⚠ marks a noisy figure: its
interval reaches more than {noisy:.0f}% from the median.

`runs` counts every repeat by status: failed runs are never dropped, they show
up there and under Warnings. ×best is relative to the best implementation at
the same N (and buffer). Time ratios use the warm iteration when every
implementation has one, else the cold one; cold is the process's first run of
the workload, warm the median of the timed iterations after the warm-up
(`warmup_runs` untimed runs, `--warmup-ms`), or after the first iteration
where there was none. mem/task is the least-squares slope of the median peak
RSS over the run's N up to that row (the N used are in summary.csv), with the
interval the medians' intervals allow; it reads "below resolution", and is
neither ranked nor compared, when the growth it rests on is under {res} or its
interval reaches zero. "under load": while the run ran, other processes used
over {loaded:.0%} of the machine's CPU (`other_cpu_frac` in runs.csv).
×floor, where the run has the floor implementation (cpp-coroutines: C++20
coroutines on one thread, nothing but frames and a scheduler), is the
multiple of the floor's figure at the same configuration: iteration time
(hence time per hop, message or task) or, for sleep, memory per task.
Outliers (outside median ± {k:g}·max(1.4826·MAD, {floor:.0%} of the median))
are flagged, never removed.
""".format(noisy=analysis.NOISY_WIDTH * 100, k=analysis.OUTLIER_K, floor=analysis.MAD_FLOOR,
           res=fmt_bytes(analysis.MEM_RESOLUTION_BYTES), loaded=LOADED_FRAC,
           median_runs=runs_needed()[0], ratio_runs=runs_needed()[1])

CHECK_BANNER = """> **This is a check, not a measurement.** The `{suite}` suite runs every
> implementation at tiny N, once each, to show that everything builds, runs
> and answers correctly. Its figures carry no spread and no weight: cite the
> default suite (`./run.sh`) or your own repeated runs instead.
"""


def render_markdown(results: Results) -> str:
    run_dir, groups, env = results.run.path, results.groups, results.env
    plots_dir = run_dir / "plots"
    pngs = sorted(p.name for p in plots_dir.glob("*.png")) if plots_dir.is_dir() else []
    lines = [f"# Benchmark report: run {env.get('run_id') or run_dir.name}", ""]
    suite = (env.get("settings") or {}).get("suite")
    if suite in CHECK_SUITES:
        lines += [CHECK_BANNER.format(suite=suite)]
    lines += ["## Environment", ""] + environment_block(env, groups) + [""]
    lines += ["## How to read", "", HOW_TO_READ]
    notes = analysis.warnings(groups, env, results.notes)
    lines += ["## Warnings", ""] + ([f"- {n}" for n in notes] or ["None."]) + [""]
    if "summary.png" in pngs:
        lines += ["## At a glance", "", "![summary](plots/summary.png)", ""]

    if not groups:
        lines += ["No runs were recorded in runs.csv.", ""]
    by_workload: dict[str, list[Group]] = defaultdict(list)
    for g in groups:
        if any(r["status"] not in analysis.SETUP_STATUSES for r in g.rows):
            by_workload[g.workload].append(g)
    shown = sorted(by_workload, key=workload_rank)
    for workload in shown:
        presented = PRESENTATIONS.get(workload)
        lines += [f"## {presented.title if presented else workload}", ""]
        lines += workload_table(workload, by_workload[workload], results.ranks) + [""]
        mine = [name for name in pngs if name.startswith(f"{workload}_")]
        mine.sort(key=lambda name: [k in name for k in ("_time", "_rss", "_mem_per_task")],
                  reverse=True)
        lines += [f"![{name[:-4].replace('_', ' ')}](plots/{name})" for name in mine] + [""]
    over_time = [f"rss_over_time_{w}.png" for w in shown if f"rss_over_time_{w}.png" in pngs]
    if over_time:
        lines += ["## RSS over time (largest N of each implementation)", ""]
        lines += [f"![{name[:-4]}](plots/{name})" for name in over_time] + [""]
    lines += ["## Files", "",
              "`runs.csv` (every raw run), `samples.csv` (RSS and threads over time), "
              "`summary.csv` (these statistics, one row per group), `results.json` "
              "(environment, statistics and raw rows with outlier flags), `plots/`.", ""]
    return "\n".join(lines)


def write_markdown(results: Results) -> Path:
    path = results.run.path / "report.md"
    path.write_text(render_markdown(results))
    return path


def write_report(run_dir: Path, draw: bool = True) -> Path:
    """Everything `harness report` writes: the plots (unless draw is False),
    summary.csv, results.json and report.md; returns report.md's path."""
    from . import exports, plots  # matplotlib stays out of every other code path
    run = RunDir(Path(run_dir))
    if draw:
        plots.draw_all(run)
    results = analysis.analyse(run)
    exports.write_exports(results)
    return write_markdown(results)
