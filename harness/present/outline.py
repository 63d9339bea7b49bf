"""The outline of a run's reports, once: the sections of report.md,
report.html, a published page (docs/results) and a GitHub job summary, in
their order, each with its id, its title, the text that says how to read it
and the outputs that have it. The renderers (report.render_markdown,
html_report.render_html, publish/page.render_page,
export/github_summary.job_summary) walk it and write each section's body;
none holds an order or a title of its own. Here, in present/, because
publish/ reads present/ and never the other way.

A section's heading is level 2 and its children's level 3 (in a job summary,
one level below its title's 3: walk's level); in an output that leaves a
parent out (a page has no Verdicts), its children stand in its place, at
its level."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Callable

from ..analyse import analysis
from ..core.formatting import fmt_bytes, fmt_fixed, fmt_plain, fmt_share
from ..core.stats import runs_needed
from ..execute.machineload import LOADED_FRAC


class Output(Enum):
    MARKDOWN = "report.md"
    HTML = "report.html"
    PAGE = "a published page"
    GITHUB = "a GitHub job summary"


MD, HTML, PAGE, GITHUB = Output.MARKDOWN, Output.HTML, Output.PAGE, Output.GITHUB
REPORTS = frozenset({MD, HTML})
# The outputs that show the whole run; a job summary shows its verdicts only.
WHOLE = frozenset({MD, HTML, PAGE})
EVERY = frozenset(Output)


# The banner over a check suite's report (report.md, report.html); {suite}: its name.
CHECK_BANNER = """\
**This is a check, not a measurement.** The `{suite}` suite runs every
implementation at tiny N, once each, to show that everything builds, runs
and answers correctly. Its figures carry no spread and no weight: cite the
default suite (`./run.sh`) or your own repeated runs instead."""


@dataclass(frozen=True)
class Section:
    """id: the section's name, and its element's id in report.html; title:
    its heading ("" for WORKLOADS: one heading per workload, its
    presentation's title); intro: how to read it (its renderer places it)."""
    id: str
    title: str
    outputs: frozenset[Output]
    intro: str = ""
    children: tuple[Section, ...] = ()


PLACES = Section("places", "Rankings at the articles' sizes", EVERY, (
    "Each ranking the articles published (warm iteration and peak RSS at each "
    "workload's articles' size; sleep: peak RSS), best first by the geometric mean "
    "of its ok runs, the floor left out. **place (95%)**: the places the runtime "
    "can hold, jointly for the whole ranking with 95% confidence; **could be "
    "best**: in the set that holds the best with 95% confidence; **tier**: places "
    "to quote as a group, a new tier starting where every runtime above is placed "
    "above every one below; a runtime whose interval spans over half the ranking "
    "(and over 3 places) is left out of that rule, and set **apart** where a tier's "
    "edge falls inside its interval. **× the one above**: the runtime's figure over its "
    "neighbour's above, with its 95% interval. **×floor**: its median over the "
    "floor's. How: docs/statistics.md, \"Rank intervals\"."))

CLAIMS = Section("claims", "What the articles claimed, and what this run measured", EVERY, (
    "The articles' claims (harness/core/claims.py, docs/articles.md) whose two "
    "configurations this run measured, judged as one family (false discovery "
    "rate 5%): *holds* on the side the article gave, *does not hold* on the other or "
    "level within the margin; *not measured* where both sides are sustained rates "
    "bounded from below (out of the count); the article's own size, where it gave "
    "one, against the 95% interval."))

STYLES = Section("styles", "Which handler style sustains the most", EVERY, (
    "Seed 004's question, per server, from its rate ladders: each style's sustained "
    "rate (the median over its repeats; *at least* where the ladder reached its top "
    "step or the load generator's limit, a bound from below) and the range its "
    "capacity lies in, from the least sustained rate of its repeats to the most "
    "offered above one that ended a ladder. **× the runner-up**: the best style's "
    "rate over the next one's, as the bracket those ranges allow, and, where each "
    "has two repeats or more, the exact interval across repeats at the confidence "
    "that count allows (67% at 2 a side); **ahead** where the "
    "bracket lies above 1, every repeat of the best above any of the runner-up's. "
    "How: docs/statistics.md, \"Which style sustains the most\"."))

RANKINGS = Section("rankings", "Rankings", WHOLE, (
    "Each comparable set ranked on each headline figure, best first, the floor "
    "left out (its column gives the leader's multiple of it). A tier is a run of "
    "neighbours not settled apart: `=` level within the figure's margin, `~` not "
    "settled; a `;` is a settled gap. Every neighbour pair of the run is one "
    "family, false discovery rate 5% (docs/statistics.md, \"Rankings and "
    "claims\")."))

LEADERS = Section("leaders", "Leaders at the largest sizes", REPORTS | {GITHUB}, (
    "A row per workload and headline figure, at the largest configuration two "
    "or more implementations measured: the leader, with its median and interval, "
    "and the runner-up's figure over the leader's. **leads**: the runner-up is "
    "behind, settled; **level**: the ratio's interval lies within the figure's "
    "margin; **not settled**, with why. Every verdict of the run is decided as one "
    "family, at a false discovery rate of 5% (the Standings table, at the end, "
    "lists them all). Every other implementation's standing is in its workload's "
    "table and plots below. How the figures are made: How to read, below."))

FAILURES = Section("failures", "Failures", REPORTS | {GITHUB})

VERDICTS = Section("verdicts", "Verdicts", REPORTS,
                   children=(PLACES, CLAIMS, STYLES, RANKINGS, LEADERS, FAILURES))

# Its fields: {statistics}, the path of docs/statistics.md from the output;
# {warnings}, where else a failed run shows up (the reports' Warnings).
HOW_TO_READ = Section("how-to-read", "How to read", frozenset({MD, PAGE}), """\
Each cell is the **median** over the repeats with status `ok`, followed by its
95% confidence interval, `[low, high]`; where the runs are too few for 95% ({median_runs}
are needed for a median, {ratio_runs} a side for a ratio) the interval shown is the widest
they allow and its own, lower confidence follows it, e.g. `(75%)`: such a figure
is **not settled**, and one run has no interval at all. Every ratio (×best,
×floor) is the median of the pairwise ratios of the two sides' runs with the
same kind of interval, and the best (1.00×) is in bold only when every other
implementation's ratio to it is settled above 1, otherwise "no settled winner";
the methods and how to check a figure by hand are in
[docs/statistics.md]({{statistics}}). ⚠ marks a noisy figure: its
interval reaches more than {noisy}% from the median.

`runs` counts every repeat by status: failed runs are never dropped, they show
up there{{warnings}}. ×best is relative to the best implementation at
the same N (and buffer). Time ratios use the warm iteration when every
implementation has one, else the cold one; cold is the process's first run of
the workload, warm the median of the timed iterations after the warm-up
(`warmup_runs` untimed runs, `--warmup-ms`), or after the first iteration
where there was none. mem/task is the least-squares slope of the median peak
RSS over the run's N up to that row (the N used are in summary.csv), with the
interval the medians' intervals allow; it reads "below resolution", and is
neither ranked nor compared, when the growth it rests on is under {res} or its
interval reaches zero. "under load": while the run ran, other processes used
over {loaded} of the machine's CPU (`other_cpu_frac` in runs.csv).
×floor, where the run has the floor implementation (cpp-coroutines: C++20
coroutines on one thread, nothing but frames and a scheduler), is the
multiple of the floor's figure at the same configuration: iteration time
(hence time per hop, message or task) or, for sleep, memory per task.
Outliers (outside median ± {k}·max(1.4826·MAD, {floor} of the median))
are flagged, never removed.
""".format(noisy=fmt_fixed(analysis.NOISY_WIDTH * 100, 0), k=fmt_plain(analysis.OUTLIER_K),
           floor=fmt_share(analysis.MAD_FLOOR),
           res=fmt_bytes(analysis.MEM_RESOLUTION_BYTES), loaded=fmt_share(LOADED_FRAC),
           median_runs=runs_needed()[0], ratio_runs=runs_needed()[1]))

WORKLOADS = Section("workloads", "", WHOLE)

IMPLEMENTATIONS = Section("implementations", "Implementations", WHOLE,
                          "Each implementation's runtime, once (the tables name the "
                          "implementation only).")

STANDINGS = Section("standings", "Standings", REPORTS,
                    "Every implementation against its set's leader, the unsettled first "
                    "(docs/statistics.md, \"Verdicts\"): the tables' × leader columns.")

GOALS = Section("goals", "Performance goals", frozenset({PAGE}),
                "The project's goals (issue 13, declared in harness/core/presentation.py), "
                "judged on this run; they are benchmarks, never timed tests. Goals whose "
                "configurations this run did not measure are left out.")

FILES = Section("files", "Files", frozenset({MD}),
                "`runs.csv` (every raw run), `samples.csv` (RSS and threads over time), "
                "`summary.csv` (these statistics, one row per group), `results.json` "
                "(environment, statistics and raw rows with outlier flags), `plots/`.")

ENVIRONMENT = Section("environment", "Environment", REPORTS)
WARNINGS = Section("warnings", "Warnings", REPORTS)
NOTES = Section("notes", "Notes", REPORTS)
GLANCE = Section("at-a-glance", "At a glance", REPORTS)
OVER_TIME = Section("rss-over-time", "RSS over time (largest N of each implementation)", REPORTS)
CALIBRATION = Section("calibration", "How often the harness is wrong here: the A/A calibration",
                      frozenset({PAGE}))

OUTLINE: tuple[Section, ...] = (VERDICTS, ENVIRONMENT, HOW_TO_READ, WARNINGS, NOTES, GLANCE,
                                WORKLOADS, IMPLEMENTATIONS, OVER_TIME, STANDINGS, GOALS,
                                CALIBRATION, FILES)

# A section's text in one output: (section, heading level, its children's
# text, already written) -> its lines, or [] where the run has none of it.
Body = Callable[[Section, int, list[str]], list[str]]


def walk(output: Output, body: Body, within: tuple[Section, ...] = OUTLINE,
         level: int = 2) -> list[str]:
    """The output's text: each of its sections in the outline's order,
    written by body; a parent the output leaves out gives way to its
    children, at its level."""
    lines: list[str] = []
    for section in within:
        if output not in section.outputs:
            lines += walk(output, body, section.children, level)
        else:
            lines += body(section, level, walk(output, body, section.children, level + 1))
    return lines


def headings(output: Output, workload_titles: list[str], within: tuple[Section, ...] = OUTLINE,
             level: int = 2) -> list[tuple[int, str]]:
    """(level, title) of every heading the output has when the run has every
    section, the workloads' titles in WORKLOADS' place: what a rendered
    output's headings are checked against."""
    found: list[tuple[int, str]] = []
    for section in within:
        shown = output in section.outputs
        if shown and section is WORKLOADS:
            found += [(level, title) for title in workload_titles]
        elif shown:
            found.append((level, section.title))
        found += headings(output, workload_titles, section.children, level + 1 if shown else level)
    return found
