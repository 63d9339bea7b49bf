"""The answers a reader looks for first, in sentences, per workload: which
implementation used the least memory (per task where the run can tell,
else peak RSS) and which was fastest (the iteration time the workload is
ranked by, at its largest N), each with its interval and whether its lead
over the runner-up is settled; then the order of the rest and the failures.

report.md and report.html print the same sentences, from here. Pure: it
reads analysis's groups and writes nothing; the numbers' text comes from
formatting. Every figure carries its interval, or says it has none.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Callable

from .analysis import SETUP_STATUSES, Group, by_design, choice_params, iter_metric
from .formatting import (fmt_bounds, fmt_bytes, fmt_count, fmt_interval, fmt_ratio,
                         fmt_ratio_bound)
from .metrics import METRICS, fmt_metric
from .presentation import PRESENTATIONS
from .standings import BEHIND, FEW_RUNS, LEVEL_WORD, Standing, standings
from .stats import Interval, ratio_interval
from .workloads import workload_rank

MEMORY_PER_TASK = "memory per task"


@dataclass(frozen=True)
class Line:
    kind: str  # "memory", "speed", "rest" or "failures"
    text: str


@dataclass(frozen=True)
class WorkloadVerdicts:
    workload: str
    title: str
    lines: tuple[Line, ...]


@dataclass(frozen=True)
class Figure:
    """One figure a contest is decided by."""
    name: str  # in sentences: "memory per task", "warm iteration"
    value: Callable[[Group], float | None]
    text: Callable[[Group], str]  # the value with its interval, or why it has none
    lead: Callable[[Group, Group], Interval | None]  # the loser's figure over the winner's (> 1)
    fmt: Callable[[float], str]
    higher_is_better: bool = False
    runs: Callable[[Group], int] = lambda g: g.ok
    metric: str | None = None  # the runs.csv figure, where it is one (standings judge those)


# -- the figures ---------------------------------------------------------

def _quotient(num: Interval | None, den: Interval | None) -> Interval | None:
    """num / den for two independent positive intervals (memory-per-task
    slopes), at the product of their confidences; as analysis's ×floor."""
    if num is None or den is None or num.low <= 0 or den.low <= 0:
        return None
    return Interval(num.estimate / den.estimate, num.low / den.high, num.high / den.low,
                    num.confidence * den.confidence, num.runs + den.runs)


def _mem_text(g: Group) -> str:
    iv = g.mem_interval
    return fmt_bytes(g.mem_per_task_bytes) + " " + (
        fmt_interval(iv, 0, fmt_bytes) if iv is not None else "(1 run, no interval)")


MEM_PER_TASK = Figure(
    MEMORY_PER_TASK, lambda g: g.mem_per_task_bytes, _mem_text,
    lambda best, other: _quotient(other.mem_interval, best.mem_interval), fmt_bytes,
    runs=lambda g: min(g.mem_interval.runs) if g.mem_interval is not None else 1)


def metric_figure(metric: str) -> Figure:
    m = METRICS[metric]

    def text(g: Group) -> str:
        s = g.metrics[metric]
        return fmt_metric(metric, s.median) + " " + fmt_interval(
            s.interval, s.count, lambda v: fmt_metric(metric, v))

    def lead(best: Group, other: Group) -> Interval | None:
        if m.higher_is_better:
            return ratio_interval(other.values(metric), best.values(metric))
        return ratio_interval(best.values(metric), other.values(metric))

    return Figure(m.label, lambda g: g.median(metric), text, lead,
                  lambda v: fmt_metric(metric, v), m.higher_is_better,
                  runs=lambda g: g.metrics[metric].count if metric in g.metrics else 0,
                  metric=metric)


# -- the sets compared -----------------------------------------------------

def _where(g: Group) -> str:
    """The configuration in a sentence: 'N = 1M, B = 100, users = 10'."""
    parts = [] if g.n is None else [f"N = {fmt_count(g.n)}"]
    if g.buffer is not None:
        parts.append(f"B = {fmt_count(g.buffer)}")
    parts += [f"{name} = {fmt_count(v) if isinstance(v, (int, float)) else v}"
              for name, v in g.params if v is not None]
    return ", ".join(parts)


