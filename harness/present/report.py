"""report.md for one run directory: the sections of outline.py in its
order (the verdicts, the environment, the warnings, the tables per workload
and the plots), and the Markdown cells, tables and section bodies
report.html and a published page share. Rendering only: the figures come
from analysis, the numbers' text from formatting. Every text from the data
(names, versions, hosts, errors) is written through md_text or md_code: a
run directory someone sent can neither open markup in the report nor break
its tables, and no control character reaches the file."""

from __future__ import annotations

import re
import statistics
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, TypeVar
from urllib.parse import quote

from ..analyse import analysis, modes, questions, ranks, standings, styles, verdicts
from ..analyse.analysis import Group, Ranks, Results
from ..core.formatting import (fmt_bytes, fmt_duration, fmt_interval, fmt_percent, fmt_places, fmt_ratio,
                               fmt_ratio_bound, fmt_seconds, visible)
from ..core.metrics import METRICS, Metric
from ..core.formatting import fmt_fixed, fmt_metric, fmt_plain, fmt_share
from ..core.presentation import PRESENTATIONS
from ..core.schema import Env, RecordedSettings, Status
from . import outline

from ..core.stats import Interval
from ..core.workloads import COMMON_DIMENSIONS, WORKLOADS, workload_rank

# Suites that check that everything works rather than measure (suites.toml).
CHECK_SUITES = ("quick",)
# The report shows the environment variables that change how a runtime
# behaves, with their values: exactly those env.json records (envinfo's list).
from ..core.envinfo import recorded as runtime_env  # noqa: E402 (with its reason)

T = TypeVar("T")  # what an output's section bodies are written from (md_sections)


# What opens markup in Markdown (GitHub's): escapes, code, emphasis, links
# and images, HTML and entities, a table's cell bounds, strikethrough, math.
_MARKUP = re.compile(r"([\\`*_\[\]<>&|~$])")
# What opens a block at the start of a line (a list item's text): a heading,
# a quote, a list.
_BLOCK = re.compile(r"^( *)([#>+=-]|\d+(?=[.)]))")


def md_text(value: Any) -> str:
    """A text from the data as Markdown that reads as the text itself: its
    markup characters escaped with a backslash, its control characters
    shown (formatting.visible). Safe in a table cell and a list item."""
    text = _MARKUP.sub(r"\\\1", visible(str(value)))
    return _BLOCK.sub(lambda m: m[1] + (m[2] + "\\" if m[2][-1].isdigit() else "\\" + m[2]),
                      text, count=1)


def md_code(value: Any) -> str:
    """A text from the data as a code span in a table cell: fenced by more
    backticks than it holds, its `|` escaped (GitHub finds a row's cells
    before its code spans). In a code span a backslash cannot escape that
    escape, so a text holding one is md_text instead."""
    text = visible(str(value))
    if "\\" in text or not text.strip():
        return md_text(text)
    fence = "`" * (max(map(len, re.findall("`+", text)), default=0) + 1)
    pad = " " if text[0] in "` " or text[-1] in "` " else ""  # else one space each is dropped
    cells = text.replace("|", "\\|")
    return f"{fence}{pad}{cells}{pad}{fence}"


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


def md_table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


# How the executor words a run it killed at the limit the harness gave it.
_LIMIT = re.compile(r"no exit within ([0-9.]+) s")


def cut_by_limit(g: Group) -> str:
    """'2 cut by our time limit (90 s)': its runs the harness killed at the
    limit it gave them (every timeout is ours), "" where none was."""
    cut = [r for r in g.rows if r.status == Status.TIMEOUT]
    if not cut:
        return ""
    limits = sorted({float(m[1]) for r in cut if (m := _LIMIT.search(r.error or ""))})
    said = (f" ({' to '.join(fmt_seconds(v) for v in (limits[0], limits[-1]) if v)})"
            if len(limits) > 1 else f" ({fmt_seconds(limits[0])})" if limits else "")
    return f"{len(cut)} cut by our time limit{said}"


def outgrown(g: Group) -> str:
    """'not run: it failed at N=100000, by a limit that grows with size'
    (Row.outgrown_at), "" where it ran."""
    smaller = analysis.outgrown_at(g)
    return (f"not run: it failed at {smaller}, by a limit that grows with size"
            if smaller else "")


def too_dear(g: Group) -> str:
    """'not run: expected to take at least 5:40 a run, past its share of the
    budget' (Row.expected_s), "" where it ran."""
    expected = analysis.too_dear_s(g)
    return (f"not run: expected to take at least {fmt_duration(expected)} a run, past "
            f"its share of the budget" if expected is not None else "")


def _runs_cell(g: Group, loaded: int) -> str:
    text = md_text(g.statuses) if g.ok else f"**{md_text(g.statuses)}**"
    if cut := cut_by_limit(g):
        text += f" ({cut})"
    if loaded:
        text += f" ({loaded} under load)"
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
    return md_text(analysis.BELOW_RESOLUTION) if g.mem_below_resolution else "—"


@dataclass(frozen=True)
class Column:
    """A table column: its heading, a cell's text and the raw value it sorts
    by (report.html's sortable tables; None: no value)."""
    heading: str
    text: Callable[[Group, Ranks], str]
    value: Callable[[Group, Ranks], float | None]


def _metric_column(m: Metric) -> Column:
    return Column(m.heading, lambda g, r: cell(g, m.name), lambda g, r: g.median(m.name))


def _ratio_column(heading: str, kind: str) -> Column:
    return Column(heading, lambda g, r: ratio_cell(g, r, kind), lambda g, r: r[g.key].get(kind))


