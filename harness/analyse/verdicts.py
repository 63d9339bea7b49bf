"""The answer on the first screen: per workload and headline figure, at
the largest configuration two or more implementations measured, the leader,
the runner-up with its ratio to the leader and that ratio's interval, and
the verdict word: leads, level (within the figure's margin) or not settled
(and why), as the run's standings decided it (standings.py: every verdict
of the run in one family; leader and runner-up ranked as there, by ratios
within nodes where the runs carry several). Every other implementation's
standing is in its workload's table and ranked plot, not in sentences; the
prose left is what a reader must act on: the failures.

report.md and report.html render the same rows. Pure: it reads analysis's
groups and the standings and writes nothing.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from .analysis import (SETUP_STATUSES, Group, by_design, comparable_sets, headline,
                       not_run_by_rule)
from ..core.formatting import fmt_count
from ..core.presentation import PRESENTATIONS
from ..core.schema import Status
from .standings import BEHIND, LEVEL_WORD, NOT_SETTLED, Standing, ranked
from ..core.workloads import workload_rank

LEADS, ALONE = "leads", "alone"


@dataclass(frozen=True)
class Headline:
    """One row of the first screen: a workload's headline figure at its
    largest contested configuration."""
    workload: str
    metric: str
    leader: Group
    runner: Group | None  # None: no rival measured the figure there
    standing: Standing | None  # the runner-up's against the leader

    @property
    def word(self) -> str:
        """leads / level / not settled / alone."""
        if self.standing is None:
            return ALONE if self.runner is None else NOT_SETTLED
        return {BEHIND: LEADS, LEVEL_WORD: LEVEL_WORD}.get(self.standing.verdict, NOT_SETTLED)

    @property
    def why(self) -> str:
        """Why a row is not settled ("" otherwise)."""
        if self.word != NOT_SETTLED:
            return ""
        return self.standing.why if self.standing is not None else "no test could be made"

    @property
    def where(self) -> str:
        return where(self.leader)


def where(g: Group) -> str:
    """The configuration in a sentence: 'N = 1M, B = 100, users = 10'."""
    parts = [] if g.n is None else [f"N = {fmt_count(g.n)}"]
    if g.buffer is not None:
        parts.append(f"B = {fmt_count(g.buffer)}")
    parts += [f"{name} = {fmt_count(v) if isinstance(v, (int, float)) else v}"
              for name, v in g.params if v is not None]
    return ", ".join(parts)


def _largest(members: list[Group], metric: str, prefer_buffer: int | None) -> list[Group]:
    """The comparable set at the largest configuration (N, then the other
    dimensions) where at least two implementations have the figure, else
    where one has; at the largest N, the presentation's buffer where the
    run has it there."""
    sets = [[g for g in m if g.values(metric)] for m in comparable_sets(members).values()]
    sets = [m for m in sets if m]
    contested = [m for m in sets if len(m) >= 2] or sets
    top = max((m[0].n for m in contested if m[0].n is not None), default=None)
    contested = [m for m in contested if m[0].n == top] or contested  # the largest N first
    if prefer_buffer is not None and any(m[0].buffer == prefer_buffer for m in contested):
        contested = [m for m in contested if m[0].buffer == prefer_buffer]
    return max(contested, key=lambda m: m[0].key.sort_key, default=[])


def headlines(groups: list[Group], found: list[Standing]) -> list[Headline]:
    """Every workload's headline figures, in declaration order."""
    judged = {(s.leader.key, s.other.key, s.metric): s for s in found}
    by_workload: dict[str, list[Group]] = defaultdict(list)
    for g in groups:
        by_workload[g.workload].append(g)
    out = []
    for workload in sorted(by_workload, key=workload_rank):
        presented = PRESENTATIONS.get(workload)
        prefer = presented.panel.buffer if presented and presented.panel else None
        for metric in headline(workload):
            members = _largest(by_workload[workload], metric, prefer)
            if not members:
                continue
            order = ranked(members, metric)  # the leader the standings judged against
            leader, runner = order[0], (order[1] if len(order) > 1 else None)
            standing = judged.get((leader.key, runner.key, metric)) if runner else None
            out.append(Headline(workload, metric, leader, runner, standing))
    return out


# -- failures ------------------------------------------------------------

REASONS = (  # what an error's text means, in a few words, first match wins
    (("threads cannot be alive", "pid_max", "Resource temporarily unavailable",
      "spawning thread", "unable to create native thread"), "thread limit"),
    (("Out of memory", "out of memory", "--max-rss", "OutOfMemory", "Cannot allocate"),
     "out of memory"),
    (("no exit within",), "timeout"),
)
KNOWN_REASONS = {words for _, words in REASONS}
REDUNDANT = {Status.TIMEOUT: "timeout", Status.OOM: "out of memory"}  # said by the status's words
STATUS_WORDS = {Status.CRASHED: "crashed", Status.OOM: "ran out of memory",
                Status.TIMEOUT: "timed out", Status.INVALID: "gave a wrong answer",
                Status.BUILD_FAILED: "did not build", Status.SKIPPED: "did not run"}


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
        # not run by a rule (a ladder past its end, a size outgrown or too dear): in the notes
        failed = [r for r in g.rows if r.status != Status.OK and not not_run_by_rule(r)]
        if not failed:
            continue
        if all(r.status in SETUP_STATUSES for r in failed) and not g.ok:
            r = failed[0]
            setup.setdefault(g.impl, f"{STATUS_WORDS.get(r.status, r.status)} "
                                     f"({reason(r.error)})")
            continue
        counts: dict[Status, int] = defaultdict(int)
        for r in failed:
            counts[r.status] += 1
        status = max(counts, key=lambda s: (counts[s], s))
        words = STATUS_WORDS.get(status, status)
        whys = sorted({reason(r.error) for r in failed if r.status == status})
        known = [w for w in whys if w in KNOWN_REASONS]
        whys = [w for w in (known or whys) if w != REDUNDANT.get(status)]
        share = "" if not g.ok and len(counts) == 1 else f"{counts[status]} of {len(g.rows)} runs "
        why = f" ({'; '.join(whys)})" if whys else ""
        at = where(g)
        places = out[g.impl].setdefault((share + words, why), [])
        if at:
            places.append(at)
    lines = [f"{impl}: {what}" for impl, what in sorted(setup.items())]
    for impl, parts in sorted(out.items()):
        lines.append(f"{impl}: " + ", ".join(
            f"{what}{' at ' + ' and '.join(places) if places else ''}{why}"
            for (what, why), places in parts.items()))
    return lines
