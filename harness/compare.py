"""Compare two run directories group by group: ratios of medians, new / old.

A ratio is marked as a change only when it is larger than the noise of both
runs: |new/old − 1| must exceed the relative spread (stdev / median) of the
old group and of the new one, and MIN_CHANGE. A group with a single ok
repeat has no measured spread, so its ratios are shown but never marked:
one run alone proves nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .analysis import Group, analyse, fmt_metric, group_sort_key
from .rundir import ConfigKey, RunDir

COMPARED = ("wall_s", "cpu_s", "first_iter_s", "warm_iter_s", "peak_rss_bytes")
HEADINGS = {"wall_s": "wall", "cpu_s": "CPU", "first_iter_s": "cold iter",
            "warm_iter_s": "warm iter", "peak_rss_bytes": "peak RSS"}
MIN_CHANGE = 0.02  # below 2% nothing is called a change, however quiet the runs


@dataclass(frozen=True)
class Change:
    metric: str
    old: float
    new: float
    ratio: float  # new / old: above 1 is slower or bigger (worse)
    # the relative change needed to stand out of both runs' noise; None when a
    # side has a single ok repeat and so no measured noise
    threshold: float | None

    @property
    def significant(self) -> bool:
        return self.threshold is not None and abs(self.ratio - 1) > self.threshold

    @property
    def verdict(self) -> str:
        if not self.significant:
            return ""
        return "worse" if self.ratio > 1 else "better"


@dataclass
class GroupComparison:
    key: ConfigKey
    old_statuses: str | None  # None: the group is not in that run
    new_statuses: str | None
    old_ok: bool = False
    new_ok: bool = False
    changes: dict[str, Change] = field(default_factory=dict)

    @property
    def status_change(self) -> str:
        """'regressed' when ok runs turned into failures, 'fixed' the other way."""
        if self.old_statuses is None or self.new_statuses is None:
            return ""
        if self.old_ok and not self.new_ok:
            return "regressed"
        if self.new_ok and not self.old_ok:
            return "fixed"
        return ""


def _change(metric: str, old: Group, new: Group) -> Change | None:
    a, b = old.metrics.get(metric), new.metrics.get(metric)
    if a is None or b is None or a.median <= 0:
        return None
    threshold = None if a.cv is None or b.cv is None else max(a.cv, b.cv, MIN_CHANGE)
    return Change(metric, a.median, b.median, b.median / a.median, threshold)


def _shown(g: Group | None) -> bool:
    """Groups of a language that never ran on either side are left out."""
    return g is not None and any(r["status"] != "skipped" for r in g.rows)


def compare_groups(old: list[Group], new: list[Group]) -> list[GroupComparison]:
    old_by = {g.key: g for g in old if _shown(g)}
    new_by = {g.key: g for g in new if _shown(g)}
    out = []
    for key in sorted(old_by.keys() | new_by.keys(), key=group_sort_key):
        a, b = old_by.get(key), new_by.get(key)
        cmp_ = GroupComparison(key, old_statuses=a.statuses if a else None,
                               new_statuses=b.statuses if b else None,
                               old_ok=bool(a and a.ok), new_ok=bool(b and b.ok))
        if a and b:
            for metric in COMPARED:
                if (c := _change(metric, a, b)) is not None:
                    cmp_.changes[metric] = c
        out.append(cmp_)
    return out


def compare_runs(old_dir: Path, new_dir: Path) -> tuple[list[GroupComparison], dict[str, Any], dict[str, Any]]:
    """The structured comparison, with both runs' env.json."""
    old, new = analyse(RunDir(Path(old_dir))), analyse(RunDir(Path(new_dir)))
    return compare_groups(old.groups, new.groups), old.env, new.env


def _cell(c: Change | None) -> str:
    if c is None:
        return "—"
    mark = {"worse": " ▲", "better": " ▼"}.get(c.verdict, "")
    return f"{c.ratio:.2f}×{mark}" if c.ratio >= 0.1 else f"{c.ratio:.2g}×{mark}"