# Every table column a workload's presentation may name (presentation.Presentation.columns):
# a metric's median by its name, then the ratios and memory per task.
COLUMNS: dict[str, Column] = {
    **{m.name: _metric_column(m) for m in METRICS.values()},
    "time_ratio": _ratio_column("×best time", "time"),
    "rss_ratio": _ratio_column("×best RSS", "rss"),
    "mem_per_task": Column("mem/task", lambda g, r: mem_cell(g), lambda g, r: g.mem_per_task_bytes),
    "x_floor": _ratio_column("×floor", "floor"),
}


def floor_is_best(members: list[Group], ranks: Ranks) -> bool:
    """The floor implementation is already the best of its set by the
    figure ×floor compares (no ratio to it below 1): ×floor would repeat ×best."""
    floors = [ranks[g.key].get("floor") for g in members]
    return all(f is None or f >= 1.0 for f in floors)


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


@dataclass
class Table:
    """One workload's table: the header, and per row its group, each cell's
    text (Markdown, its data escaped) and the raw value it sorts by (None:
    sorts as text)."""
    header: list[str]
    groups: list[Group] = field(default_factory=list)
    rows: list[list[tuple[str, float | str | None]]] = field(default_factory=list)

    def markdown(self) -> list[str]:
        return md_table(self.header, [[text for text, _ in row] for row in self.rows])


def build_table(workload: str, groups: list[Group], ranks: Ranks,
                loaded: Callable[[Group], int] = lambda g: g.loaded) -> Table:
    """One table for a workload: one row per configuration, the best first.
    The runtime strings are in the legend (legend_block), once; ×floor is
    shown only in the sets where the floor implementation is not already
    the best (elsewhere it would repeat ×best), and not at all when it is
    the best everywhere. loaded: a group's ok runs under load (a published
    page without runs.csv has them from its load.csv)."""
    declared, presented = WORKLOADS.get(workload), PRESENTATIONS.get(workload)
    ids = presented.columns if presented else tuple(COLUMNS)
    sets = analysis.comparable_sets(groups)
    floor_best = {k: floor_is_best(v, ranks) for k, v in sets.items()}
    if all(floor_best.values()):  # no floor in the run, or the floor is the best everywhere
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
        + ["impl", "runs"]
    table = Table(header + [COLUMNS[c].heading for c in ids])
    for g in sorted(groups, key=order):
        row: list[tuple[str, float | str | None]] = \
            [(str(g.n) if g.n is not None else "—", g.n)] if with_n else []
        if with_buffer:
            buffer = str(g.buffer) if g.buffer is not None else "—"
            if (note := analysis.capacity_note(g)) is not None:
                buffer += f" ({md_text(note)})"
            row.append((buffer, g.buffer))
        row += [("—", None) if (v := g.param(name)) is None else (md_text(v), v)
                for name in dimensions]
        row += [(md_text(g.impl), g.impl), (_runs_cell(g, loaded(g)), g.ok)]
        hide_floor = floor_best[(g.workload, g.n, g.buffer, g.params)]
        for c in ids:
            if c == "x_floor" and hide_floor:
                row.append(("", None))
            else:
                row.append((COLUMNS[c].text(g, ranks), COLUMNS[c].value(g, ranks)))
        table.groups.append(g)
        table.rows.append(row)
    return table


def workload_groups(groups: list[Group]) -> dict[str, list[Group]]:
    """The groups each workload's table shows (those with a run past setup),
    by workload in reading order: report.md, report.html and a published page."""
    by_workload: dict[str, list[Group]] = defaultdict(list)
    for g in groups:
        if any(r.status not in analysis.SETUP_STATUSES for r in g.rows):
            by_workload[g.workload].append(g)
    return {w: by_workload[w] for w in sorted(by_workload, key=workload_rank)}


def legend_rows(groups: list[Group], env: Env) -> list[list[str]]:
    """Each implementation once: its language, runtime string(s) and flags
    (the floor: the reference of ×floor; a variant's settings, a release's
    version); Markdown, the data escaped."""
    floors = set(env.floor_impls)
    seen: dict[str, list[str]] = {}
    for g in sorted(groups, key=lambda g: g.impl):
        runtimes = seen.setdefault(g.impl, [g.language or "—"])
        for r in g.rows:
            if r.runtime and r.runtime not in runtimes[1:]:
                runtimes.append(r.runtime)
    rows = []
    for impl, (language, *runtimes) in seen.items():
        flags = ["floor (×floor is a multiple of it)"] if impl in floors else []
        if v := env.variant(impl):
            flags += ([f"release {md_text(v.version)} of {md_text(v.impl)}"]
                      if v.version else []) + (
                [f"variant of {md_text(v.impl)}: " + "; ".join(
                    [md_text(f"{k}={x}") for k, x in v.env.items()]
                    + [md_text(f) for f in v.flags])]
                if v.env or v.flags else [])
        rows.append([md_text(impl), md_text(language), "; ".join(map(md_text, runtimes)) or "—",
                     ", ".join(flags) or "—"])
    return rows


def legend_block(groups: list[Group], env: Env) -> list[str]:
    return md_table(["impl", "language", "runtime", "flags"], legend_rows(groups, env))


MACHINE_HEADER = ["machine", "host", "OS", "git", "run", "started", "toolchains"]


def machines_block(machines: dict[str, Any]) -> list[str]:
    """A merged run's machines (harness merge), one row each."""
    return md_table(MACHINE_HEADER, machines_rows(machines))


def _toolchains(toolchains: dict[str, Any]) -> str:
    return ", ".join(md_text(f"{k} {v or 'absent'}") for k, v in sorted(toolchains.items())) or "—"