def _largest_set(groups: list[Group], value: Callable[[Group], float | None],
                 prefer_buffer: int | None) -> list[Group]:
    """The comparable set at the largest configuration (N, then the other
    dimensions) where at least two implementations have the figure; at the
    presentation's buffer where the run has it."""
    sets: dict[tuple, list[Group]] = defaultdict(list)
    for g in groups:
        if value(g) is not None:
            sets[(g.n, g.buffer, g.params)].append(g)
    contested = {k: v for k, v in sets.items() if len(v) >= 2} or sets
    if not contested:
        return []
    if prefer_buffer is not None and any(k[1] == prefer_buffer for k in contested):
        contested = {k: v for k, v in contested.items() if k[1] == prefer_buffer}
    top = max(contested, key=lambda k: contested[k][0].key.sort_key)
    return contested[top]


# -- the sentences -----------------------------------------------------------

def _ratio(figure: Figure, best: Group, other: Group) -> tuple[float, Interval | None, bool]:
    """other's figure over best's (> 1: best is better), its interval, and
    whether a side has a single run."""
    iv = figure.lead(best, other)
    if iv is not None:
        return iv.estimate, iv, False
    a, b = figure.value(best), figure.value(other)
    ratio = a / b if figure.higher_is_better else b / a
    return ratio, None, min(figure.runs(best), figure.runs(other)) < 2


def _runs_a_side(iv: Interval) -> str:
    if len(iv.runs) == 2:
        a, b = iv.runs
        return f"{a} runs a side" if a == b else f"{a} and {b} runs"
    return f"{min(iv.runs)} runs at each N"


def _no_interval(one_run: bool) -> str:
    return "1 run, no interval" if one_run else "no interval"


COMPARATIVE = {"memory": "less than", "speed": "faster than"}
HEADLINE = {"memory": "used the least {name}", "speed": "was fastest ({name})"}
LEADS = {"memory": "leads on {name}", "speed": "leads on speed ({name})"}


Judged = dict[tuple, Standing]  # by (leader's key, other's key, metric)


