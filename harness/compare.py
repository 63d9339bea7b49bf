"""Compare two run directories group by group: ratios of medians, new / old.

A ratio is marked as a change only when it is larger than the noise of both
runs: |new/old − 1| must exceed the relative spread (stdev / median) of the
old group and of the new one, and MIN_CHANGE. A group with a single ok
repeat has no measured spread, so its ratios are shown but never marked:
one run alone proves nothing.

As a CI gate (`--fail-above 5%`), a comparison fails when one of the figures
a workload is read for (its presentation's `headline`: the iteration times and
peak RSS; throughput, median response and peak RSS for http) got worse by
more than the threshold *and* beyond both runs' noise (pyperf's and
hyperfine's practice), or when a configuration stopped producing ok runs.
Process wall and CPU time, which include the runtime's start-up, are shown
and marked but do not fail the gate.
Output as text (terminal), markdown (a pull request) or json.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .analysis import Group, analyse, group_sort_key, headline
from .metrics import METRICS, fmt_metric
from .rundir import ConfigKey, RunDir

COMPARED = tuple(m.name for m in METRICS.values() if m.compared)
FORMATS = ("text", "markdown", "json")
MIN_CHANGE = 0.02  # below 2% nothing is called a change, however quiet the runs


@dataclass(frozen=True)
class Change:
    metric: str
    old: float
    new: float
    ratio: float  # new / old: above 1 is slower or bigger, worse (throughput: better)
    # the relative change needed to stand out of both runs' noise; None when a
    # side has a single ok repeat and so no measured noise
    threshold: float | None

    @property
    def significant(self) -> bool:
        return self.threshold is not None and abs(self.ratio - 1) > self.threshold

    @property
    def worse_by(self) -> float:
        """How much worse, as a fraction (negative: better)."""
        if METRICS[self.metric].higher_is_better:
            return 1 / self.ratio - 1 if self.ratio > 0 else float("inf")
        return self.ratio - 1

    @property
    def verdict(self) -> str:
        if not self.significant:
            return ""
        return "worse" if self.worse_by > 0 else "better"


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


@dataclass
class Verdict:
    """What a comparison found, for every output format and the exit status."""
    comparisons: list[GroupComparison]
    old_env: dict[str, Any]
    new_env: dict[str, Any]
    old_dir: Path
    new_dir: Path
    fail_above: float | None = None  # the gate's threshold, a fraction

    @property
    def common(self) -> list[GroupComparison]:
        return [c for c in self.comparisons if c.old_statuses is not None
                and c.new_statuses is not None]

    def only(self, side: str) -> list[GroupComparison]:
        missing = "new_statuses" if side == "old" else "old_statuses"
        return [c for c in self.comparisons if getattr(c, missing) is None]

    def changes(self, verdict: str) -> list[tuple[GroupComparison, Change]]:
        found = [(c, ch) for c in self.comparisons for ch in c.changes.values()
                 if ch.verdict == verdict]
        return sorted(found, key=lambda p: -abs(p[1].worse_by))

    @property
    def regressed(self) -> list[GroupComparison]:
        return [c for c in self.comparisons if c.status_change == "regressed"]

    @property
    def unjudged(self) -> int:
        return sum(1 for c in self.comparisons for ch in c.changes.values() if ch.threshold is None)

    @property
    def failures(self) -> list[str]:
        """Why the gate fails (empty: it passes, or there is no gate)."""
        if self.fail_above is None:
            return []
        out = [f"{c.key.label} {METRICS[ch.metric].heading} {ch.worse_by:+.1%} (beyond the "
               f"noise of {ch.threshold:.0%})" for c, ch in self.changes("worse")
               if ch.worse_by > self.fail_above and ch.metric in headline(c.key.workload)]
        out += [f"{c.key.label}: {c.old_statuses} → {c.new_statuses}" for c in self.regressed]
        return out

    @property
    def notes(self) -> list[str]:
        """Where the two runs differ in what they measured on."""
        out = []
        old_host = (self.old_env.get("host") or {})
        new_host = (self.new_env.get("host") or {})
        for field_, what in (("hostname", "hosts"), ("cpu_model", "CPUs"), ("cores", "core counts")):
            a, b = old_host.get(field_), new_host.get(field_)
            if a and b and a != b:
                out.append(f"different {what} ({a} vs {b}): the ratios compare machines as much "
                           "as code")
        for field_ in ("toolchains", "runtimes"):
            a, b = self.old_env.get(field_) or {}, self.new_env.get(field_) or {}
            changed = sorted(k for k in a.keys() & b.keys() if a[k] != b[k])
            if changed:
                out.append(f"different {field_[:-1]} versions: " + "; ".join(
                    f"{k} {a[k]} → {b[k]}" for k in changed))
        return out


def _cell(c: Change | None) -> str:
    if c is None:
        return "—"
    mark = {"worse": " ▲", "better": " ▼"}.get(c.verdict, "")
    return f"{c.ratio:.2f}×{mark}" if c.ratio >= 0.1 else f"{c.ratio:.2g}×{mark}"


def _describe(env: dict[str, Any], run_dir: Path) -> str:
    host = (env.get("host") or {}).get("hostname", "?")
    commit = ((env.get("git") or {}).get("commit") or "?")[:12]
    return f"{env.get('run_id') or run_dir.name} (host {host}, commit {commit})"


def _metrics(v: Verdict) -> list[str]:
    """The compared metrics that some configuration has."""
    have = {m for c in v.common for m in c.changes}
    return [m for m in COMPARED if m in have]


def _rows(v: Verdict, metrics: list[str]) -> tuple[list[str], list[list[str]]]:
    header = ["workload", "configuration", "impl", "runs old → new"]
    header += [METRICS[m].heading for m in metrics]
    rows = []
    for c in v.common:
        runs = f"{c.old_statuses} → {c.new_statuses}"
        if c.status_change:
            runs += f" ({c.status_change.upper()})"
        rows.append([c.key.workload, c.key.settings or "—", c.key.impl, runs]
                    + [_cell(c.changes.get(m)) for m in metrics])
    return header, rows


def _summary(v: Verdict) -> list[str]:
    worse, better = v.changes("worse"), v.changes("better")
    higher = " and ".join(METRICS[m].label for m in COMPARED if METRICS[m].higher_is_better)
    lines = ["ratio = new median / old median (ok repeats only); ▲ worse, ▼ better"
             + (f" (for {higher} a higher ratio is better)" if higher else "")
             + ", marked only when the change exceeds both "
             f"runs' noise (stdev/median) and {MIN_CHANGE:.0%}.",
             f"{len(worse)} worse, {len(better)} better; {len(v.regressed)} of the groups "
             "stopped producing ok runs."]
    if v.unjudged:
        lines.append(f"{v.unjudged} ratio{'s are' if v.unjudged > 1 else ' is'} not judged: one "
                     "of the runs has a single ok repeat (or a zero median), so its noise is "
                     "unknown; use --repeat 3 or more.")
    for c, ch in worse:
        lines.append(f"  worse: {c.key.label} {METRICS[ch.metric].heading} "
                     f"{fmt_metric(ch.metric, ch.old)} → {fmt_metric(ch.metric, ch.new)} "
                     f"({ch.ratio:.2f}×, beyond noise of {ch.threshold:.0%})")
    for c in v.regressed:
        lines.append(f"  regressed: {c.key.label}: {c.old_statuses} → {c.new_statuses}")
    for side in ("old", "new"):
        only = v.only(side)
        if only:
            names = ", ".join(c.key.label for c in only[:20])
            more = f" and {len(only) - 20} more" if len(only) > 20 else ""
            lines.append(f"only in the {side} run: {len(only)} configurations: {names}{more}")
    if v.fail_above is not None:
        if v.failures:
            lines.append(f"FAIL: {len(v.failures)} regression{'s' if len(v.failures) > 1 else ''} "
                         f"above {v.fail_above:.1%}: " + "; ".join(v.failures))
        else:
            lines.append(f"PASS: nothing got worse by more than {v.fail_above:.1%} beyond the noise")
    return lines


def render(v: Verdict) -> str:
    """Text for the terminal: an aligned table."""
    lines = [f"old: {_describe(v.old_env, v.old_dir)}", f"new: {_describe(v.new_env, v.new_dir)}"]
    lines += [f"note: {n}" for n in v.notes] + [""]
    header, rows = _rows(v, _metrics(v))
    widths = [max(len(r[i]) for r in [header] + rows) for i in range(len(header))]
    numeric = set(range(4, len(header)))

    def fmt(row: list[str]) -> str:
        return "  ".join(val.rjust(w) if i in numeric else val.ljust(w)
                         for i, (val, w) in enumerate(zip(row, widths))).rstrip()

    if rows:
        lines += [fmt(header), "  ".join("-" * w for w in widths)] + [fmt(r) for r in rows]
    else:
        lines.append("The two runs have no configuration in common.")
    return "\n".join(lines + [""] + _summary(v))


def render_markdown(v: Verdict) -> str:
    """For a pull request: a heading, the notes, a table, the summary."""
    lines = [f"### Benchmark comparison: {v.new_env.get('run_id') or v.new_dir.name} against "
             f"{v.old_env.get('run_id') or v.old_dir.name}", "",
             f"- old: {_describe(v.old_env, v.old_dir)}", f"- new: {_describe(v.new_env, v.new_dir)}"]
    lines += [f"- **note**: {n}" for n in v.notes] + [""]
    header, rows = _rows(v, _metrics(v))
    if rows:
        lines += ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
        lines += ["| " + " | ".join(r) + " |" for r in rows]
    else:
        lines.append("The two runs have no configuration in common.")
    return "\n".join(lines + [""] + [line.strip() for line in _summary(v)]) + "\n"


def to_json(v: Verdict) -> dict[str, Any]:
    def change(ch: Change) -> dict[str, Any]:
        return {"old": ch.old, "new": ch.new, "ratio": ch.ratio, "noise": ch.threshold,
                "verdict": ch.verdict or None}
    return {
        "old": {"dir": str(v.old_dir), "run_id": v.old_env.get("run_id")},
        "new": {"dir": str(v.new_dir), "run_id": v.new_env.get("run_id")},
        "notes": v.notes,
        "configurations": [{
            "impl": c.key.impl, "workload": c.key.workload, "n": c.key.n, "buffer": c.key.buffer,
            **dict(c.key.params), "old_statuses": c.old_statuses, "new_statuses": c.new_statuses,
            "status_change": c.status_change or None,
            "changes": {m: change(ch) for m, ch in c.changes.items()}}
            for c in v.comparisons],
        "fail_above": v.fail_above, "failures": v.failures,
        "passed": not v.failures,
    }


def compare_dirs(old_dir: Path, new_dir: Path, fail_above: float | None = None) -> Verdict:
    comparisons, old_env, new_env = compare_runs(old_dir, new_dir)
    return Verdict(comparisons, old_env, new_env, Path(old_dir), Path(new_dir), fail_above)


def output(v: Verdict, fmt: str) -> str:
    if fmt == "json":
        return json.dumps(to_json(v), indent=2)
    return render_markdown(v) if fmt == "markdown" else render(v)


def compare(old_dir: Path, new_dir: Path) -> str:
    """The ratio table of NEW against OLD, as text for the terminal."""
    return render(compare_dirs(old_dir, new_dir))