def _sleep_duration(groups: list[Group], settings: RecordedSettings) -> str:
    """The sleeps the rows record (format 5), else the settings' one."""
    held = sorted({r.duration_ms for g in groups for r in g.rows if r.duration_ms})
    if not held:
        return md_text(f"{settings.duration_ms} ms") if settings.duration_ms else "—"
    text = (f"{held[0]:,} ms" if len(held) == 1 else f"{held[0]:,} to {held[-1]:,} ms by run")
    if settings.adaptive_sleep:
        text += (" (--adaptive-sleep: twice the longest start time of the configuration's earlier runs "
                 "plus 1 s, at most its part's duration; runs.csv's duration_ms)")
    return md_text(text)


def _or_unknown(value: Any) -> Any:
    return "?" if value is None else value


def _commit(git: dict[str, Any]) -> str:
    return md_text(str(git.get("commit") or "unknown")[:12]) + (" (dirty)" if git.get("dirty") else "")


def machines_rows(machines: dict[str, Any]) -> list[list[str]]:
    """A merged run's machines, one row each (MACHINE_HEADER); Markdown, the
    data escaped."""
    rows = []
    for name, data in machines.items():
        m = Env(data)  # what merge kept of the machine's env.json (schema.MACHINE_KEYS)
        host, git = m.host, m.git
        rows.append([md_text(name),
                     md_text(f"{host.get('cpu_model', '?')}, {host.get('cores', '?')} cores, ")
                     + f"{fmt_bytes(host.get('ram_bytes'))} RAM",
                     md_text(f"{host.get('os', '?')}, kernel {host.get('kernel', '?')}"),
                     _commit(git), md_code(m.run_id or "?"), md_text(m.started_at or "?"),
                     _toolchains(m.toolchains)])
    return rows


def environment_block(env: Env, groups: list[Group]) -> list[str]:
    if not env:
        return ["(no env.json in this run directory)"]
    nodes = sorted({r.node for g in groups for r in g.rows if r.node})
    # a cluster run's replicates (run --on slurm): the nodes are blocks
    note = [f"Replicates run on a Slurm cluster (`run --on slurm`), on {len(nodes)} "
            f"node{'s' if len(nodes) > 1 else ''} ({', '.join(md_text(n) for n in nodes)}): "
            f"each row's node is in its `node` column; every ratio pairs runs within a node "
            f"(docs/statistics.md, Blocks).", ""] if nodes else []
    if env.machines:
        return note + ["Merged from several machines (`harness merge`, or a cluster's machine "
                       "kinds): each row's machine is in its `machine` column; the machines:",
                       ""] + machines_block(env.machines)
    return note + md_table(["", ""], environment_rows(env, groups))


def environment_rows(env: Env, groups: list[Group]) -> list[list[str]]:
    """The environment as (what, value) rows, Markdown with the data
    escaped; a merged run's: one per machine."""
    if env.machines:
        return [[row[0], ", ".join(row[1:])] for row in machines_rows(env.machines)]
    host = env.host
    ram = host.get("ram_bytes")
    git = env.git
    settings = env.settings
    toolchains = env.toolchains
    methods = sorted({r.peak_rss_method for g in groups for r in g.rows if r.peak_rss_method})
    rows = [
        ["run", md_code(env.run_id or "?")],
        ["host", md_text(f"{host.get('hostname', '?')}: {host.get('cpu_model', '?')}, "
                         f"{host.get('cores', '?')} cores, ") + f"{fmt_bytes(ram)} RAM"],
        ["OS", md_text(f"{host.get('os', '?')}, kernel {host.get('kernel', '?')}")],
        ["started / finished", md_text(f"{env.started_at or '?'} / "
                                       f"{env.finished_at or 'not finished'}")],
        ["git", _commit(git)],
        ["toolchains", _toolchains(toolchains)],
        ["repeats", md_text(_or_unknown(settings.repeat))],
        ["sleep duration", _sleep_duration(groups, settings)],
        ["iterations", md_text(settings.iterations or "program defaults")],
        ["limits", md_text(f"timeout {_or_unknown(settings.timeout_s)} s, ")
         + f"max RSS {fmt_bytes(settings.max_rss_bytes)}"],
        ["RSS sampling", md_text(f"every {_or_unknown(settings.sample_interval_s)} s; "
                                 f"peak RSS from {', '.join(methods) or '?'}")],
    ]
    relevant = {k: v for k, v in env.program_env.items() if runtime_env(k)}
    rows.append(["program env", (", ".join(md_code(f"{k}={v}") for k, v in sorted(relevant.items()))
                                 or "no runtime variables set") + " (all of it: env.json)"])
    return rows


OVERLAP_NOTE = ("Its runs started as soon as their language was built, while others still "
                "compiled: on a busy machine.")


def overlap_note(env: Env) -> str:
    """The sentence a check whose runs overlapped its builds
    (suites.toml overlap_builds) adds to its banner, else ""."""
    return OVERLAP_NOTE if env.settings.overlap_builds else ""


def _image(name: str, alt: str) -> str:
    """A plot of plots/ (its name holds a workload's, from the data)."""
    return f"![{md_text(alt)}](plots/{quote(name)})"


STANDINGS_HEADER = ["workload", "configuration", "figure", "impl", "leader", "× leader",
                    "verdict", "runs"]