def contest(groups: list[Group], figure: Figure, kind: str,
            judged: Judged | None = None) -> tuple[str, str] | None:
    """(the winner's sentence, the rest's) for one comparable set; None
    when no implementation has the figure. The lead is the runner-up's
    figure over the winner's: settled as the run's standings decided it
    (standings.py: within the family of all the run's verdicts), else,
    for a figure they do not judge (memory per task), when its interval
    lies wholly above 1."""
    measured = [g for g in groups if figure.value(g) is not None]
    if not measured:
        return None
    sign = -1 if figure.higher_is_better else 1
    measured.sort(key=lambda g: (sign * figure.value(g), g.impl))
    best, where = measured[0], _where(measured[0])
    at = f" at {where}" if where else ""
    name = figure.name
    comparative = "more than" if figure.higher_is_better else COMPARATIVE[kind]
    if len(measured) == 1:
        return (f"{best.impl} alone has a {name}{at}: {figure.text(best)}; "
                f"no rival to compare with."), ""
    runner = measured[1]
    ratio, iv, one_run = _ratio(figure, best, runner)
    times = fmt_ratio(ratio, best_in_bold=False)
    side = iv.side(1.0) if iv is not None else None
    standing = (judged or {}).get((best.key, runner.key, figure.metric)) if figure.metric else None
    if standing is not None:  # the run's family decides, not this pair alone
        side = "above" if standing.verdict == BEHIND else "not settled"
    if standing is not None and standing.verdict == LEVEL_WORD:
        first = (f"{best.impl} and {runner.impl} are level on {name}{at} (within "
                 f"±{standing.margin * 100:g}%): {figure.text(best)} against "
                 f"{figure.text(runner)}.")
    elif side == "above":
        first = (f"{best.impl} {HEADLINE[kind].format(name=name)}{at}: {figure.text(best)}, "
                 f"{times} {fmt_bounds(iv, fmt_ratio_bound)} {comparative} {runner.impl} "
                 f"(settled).")
    else:
        if iv is None:
            lead, why = times, _no_interval(one_run)
        elif standing is not None and not standing.why.startswith(FEW_RUNS):
            lead, why = f"{times} {fmt_bounds(iv, fmt_ratio_bound)}", standing.why
        elif side == "not settled" or standing is not None:  # too few runs: say how sure
            lead = f"{times} {fmt_bounds(iv, fmt_ratio_bound)}"
            why = f"{iv.confidence:.0%}, {_runs_a_side(iv)}"
        else:  # settled, but the interval holds 1: the two may be equal
            lead = f"{times} {fmt_bounds(iv, fmt_ratio_bound)}"
            why = f"its {iv.confidence:.0%} interval holds 1×"
        first = (f"{best.impl} {LEADS[kind].format(name=name)}{at}: {figure.text(best)}, "
                 f"{lead} {comparative} {runner.impl}, but not settled against "
                 f"{runner.impl} ({why}).")
    rest = sorted((_ratio(figure, best, g) + (g.impl,) for g in measured[2:]),
                  key=lambda r: (r[0], r[3]))
    if not rest:
        return first, ""

    def suffix(iv: Interval | None, one: bool) -> str:
        if iv is None:
            return _no_interval(one)
        return "" if iv.settled else f"{iv.confidence:.0%}"

    suffixes = {suffix(iv, one) for _, iv, one, _ in rest}
    shared = suffixes.pop() if len(suffixes) == 1 else None
    entries = []
    for ratio, iv, one, impl in rest:
        text = f"{impl} {fmt_ratio(ratio, best_in_bold=False)}"
        if iv is not None:
            text += f" {fmt_bounds(iv, fmt_ratio_bound)}"
        if shared is None and suffix(iv, one):
            text += f" ({suffix(iv, one)})"
        entries.append(text)
    head = f"The rest, as multiples of the leader's {name}"
    if shared:
        head += f" ({'intervals at ' + shared if shared.endswith('%') else shared})"
    return first, f"{head}: " + "; ".join(entries) + "."


# -- failures ------------------------------------------------------------

REASONS = (  # what an error's text means, in a few words, first match wins
    (("threads cannot be alive", "pid_max", "Resource temporarily unavailable",
      "spawning thread", "unable to create native thread"), "thread limit"),
    (("Out of memory", "out of memory", "--max-rss", "OutOfMemory", "Cannot allocate"),
     "out of memory"),
    (("no exit within",), "timeout"),
)
KNOWN_REASONS = {words for _, words in REASONS}
REDUNDANT = {"timeout": "timeout", "oom": "out of memory"}  # said by the status's words
STATUS_WORDS = {"crashed": "crashed", "oom": "ran out of memory", "timeout": "timed out",
                "invalid": "gave a wrong answer", "build-failed": "did not build",
                "skipped": "did not run"}


def reason(error: str | None) -> str:
    """An error in a few words: 'thread limit', or its first clause."""
    text = (error or "").strip()
    if not text:
        return "no reason recorded"
    for needles, words in REASONS:
        if any(n in text for n in needles):
            return words
    for prefix in ("exit ", "killed by "):
        if text.startswith(prefix) and ": " in text:
            text = text.split(": ", 1)[1]
    text = text.removeprefix("error: ").split("\n")[0]
    return text if len(text) <= 70 else text[:67].rstrip() + "..."