def _describe(env: dict[str, Any], run_dir: Path) -> str:
    host = (env.get("host") or {}).get("hostname", "?")
    commit = ((env.get("git") or {}).get("commit") or "?")[:12]
    return f"{env.get('run_id') or run_dir.name} (host {host}, commit {commit})"


def render(comparisons: list[GroupComparison], old_env: dict[str, Any], new_env: dict[str, Any],
           old_dir: Path, new_dir: Path) -> str:
    lines = [f"old: {_describe(old_env, old_dir)}", f"new: {_describe(new_env, new_dir)}"]
    old_host = (old_env.get("host") or {}).get("hostname")
    new_host = (new_env.get("host") or {}).get("hostname")
    if old_host and new_host and old_host != new_host:
        lines.append(f"note: different hosts ({old_host} vs {new_host}): "
                     "the ratios compare machines as much as code")
    lines.append("")

    header = ["workload", "N", "buffer", "impl", "runs old → new"] + [HEADINGS[m] for m in COMPARED]
    rows = []
    for c in comparisons:
        if c.old_statuses is None or c.new_statuses is None:
            continue  # summarised below the table
        runs = f"{c.old_statuses} → {c.new_statuses}"
        if c.status_change:
            runs += f" ({c.status_change.upper()})"
        k = c.key
        rows.append([k.workload, "—" if k.n is None else str(k.n),
                     "—" if k.buffer is None else str(k.buffer), k.impl, runs]
                    + [_cell(c.changes.get(m)) for m in COMPARED])
    widths = [max(len(r[i]) for r in [header] + rows) for i in range(len(header))]
    numeric = set(range(5, len(header))) | {1, 2}

    def fmt(row: list[str]) -> str:
        return "  ".join(v.rjust(w) if i in numeric else v.ljust(w)
                         for i, (v, w) in enumerate(zip(row, widths))).rstrip()

    if rows:
        lines += [fmt(header), "  ".join("-" * w for w in widths)] + [fmt(r) for r in rows]
    else:
        lines.append("The two runs have no configuration in common.")
    for side, missing in (("old", lambda c: c.new_statuses is None),
                          ("new", lambda c: c.old_statuses is None)):
        only = [c for c in comparisons if missing(c)]
        if only:
            impls = ", ".join(sorted({c.key.impl for c in only}))
            lines.append(f"only in the {side} run: {len(only)} configurations ({impls})")

    changes = [(c, ch) for c in comparisons for ch in c.changes.values() if ch.significant]
    unjudged = sum(1 for c in comparisons for ch in c.changes.values() if ch.threshold is None)
    worse = [(c, ch) for c, ch in changes if ch.verdict == "worse"]
    better = [(c, ch) for c, ch in changes if ch.verdict == "better"]
    regressed = [c for c in comparisons if c.status_change == "regressed"]
    lines += ["", "ratio = new median / old median (ok repeats only); ▲ worse, ▼ better, marked "
              "only when the change exceeds both runs' noise (stdev/median) and "
              f"{MIN_CHANGE:.0%}.",
              f"{len(worse)} worse, {len(better)} better; {len(regressed)} of the groups "
              "stopped producing ok runs."]
    if unjudged:
        lines.append(f"{unjudged} ratio{'s are' if unjudged > 1 else ' is'} not judged: one of the "
                     "runs has a single ok repeat (or a zero median), so its noise is unknown; "
                     "use --repeat 3 or more.")
    for c, ch in sorted(worse, key=lambda p: -p[1].ratio):
        lines.append(f"  worse: {c.key.label} {HEADINGS[ch.metric]} {fmt_metric(ch.metric, ch.old)} → "
                     f"{fmt_metric(ch.metric, ch.new)} ({ch.ratio:.2f}×, beyond noise of {ch.threshold:.0%})")
    for c in regressed:
        lines.append(f"  regressed: {c.key.label}: {c.old_statuses} → {c.new_statuses}")
    return "\n".join(lines)


def compare(old_dir: Path, new_dir: Path) -> str:
    """The ratio table of NEW against OLD, as text for the terminal."""
    comparisons, old_env, new_env = compare_runs(old_dir, new_dir)
    return render(comparisons, old_env, new_env, Path(old_dir), Path(new_dir))