def standings_rows(found: list[standings.Standing]) -> list[list[str]]:
    """One row per verdict of the run (standings.py), unsettled ones first:
    the ratio to the leader (worse side above 1) with its interval, the
    verdict and the ok runs a side it took."""
    rows = []
    for s in sorted(found, key=lambda s: (s.settled, analysis.group_sort_key(s.other.key),
                                          s.metric)):
        ratio = ("—" if s.interval is None else
                 f"{fmt_ratio(s.interval.estimate, best_in_bold=False)} "
                 f"{ratio_interval_text(s.interval)}")
        rows.append([md_text(s.other.workload), md_text(s.other.key.settings or "—"),
                     md_text(METRICS[s.metric].label), md_text(s.other.impl),
                     md_text(s.leader.impl), ratio,
                     md_text(standings.verdict_text(s)
                             + rests_on_two_modes([g.impl for g in s.bimodal])),
                     f"{s.runs[1]} and {s.runs[0]}"])
    return rows


HEADLINE_HEADER = ["workload", "figure", "at", "leader", "runner-up", "× leader", "verdict",
                   "runs"]


def md_anchor(heading: str) -> str:
    """The anchor a Markdown viewer gives a heading (GitHub's: lower case,
    punctuation dropped, spaces to hyphens)."""
    return "".join(c for c in heading.strip().lower() if c.isalnum() or c in " -_").replace(" ", "-")


def section_title(workload: str) -> str:
    presented = PRESENTATIONS.get(workload)
    return presented.title if presented else workload


def headline_ratio(h: verdicts.Headline) -> str:
    """The runner-up's ratio to the leader (worse side above 1) with its
    interval; a side of one run: the medians' ratio, said to be no more."""
    s = h.standing
    if s is not None and s.interval is not None:
        return (f"{fmt_ratio(s.interval.estimate, best_in_bold=False)} "
                f"{ratio_interval_text(s.interval)}")
    if h.runner is not None and h.leader.median(h.metric) and h.runner.median(h.metric):
        a, b = h.leader.median(h.metric), h.runner.median(h.metric)
        up = METRICS[h.metric].higher_is_better
        return f"{fmt_ratio(a / b if up else b / a, best_in_bold=False)} (no interval)"
    return "—"


def rests_on_two_modes(impls: list[str]) -> str:
    """'; rests on two modes (a, b)' for a verdict whose sides' runs fall into
    two modes (modes.py), "" for none (plain text)."""
    named = list(dict.fromkeys(impls))
    return f"; rests on two modes ({', '.join(named)})" if named else ""


def headline_word(h: verdicts.Headline) -> str:
    """The verdict word (Markdown): leads / level (within ±M%) / not settled: why."""
    s = h.standing
    word = h.word + (f": {h.why}" if h.why else "")
    if s is not None and s.verdict == standings.LEVEL_WORD:
        word += f" (within ±{fmt_percent(s.margin)})"
    if s is not None:
        word += rests_on_two_modes([g.impl for g in s.bimodal])
    return md_text(word)


def headline_cells(h: verdicts.Headline) -> list[str]:
    """A first-screen row's cells as Markdown (data escaped): the leader with
    its median and interval, the runner-up's ratio to it with its interval,
    the verdict word and, when not settled, why, and the runs a side."""
    s = h.standing
    runs = f"{s.runs[0]} and {s.runs[1]}" if s is not None else str(h.leader.ok)
    return [md_text(h.workload), md_text(METRICS[h.metric].label), md_text(h.where or "—"),
            f"{md_text(h.leader.impl)} {cell(h.leader, h.metric)}",
            md_text(h.runner.impl) if h.runner else "—", headline_ratio(h), headline_word(h),
            runs]


def check_lines(groups: list[Group]) -> list[str]:
    """A check's result, for the quick suite: its statuses, then each
    configuration that failed with its command (Markdown); no ranking."""
    counts: dict[Status, int] = defaultdict(int)
    failed = []
    for g in groups:
        bad: dict[Status, int] = defaultdict(int)
        for r in g.rows:
            counts[r.status] += 1
            if r.status not in (Status.OK, Status.SKIPPED):
                bad[r.status] += 1
        if bad:
            command = next((r.command for r in g.rows if r.command), None)
            failed.append(f"{md_text(g.label)}: "
                          + ", ".join(f"{n} {status}" for status, n in sorted(bad.items()))
                          + (f", {md_code(command)}" if command else ""))
    order = sorted(counts, key=lambda k: (k != Status.OK, k))
    head = ("**Check: " + ", ".join(f"{counts[k]} {k}" for k in order)
            + (f": {len(failed)} configurations failed.**" if failed else
               ": every implementation that ran answered right.**"))
    return [head, ""] + [f"- {f}" for f in failed] + ([""] if failed else [])


def run_standings(results: Results) -> list[standings.Standing]:
    """The run's verdicts, decided once for every output (report.md,
    report.html, the job summary): none for a check suite, else every
    judged figure's standing (standings.py)."""
    settings = results.env.settings
    if settings.suite in CHECK_SUITES:
        return []
    return standings.standings(standings.judged(results.groups, settings))


def run_questions(results: Results) -> questions.Questions | None:
    """The run's rankings and claims (questions.py), each family decided on
    its own: none for a check suite."""
    return ask_run(results.groups, results.env)


def ask_run(groups: list[Group], env: Env) -> questions.Questions | None:
    """run_questions on a run's groups and env.json (a published page's too)."""
    if env.settings.suite in CHECK_SUITES:
        return None
    return questions.ask(standings.judged(groups, env.settings), env.floor_impls)


RANKING_HEADER = ["workload", "configuration", "figure", "ranking (tiers)", "floor"]
CLAIMS_HEADER = ["article", "claim", "article's figure", "this run: numerator / denominator",
                 "verdict"]