def failures(groups: list[Group]) -> list[str]:
    """Per implementation, where its runs failed and why: 'java-platform:
    crashed at N = 1M (thread limit)'. Setup failures (a language that did
    not build or run) are named once; skips by design are not failures."""
    out: dict[str, dict[tuple[str, str], list[str]]] = defaultdict(dict)
    setup: dict[str, str] = {}
    for g in sorted(groups, key=lambda g: (g.impl, g.key.sort_key)):
        if by_design(g, groups):
            continue
        failed = [r for r in g.rows if r["status"] != "ok"]
        if not failed:
            continue
        if all(r["status"] in SETUP_STATUSES for r in failed) and not g.ok:
            r = failed[0]
            setup.setdefault(g.impl, f"{STATUS_WORDS.get(r['status'], r['status'])} "
                                     f"({reason(r.get('error'))})")
            continue
        counts: dict[str, int] = defaultdict(int)
        for r in failed:
            counts[r["status"]] += 1
        status = max(counts, key=lambda s: (counts[s], s))
        words = STATUS_WORDS.get(status, status)
        whys = sorted({reason(r.get("error")) for r in failed if r["status"] == status})
        known = [w for w in whys if w in KNOWN_REASONS]
        whys = [w for w in (known or whys) if w != REDUNDANT.get(status)]
        share = "" if not g.ok and len(counts) == 1 else f"{counts[status]} of {len(g.rows)} runs "
        why = f" ({'; '.join(whys)})" if whys else ""
        where = _where(g)
        places = out[g.impl].setdefault((share + words, why), [])
        if where:
            places.append(where)
    lines = [f"{impl}: {what}" for impl, what in sorted(setup.items())]
    for impl, parts in sorted(out.items()):
        lines.append(f"{impl}: " + ", ".join(
            f"{what}{' at ' + ' and '.join(places) if places else ''}{why}"
            for (what, why), places in parts.items()))
    return lines


# -- per workload ----------------------------------------------------------

def workload_verdicts(workload: str, groups: list[Group],
                      judged: Judged | None = None) -> WorkloadVerdicts:
    presented = PRESENTATIONS.get(workload)
    title = presented.title if presented else workload
    prefer = presented.panel.buffer if presented and presented.panel else None
    lines: list[Line] = []
    sections: dict[tuple, list[Group]] = defaultdict(list)
    for g in groups:
        sections[choice_params(g)].append(g)
    for _, members in sorted(sections.items(), key=lambda kv: str(kv[0])):
        # memory: per task where at least two implementations have it, else peak RSS
        mem_set = _largest_set(members, MEM_PER_TASK.value, prefer)
        if len(mem_set) >= 2:
            figure = MEM_PER_TASK
        else:
            figure = metric_figure("peak_rss_bytes")
            mem_set = _largest_set(members, figure.value, prefer)
        _add(lines, contest(mem_set, figure, "memory", judged), "memory")
        # speed: the iteration time it is ranked by, else a higher-is-better headline figure
        if presented is None or presented.time_ratio:
            timed = _largest_set(members, lambda g: g.median("first_iter_s"), prefer)
            if timed:
                _add(lines, contest(timed, metric_figure(iter_metric(timed)), "speed", judged),
                     "speed")
        else:
            best_up = next((m for m in (presented.headline if presented else ())
                            if METRICS[m].higher_is_better), None)
            if best_up is not None:
                chosen = _largest_set(members, lambda g: g.median(best_up), prefer)
                _add(lines, contest(chosen, metric_figure(best_up), "speed", judged), "speed")
    failed = failures(groups)
    if failed:
        lines.append(Line("failures", "Failures: " + "; ".join(failed) + "."))
    return WorkloadVerdicts(workload, title, tuple(lines))


def _add(lines: list[Line], found: tuple[str, str] | None, kind: str) -> None:
    if found is None:
        return
    first, rest = found
    lines.append(Line(kind, first))
    if rest:
        lines.append(Line("rest", rest))


def verdicts(groups: list[Group]) -> list[WorkloadVerdicts]:
    """Every workload that ran, in declaration order."""
    by_workload: dict[str, list[Group]] = defaultdict(list)
    for g in groups:
        by_workload[g.workload].append(g)
    judged = {(st.leader.key, st.other.key, st.metric): st for st in standings(groups)}
    return [workload_verdicts(w, by_workload[w], judged)
            for w in sorted(by_workload, key=workload_rank)
            if any(r["status"] not in SETUP_STATUSES for g in by_workload[w] for r in g.rows)]


def markdown(found: list[WorkloadVerdicts]) -> list[str]:
    """The Verdicts section's body for report.md."""
    lines: list[str] = []
    for v in found:
        lines += [f"**{v.workload}**", ""]
        lines += [f"- {line.text}" for line in v.lines] or ["- Nothing measured."]
        lines.append("")
    return lines or ["No runs were recorded.", ""]