def floor_multiple(r: questions.Ranking) -> float | None:
    """The ranking's leader as a multiple of the floor (worse side above 1)."""
    lead, base = r.order[0].median(r.metric), r.floor.median(r.metric) if r.floor else None
    if not base or not lead:
        return None
    return lead / base if not METRICS[r.metric].higher_is_better else base / lead


def ranking_rows(q: questions.Questions) -> list[list[str]]:
    """A row per ranking: its set, figure, tiers and the floor's multiple."""
    rows = []
    for r in q.rankings:
        multiple = floor_multiple(r)
        floor = (f"{md_text(r.floor.impl)}: leader at {fmt_ratio(multiple)}"
                 if multiple is not None and r.floor is not None else "")
        two = rests_on_two_modes([g.impl for p in r.pairs for g in p.bimodal])
        rows.append([md_text(r.workload), md_text(verdicts.where(r.order[0])),
                     md_text(METRICS[r.metric].label), md_text(r.tier_text() + two), floor])
    return rows


def claim_rows(q: questions.Questions) -> list[list[str]]:
    """A row per claim judged: its ratio with interval and runs, and its verdict."""
    rows = []
    for c in q.claims:
        n, m = c.runs
        runs = f"{n} and {m} runs" if n != m else f"{n} run{'s' if n != 1 else ''} a side"
        iv = c.interval
        num, den = c.num.median(c.claim.num.metric), c.den.median(c.claim.den.metric)
        ratio = (f"at least {fmt_metric(c.claim.num.metric, num)} / at least "
                 f"{fmt_metric(c.claim.den.metric, den)} (medians; {runs})" if not c.measured else
                 f"{fmt_fixed(iv.estimate, 2)}× [{fmt_fixed(iv.low, 2)}, {fmt_fixed(iv.high, 2)}] "
                 f"({runs}, {fmt_share(iv.confidence)})" if iv is not None else
                 f"{fmt_fixed(num / den, 2)}× ({runs}, no interval)")
        said = c.verdict + (f": {c.why}" if c.why else "") + (f"; {c.size}" if c.size else "")
        said += rests_on_two_modes([g.impl for g in c.bimodal])
        rows.append([md_text(c.claim.article), md_text(c.claim.text), md_text(c.claim.published),
                     md_text(ratio), md_text(said)])
    return rows


PLACES_HEADER = ["ranking", "runtime", "place (95%)", "tier", "could be best", "figure",
                 "× the one above", "×floor"]
def headline_places(groups: list[Group], env: Env) -> list[ranks.RankIntervals]:
    """The run's headline rankings with their joint rank intervals
    (ranks.py): none for a check suite."""
    if env.settings.suite in CHECK_SUITES:
        return []
    judged = standings.judged(groups, env.settings)
    found = ranks.all_rank_intervals(judged, env.floor_impls, headline_only=True)
    return sorted(found, key=lambda r: (workload_rank(r.workload),
                                        WORKLOADS[r.workload].headline_figures.index(r.metric)))


def ranking_title(r: ranks.RankIntervals) -> str:
    """'chain, N = 1M: warm iteration' (plain text)."""
    return f"{r.workload}, {verdicts.where(r.places[0].group)}: {METRICS[r.metric].label}"


def neighbour_note(r: ranks.RankIntervals, i: int) -> str:
    """Place i's figure over the one above it, with its 95% interval (worse
    side above 1), saying where a side's runs fall into two modes; "" for
    the first."""
    if i == 0:
        return ""
    above, this = r.places[i - 1].group, r.places[i].group
    iv = standings.pair(r.metric, above, this, r.margin).interval
    rests = md_text(rests_on_two_modes([p.impl for p in r.places[i - 1:i + 1]
                                        if p.modes is not None]))
    if iv is None:
        a, b = above.median(r.metric), this.median(r.metric)
        if not a or not b:
            return "—"
        ratio = a / b if METRICS[r.metric].higher_is_better else b / a
        return f"{fmt_ratio(ratio, best_in_bold=False)} (no interval){rests}"
    return f"{fmt_ratio(iv.estimate, best_in_bold=False)} {ratio_interval_text(iv)}{rests}"


def modes_text(found: modes.Modes, metric: str) -> str:
    """'two modes: 10 runs at 1 GiB (83%), 2 at 1.95 GiB (17%)' (Markdown)."""
    return md_text(found.text(lambda v: fmt_metric(metric, v)))


def figure_cell(p: ranks.Place, metric: str) -> str:
    """A place's median with its interval and, where its runs fall into two
    modes, each mode's share and figure: shown, not averaged."""
    text = cell(p.group, metric)
    return text + (f"; {modes_text(p.modes, metric)}" if p.modes is not None else "")


def floor_ratio(r: ranks.RankIntervals, g: Group) -> str:
    """A runtime's median as a multiple of the floor's (worse side above 1)."""
    own, base = g.median(r.metric), r.floor.median(r.metric) if r.floor else None
    if not own or not base:
        return "—"
    return fmt_ratio(base / own if METRICS[r.metric].higher_is_better else own / base,
                     best_in_bold=False)


def tier_cell(p: ranks.Place) -> str:
    """'2 (3rd–5th)': the tier's number and the places it spans; 'apart'
    where its interval spans tiers the others separate."""
    return "apart" if p.apart else f"{p.tier} ({fmt_places(p.tier_start, p.tier_end)})"


def place_rows(found: list[ranks.RankIntervals],
               link: Callable[[str], str] | None = None) -> list[list[str]]:
    """The first table: a row per runtime of each headline ranking, the
    ranking named on its first row (linked by link(workload) where given);
    Markdown, the data escaped."""
    rows = []
    for r in found:
        count = len(r.places)
        title = md_text(ranking_title(r))
        if link is not None:
            title = f"[{title}]({link(r.workload)})"
        for i, p in enumerate(r.places):
            rows.append([title if i == 0 else "", md_text(p.impl), fmt_places(p.lo, p.hi, count),
                         tier_cell(p),
                         "yes" if p.best else "", figure_cell(p, r.metric),
                         neighbour_note(r, i), floor_ratio(r, p.group)])
    return rows


def places_summary(found: list[ranks.RankIntervals]) -> str:
    """One sentence over the headline rankings: the median width of the rank
    intervals, the share placed within ±1, the best sets' sizes and how many
    rankings are one tier."""
    places = [p for r in found for p in r.places]
    if not places:
        return ""
    widths = sorted(p.width for p in places)
    median = statistics.median(widths)
    within = sum(p.width <= 2 for p in places)
    small = sum(len(r.best_set) <= 3 for r in found)
    single = sum(len(r.tiers()) == 1 for r in found)
    apart = sum(len(r.apart) for r in found)
    return (f"Headline rankings: {len(found)}; the median rank interval spans "
            f"{fmt_plain(median + 1)} places; {within} of {len(places)} runtimes "
            f"({fmt_share(within / len(places))}) are placed within ±1; {small} of {len(found)} "
            f"best sets hold at most 3; {single} of {len(found)} rankings are a single tier"
            + (f"; {apart} runtime{'s' if apart != 1 else ''} set apart from the tiers (an "
               "interval over half its ranking)" if apart else "") + ".")


def unranked_lines(found: list[ranks.RankIntervals], groups: list[Group]) -> list[str]:
    """Each headline ranking's runtimes that have no place because every run
    of theirs failed, those cut by our time limit named as such (Markdown)."""
    lines = []
    for r in found:
        ranked = {p.impl for p in r.places} | ({r.floor.impl} if r.floor else set())
        for g in groups:
            if (g.workload, g.n, g.buffer, g.params) != r.key or g.impl in ranked \
                    or g.values(r.metric) or not g.rows:
                continue
            why = cut_by_limit(g) or too_dear(g) or md_text(outgrown(g)) or md_text(g.statuses)
            lines.append(f"- {md_text(ranking_title(r))}: {md_text(g.impl)} has no place: "
                         f"{why}.")
    return lines


def two_modes_lines(groups: list[Group]) -> list[str]:
    """Every configuration whose headline figure's runs fall into two modes
    (modes.py), each mode's share and figure (Markdown list items)."""
    return [f"- {md_text(b.group.impl)}, {md_text(b.group.workload)} "
            f"{md_text(verdicts.where(b.group))}, {md_text(METRICS[b.metric].label)}: "
            f"{modes_text(b.modes, b.metric)}" for b in modes.bimodal_groups(groups)]


TWO_MODES_INTRO = ("**Two modes.** These configurations' runs fall into two clusters far apart "
                   "(docs/statistics.md, \"Two modes\"): their median lands in one or the other "
                   "by chance, so each mode is shown, and a verdict resting on one says so.")


def places_block(found: list[ranks.RankIntervals],
                 link: Callable[[str], str] | None = None,
                 groups: list[Group] | None = None) -> list[str]:
    """The headline rankings' section body (Markdown): its summary, intro and
    table; with the run's groups, the runtimes left unplaced (those cut by
    our time limit named) and the configurations whose runs fall into two
    modes."""
    if not found:
        return []
    lines = [f"**{md_text(places_summary(found))}**", "", outline.PLACES.intro, ""] + md_table(
        PLACES_HEADER, place_rows(found, link)) + [""]
    if groups is None:
        return lines
    if unranked := unranked_lines(found, groups):
        lines += ["Not placed:", ""] + unranked + [""]
    if two := two_modes_lines(groups):
        lines += [TWO_MODES_INTRO, ""] + two + [""]
    return lines


def md_heading(section: outline.Section, level: int, title: str = "") -> list[str]:
    """A section's heading (its title, or a workload's) and the blank line after it."""
    return ["#" * level + " " + md_text(title or section.title), ""]


def claims_block(asked: questions.Questions | None) -> list[str] | None:
    """The claims section's body: its intro and table; None without claims."""
    if asked is None or not asked.claims:
        return None
    return [outline.CLAIMS.intro, ""] + md_table(CLAIMS_HEADER, claim_rows(asked)) + [""]


STYLES_HEADER = ["server", "load", "sustains the most", "× the runner-up",
                 "each style's sustained rate (req/s) [its capacity's range)"]


def _rate_range(c: styles.StyleCapacity) -> str:
    """'when-all 3,200 [3,200, 3,520)'; 'async at least 12,800' for a bound."""
    if c.bound:
        return f"{c.style} at least {fmt_plain(c.median)}"
    top = "?" if c.high is None else fmt_plain(c.high)
    return f"{c.style} {fmt_plain(c.median)} [{fmt_plain(c.low)}, {top})"


def _bracket_text(low: float | None, high: float | None) -> str:
    """A bracket of ratios, either end open where a side is a bound."""
    if low is None and high is None:
        return "—"
    if high is None:
        return f"at least {fmt_ratio_bound(low)}×"
    if low is None:
        return f"at most {fmt_ratio_bound(high)}×"
    return f"[{fmt_ratio_bound(low)}, {fmt_ratio_bound(high)}]×"


def _runner_up(s: styles.ServerStyles) -> str:
    """The best over the runner-up: the bracket, the interval across repeats."""
    if s.verdict == styles.BOTH_BOUNDS:
        if s.below is None or s.below[1] is None:
            return "— (both bounds from below)"
        return (f"— (both bounds from below); every bound over {s.below[0]}: at least "
                f"{fmt_ratio_bound(s.below[1])}×")
    if s.bracket is None:
        return "—"
    repeats = sorted({c.repeats for c in s.styles[:2]})
    said = (f"{_bracket_text(*s.bracket)} (bracket; {' and '.join(map(str, repeats))} "
            f"repeat{'s' if repeats[-1] != 1 else ''})")
    if (iv := s.interval) is not None:
        said += (f"; across repeats {fmt_fixed(iv.estimate, 2)}× [{fmt_ratio_bound(iv.low)}, "
                 f"{fmt_ratio_bound(iv.high)}] ({fmt_share(iv.confidence)})")
    return said


def _best_text(s: styles.ServerStyles) -> str:
    if s.verdict == styles.NONE:
        return "none: no style sustained its first step"
    best = s.styles[0].style
    if s.verdict == styles.ONLY:
        return f"{best}: the only style to sustain a step"
    if s.verdict == styles.AHEAD:
        return f"{best}, ahead of {s.styles[1].style}"
    if s.verdict == styles.BOTH_BOUNDS:
        bounds = [c.style for c in s.styles if c.bound]
        every = "both" if len(bounds) == 2 else f"all {len(bounds)}"
        ahead = (f"; {every} ahead of {s.below[0]}" if s.below is not None
                 and s.below[1] is not None and s.below[1] > 1 else "")
        return (f"not ordered: {', '.join(bounds[:-1])} and {bounds[-1]} {every} sustained the "
                f"ladder's top or the generator's limit{ahead}")
    return f"{best} or {s.styles[1].style}: not settled apart"


def styles_rows(found: list[styles.ServerStyles]) -> list[list[str]]:
    """A row per server and load: the style that sustains the most, by how
    much over the runner-up, and every style's rate and range."""
    rows = []
    for s in found:
        each = [_rate_range(c) for c in s.styles] + [f"{u} none" for u in s.unsustained]
        rows.append([md_text(s.impl), md_text(s.key.settings), md_text(_best_text(s)),
                     md_text(_runner_up(s)), md_text("; ".join(each))])
    return rows


def styles_block(asked: questions.Questions | None) -> list[str] | None:
    """The styles section's body: its intro and table (the run's answer,
    Questions.styles); None without ladders in two styles on a server."""
    if asked is None or not asked.styles:
        return None
    return [outline.STYLES.intro, ""] + md_table(STYLES_HEADER, styles_rows(asked.styles)) + [""]


def rankings_block(asked: questions.Questions | None) -> list[str] | None:
    """The rankings section's body: its intro and table; None without rankings."""
    if asked is None or not asked.rankings:
        return None
    return [outline.RANKINGS.intro, ""] + md_table(RANKING_HEADER, ranking_rows(asked)) + [""]


def how_to_read(statistics: str, warnings: bool) -> list[str]:
    """The How to read section's body; statistics: docs/statistics.md's path
    from the output; warnings: the output has Warnings."""
    return [outline.HOW_TO_READ.intro.format(statistics=statistics,
                                             warnings=" and under Warnings" if warnings else "")]


def implementations_block(groups: list[Group], env: Env) -> list[str]:
    return [outline.IMPLEMENTATIONS.intro, ""] + legend_block(groups, env) + [""]


@dataclass
class RunReport:
    """What report.md's and report.html's sections are written from: the
    run's results, its plots' files by name, its standings, questions and
    headline rankings, whether it is a check, and its workloads' groups
    (workload_groups)."""
    results: Results
    plots: dict[str, Path]
    standing: list[standings.Standing]
    asked: questions.Questions | None
    placed: list[ranks.RankIntervals]
    checking: bool  # a check suite's run (CHECK_SUITES)
    by_workload: dict[str, list[Group]] = field(init=False)

    def __post_init__(self) -> None:
        self.by_workload = workload_groups(self.results.groups)

    @classmethod
    def of(cls, results: Results, plots: dict[str, Path],
           found: list[standings.Standing] | None, asked: questions.Questions | None,
           placed: list[ranks.RankIntervals] | None) -> RunReport:
        """found, asked, placed: as decided once for both reports, or None:
        run_standings, run_questions and headline_places decide them here."""
        env = results.env
        return cls(results, plots, run_standings(results) if found is None else found,
                   run_questions(results) if asked is None else asked,
                   headline_places(results.groups, env) if placed is None else placed,
                   env.settings.suite in CHECK_SUITES)


def md_sections(output: outline.Output, bodies: Mapping[str, Callable[[T], list[str] | None]],
                source: T, workloads: Callable[[int], list[str]]) -> list[str]:
    """The outline's sections an output in Markdown has: each heading, then
    bodies[id](source), the section left out where that is None; the
    workloads' sections, each with its own heading, from workloads(level)."""
    def section(s: outline.Section, level: int, inner: list[str]) -> list[str]:
        if s is outline.WORKLOADS:
            return workloads(level)
        body = bodies[s.id](source)
        return [] if body is None else md_heading(s, level) + body + inner

    return outline.walk(output, section)


def _verdicts(r: RunReport) -> list[str]:
    """The Verdicts' lead: a check's result, or the questions' summary."""
    if r.checking:
        return check_lines(r.results.groups)
    lines = [f"**{md_text(r.asked.summary())}**", ""] if r.asked is not None else []
    if note := standings.unjudged_note(r.results.env.settings):
        lines += [md_text(note), ""]
    return lines


def _places(r: RunReport) -> list[str] | None:
    return places_block(r.placed, lambda w: "#" + md_anchor(section_title(w)),
                        standings.judged(r.results.groups, r.results.env.settings)) or None


def _leaders(r: RunReport) -> list[str] | None:
    """The first screen's table, the leaders linked to their workloads."""
    if r.checking:
        return None
    rows = []
    for h in verdicts.headlines(r.results.groups, r.standing):
        cells = headline_cells(h)
        cells[0] = f"[{cells[0]}](#{md_anchor(section_title(h.workload))})"
        rows.append(cells)
    return ((md_table(HEADLINE_HEADER, rows) if rows else ["No runs were recorded."])
            + ["", outline.LEADERS.intro, ""])


def _failures(r: RunReport) -> list[str] | None:
    failed = verdicts.failures(r.results.groups)
    return [f"- {md_text(f)}" for f in failed] + [""] if failed else None


def _warnings(r: RunReport) -> list[str]:
    warned = analysis.warnings(r.results.groups, r.results.env, r.results.notes)
    return ([f"- {md_text(n)}" for n in warned] or ["None."]) + [""]


def _notes(r: RunReport) -> list[str] | None:
    notes = analysis.design_notes(r.results.groups)
    return [f"- {md_text(n)}" for n in notes] + [""] if notes else None


def _workloads(r: RunReport, level: int) -> list[str]:
    """A section per workload: its table, then its plots, time first."""
    lines = [] if r.results.groups else ["No runs were recorded in runs.csv.", ""]
    for workload, members in r.by_workload.items():
        lines += md_heading(outline.WORKLOADS, level, section_title(workload))
        lines += build_table(workload, members, r.results.ranks).markdown() + [""]
        mine = [name for name in r.plots if name.startswith(f"{workload}_")]
        mine.sort(key=lambda name: [k in name for k in ("_time", "_rss", "_mem_per_task")],
                  reverse=True)
        lines += [_image(name, name[:-4].replace("_", " ")) for name in mine] + [""]
    return lines


def _over_time(r: RunReport) -> list[str] | None:
    """The RSS-over-time plots, one per workload shown."""
    shown = [f"rss_over_time_{w}.png" for w in r.by_workload if f"rss_over_time_{w}.png" in r.plots]
    return [_image(name, name[:-4]) for name in shown] + [""] if shown else None


def _standings(r: RunReport) -> list[str] | None:
    if not r.standing:
        return None
    return ([f"**{md_text(standings.summary(r.standing))}**", "", outline.STANDINGS.intro, ""]
            + md_table(STANDINGS_HEADER, standings_rows(r.standing)) + [""])


# Each section's body in report.md (the outline gives their order and titles):
# its lines, or None where the run has none of it.
_MD_BODIES: dict[str, Callable[[RunReport], list[str] | None]] = {
    outline.VERDICTS.id: _verdicts,
    outline.PLACES.id: _places,
    outline.CLAIMS.id: lambda r: claims_block(r.asked),
    outline.STYLES.id: lambda r: styles_block(r.asked),
    outline.RANKINGS.id: lambda r: rankings_block(r.asked),
    outline.LEADERS.id: _leaders,
    outline.FAILURES.id: _failures,
    outline.ENVIRONMENT.id: lambda r: environment_block(r.results.env, r.results.groups) + [""],
    outline.HOW_TO_READ.id: lambda r: how_to_read("../../docs/statistics.md", warnings=True),
    outline.WARNINGS.id: _warnings,
    outline.NOTES.id: _notes,
    outline.GLANCE.id: lambda r: (["![summary](plots/summary.png)", ""] if "summary.png" in r.plots
                              else None),
    outline.IMPLEMENTATIONS.id: lambda r: (implementations_block(r.results.groups, r.results.env)
                                           if r.by_workload else None),
    outline.OVER_TIME.id: _over_time,
    outline.STANDINGS.id: _standings,
    outline.FILES.id: lambda r: [outline.FILES.intro, ""],
}


def render_markdown(results: Results, pngs: list[str] | None = None,
                    found: list[standings.Standing] | None = None,
                    asked: questions.Questions | None = None,
                    placed: list[ranks.RankIntervals] | None = None) -> str:
    """report.md: its title and a check's banner, then the outline's sections
    (outline.py). pngs: the plots' file names (default: those in plots/);
    found, asked, placed: the run's standings, questions and headline
    rankings (default: run_standings, run_questions, headline_places)."""
    run_dir, env = results.run.path, results.env
    plots_dir = run_dir / "plots"
    if pngs is None:
        pngs = sorted(p.name for p in plots_dir.glob("*.png")) if plots_dir.is_dir() else []
    lines = [f"# Benchmark report: run {md_text(env.run_id or run_dir.name)}", ""]
    report = RunReport.of(results, {name: plots_dir / name for name in pngs}, found, asked, placed)
    if report.checking:
        lines += ["".join(f"> {line}\n" for line in
                          outline.CHECK_BANNER.format(suite=env.settings.suite).splitlines())]
        if note := overlap_note(env):
            lines[-1] += f"> {note}\n"
    return "\n".join(lines + md_sections(outline.MD, _MD_BODIES, report,
                                         lambda level: _workloads(report, level)))


def write_markdown(results: Results, into: Path | None = None,
                   pngs: list[str] | None = None,
                   found: list[standings.Standing] | None = None,
                   asked: questions.Questions | None = None,
                   placed: list[ranks.RankIntervals] | None = None) -> Path:
    path = (into or results.run.path) / "report.md"
    path.write_text(render_markdown(results, pngs, found, asked, placed), encoding="utf-8")
    return path
