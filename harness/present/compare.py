"""Compare two run directories, configuration by configuration, figure by
figure, and print what analyse/gate.py decides of them: how much NEW
differs from OLD, with a confidence interval, whether that is a change at
all and, as a CI gate (`--fail-above 5%`), what the gate makes of each
headline figure and of the whole. docs/statistics.md ("Comparing two runs")
explains what is printed and why. This module reads the run directories
(and a calibration run's noise) and renders the verdict as text (terminal),
markdown (a pull request) or json.
"""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from .. import UsageError
from ..analyse.analysis import analyse, headline
from ..analyse.gate import (COMPARED, GATE_RUNS, IMPROVED, NOT_GATEABLE, NOTHING_IN_COMMON,
                            REGRESSED, UNDECIDED, VERDICTS, Change, Figure, GroupComparison,
                            Verdict, baseline_verdict, compare_groups, run_looks)
from ..analyse.noise import AA, Noise
from ..core.formatting import (GITHUB_LIMIT, fit_rows, fmt_change, fmt_metric, fmt_percent,
                               fmt_share, fmt_sig)
from ..core.metrics import METRICS
from ..core.schema import ConfigKey, Env
from ..core.stats import LEVEL, runs_needed
from ..record.rundir import RunDir
from .report import md_text

FORMATS = ("text", "markdown", "github", "json")

MANY_RUNS = 1000  # beyond this, "how many runs" is not worth a number


def compare_runs(old_dir: Path, new_dir: Path, margin: dict[str, float] | None = None
                 ) -> tuple[list[GroupComparison], Env, Env]:
    """The structured comparison, with both runs' env.json. One directory
    on both sides is refused: a gate comparing a run with itself would pass
    whatever the code did."""
    if Path(old_dir).resolve() == Path(new_dir).resolve():
        raise UsageError(f"OLD and NEW are the same run directory ({new_dir}): comparing a run "
                         "with itself says nothing (for one run's implementations against one "
                         "of them, use --baseline IMPL)")
    old, new = analyse(RunDir(Path(old_dir))), analyse(RunDir(Path(new_dir)))
    return compare_groups(old.groups, new.groups, margin), old.env, new.env


def _describe(env: Env, run_dir: Path) -> str:
    host = env.host.get("hostname", "?")
    commit = (env.git.get("commit") or "?")[:12]
    return f"{env.run_id or run_dir.name} (host {host}, commit {commit})"


def _sides(v: Verdict) -> tuple[str, str]:
    """What OLD and NEW are, for the heading lines."""
    if v.baseline:
        run = _describe(v.new_env, v.new_dir)
        return f"{v.baseline}, the baseline, in {run}", "every other implementation of that run"
    return _describe(v.old_env, v.old_dir), _describe(v.new_env, v.new_dir)


HEADER = ["workload", "configuration", "impl", "runs old → new", "figure", "old", "new",
          "change", "interval", "verdict"]
NUMERIC = {5, 6, 7}  # right-aligned in the text table


def _figure_name(c: GroupComparison, ch: Change) -> str:
    star = " *" if ch.metric in headline(c.key.workload) else ""
    return METRICS[ch.metric].heading + star


def _rows(v: Verdict) -> list[list[str]]:
    """One row per figure; the configuration is named on its first row."""
    rows = []
    for c in v.common:
        runs = f"{c.old_statuses} → {c.new_statuses}"
        if c.status_change:
            runs += " (NO OK RUN NOW)" if c.status_change == "regressed" else " (FIXED)"
        config = [c.key.workload, c.key.settings or "—", c.key.impl, runs]
        figures = c.figures()
        if not figures:
            rows.append(config + ["—"] + [""] * 5)
        for i, ch in enumerate(figures):
            rows.append((config if i == 0 else [""] * 4)
                        + [_figure_name(c, ch), fmt_metric(ch.metric, ch.old),
                           fmt_metric(ch.metric, ch.new), fmt_change(ch.change), ch.interval_text,
                           ch.verdict_text])
    return rows


def _legend(v: Verdict) -> str:
    higher = " and ".join(METRICS[m].label for m in COMPARED if METRICS[m].higher_is_better)
    blocked = any(ch.blocks for _, ch in v.figures())
    return ("change = new/old − 1: the median of the pairwise ratios of the ok runs "
            "(Hodges–Lehmann" + ("; only runs of one node are paired: the nodes are blocks"
                                 if blocked else "")
            + f"), with its exact {fmt_share(LEVEL)} interval (Mann–Whitney); a verdict "
            f"needs {runs_needed()[1]} ok runs a side; level: the interval inside the figure's "
            f"margin. * a headline figure, the gate's (exact one-sided tests at 95%, from "
            f"{GATE_RUNS} ok runs a side); wall and CPU are shown, never gated"
            + (f"; for {higher} higher is better" if higher else "") + ".")


def _figure_line(c: GroupComparison, ch: Change) -> str:
    return (f"{c.key.label} {METRICS[ch.metric].heading} {fmt_metric(ch.metric, ch.old)} → "
            f"{fmt_metric(ch.metric, ch.new)}, {fmt_change(ch.change)} {ch.interval_text}")


def _undecided(v: Verdict) -> list[str]:
    """The gate's undecided headline figures: how many, why, and the runs
    that would decide them."""
    undecided = v.gated(UNDECIDED)
    if not undecided or v.fail_above is None:
        return []
    limit = fmt_percent(v.fail_above)
    few = [p for p in undecided if min(p[1].runs) < GATE_RUNS]
    wide = [p for p in undecided if min(p[1].runs) >= GATE_RUNS]
    n = len(undecided)
    lines = [f"undecided: {n} headline figure{'s' if n != 1 else ''} could not be decided "
             f"against {limit}:"]
    if few:
        least = min(few, key=lambda p: min(p[1].runs))[1]
        lines.append(f"  {len(few)} with fewer than {GATE_RUNS} ok runs on a side (the least: "
                     f"{least.runs[0]} old, {least.runs[1]} new): the gate needs {GATE_RUNS} "
                     f"a side (run with --repeat {GATE_RUNS} or more):")
        lines += [f"    {_figure_line(c, ch)}" for c, ch in _listed_pairs(few)]
        if len(few) > LISTED:
            lines.append(f"    ... and {len(few) - LISTED} more")
    if wide:
        lines.append(f"  {len(wide)} whose evidence reaches both sides of {limit}; the runs a "
                     "side that would likely decide each, were its spread and estimate to stay:")
        for c, ch in _listed_pairs(wide):
            need = ch.runs_to_decide(v.fail_above, v.family, v.rate)
            p = ch.p_worse(v.fail_above)
            alone = (f" (worse by more than {limit} on its own, p = {fmt_sig(p, 2)}; not over the "
                     f"family of {v.family})" if p is not None and p <= 1 - LEVEL + 1e-12
                     else "")
            lines.append(f"    {_figure_line(c, ch)}{alone}: "
                         + (f"about {need}" if need is not None and need <= MANY_RUNS else
                            f"over {MANY_RUNS}" if need is not None else
                            f"no number of runs (the estimate is {limit})"))
        if len(wide) > LISTED:
            lines.append(f"    ... and {len(wide) - LISTED} more")
    return lines


LISTED = 10


def _not_gateable(v: Verdict) -> list[str]:
    """The figures the calibration's noise cannot gate, with their floors."""
    named = v.gated(NOT_GATEABLE)
    if not named or v.fail_above is None or v.noise is None:
        return []
    limit = fmt_percent(v.fail_above)
    n = len(named)
    worst = sorted(named, key=lambda p: -(v.floor_of(*p) or 0))
    lines = [f"not gateable at {limit} here: {n} headline figure{'s' if n != 1 else ''} whose "
             f"no-change comparisons at these runs reach past {limit} in more than one in ten "
             f"(calibration run {v.noise.source}); each with its floor, the change that nine "
             "in ten stay within:"]
    lines += [f"  {c.key.label} {METRICS[ch.metric].heading}: "
              + (f"floor {fmt_change(fl)} at "
                 f"{v.noise.side(v.noise_key(c.key, ch.metric), ch.metric, min(ch.runs))} "
                 "runs a side" if math.isfinite(fl := v.floor_of(c, ch) or math.inf)
                 else "no floor (too few calibration runs)") for c, ch in worst[:LISTED]]
    if n > LISTED:
        lines.append(f"  ... and {n - LISTED} more")
    return lines


def _listed_pairs(pairs: list[Figure]) -> list[Figure]:
    return sorted(pairs, key=lambda p: -p[1].worse_by)[:LISTED]


def _summary(v: Verdict) -> list[str]:
    lines = [_legend(v)]
    counts = {verdict: len(v.figures(verdict)) for verdict in VERDICTS}
    lines.append(f"{len(v.figures())} figures of {len(v.common)} configurations: "
                 + ", ".join(f"{n} {verdict}" for verdict, n in counts.items()) + ".")
    for verdict in (REGRESSED, IMPROVED):
        lines += [f"  {verdict}: {_figure_line(c, ch)}" for c, ch in v.figures(verdict)]
    if v.lost:
        lines.append(f"{len(v.lost)} configuration{'s' if len(v.lost) > 1 else ''} of the old "
                     f"run {'have' if len(v.lost) > 1 else 'has'} no ok run in the new one:")
        lines += [f"  {c.key.label}: {c.old_statuses} → {c.new_statuses or 'absent'}"
                  for c in v.lost]
    lines += _only_lines(v)
    if v.fail_above is not None:
        limit = fmt_percent(v.fail_above)
        if v.failures:
            n = len(v.failures)
            lines.append(f"FAIL (--fail-above {limit}): {n} reason{'s' if n > 1 else ''}:")
            lines += [f"  {f}" for f in v.failures]
        elif v.undecided:
            n, k, f = len(v.gated(UNDECIDED)), len(v.unjudged), len(v.failing_more)
            verdict = ("PASS, with undecided figures allowed (--allow-undecided)"
                       if v.allow_undecided else "UNDECIDED (exit 3)")
            why = ([f"{n} could not be shown to be within it (below)"] if n else []) + (
                [f"{k} configuration{'s have' if k != 1 else ' has'} no ok run of the "
                 f"baseline, {v.baseline}, to judge against"] if k else []) + (
                [f"{f} configuration{'s' if f != 1 else ''} failed in both runs, more often "
                 "in the new one"] if f else [])
            lines.append(f"{verdict} (--fail-above {limit}): no headline figure is shown worse "
                         f"by more than {limit}, but {' and '.join(why)}"
                         + (":" if k or f else "."))
            lines += [f"  {c.key.label}: the {'baseline' if v.baseline else 'old run'} "
                      f"{c.old_statuses}, {'this one' if v.baseline else 'the new'} "
                      f"{c.new_statuses}" for c in v.unjudged + v.failing_more]
        else:
            gated = "every gated headline figure" if v.gated(NOT_GATEABLE) else \
                "every headline figure"
            lines.append(f"PASS (--fail-above {limit}): {gated} is within {limit} "
                         "at 95% (one-sided), and every configuration of the old run has ok runs "
                         "in the new one.")
        lines += [_rule(v)] if v.family else []
        lines += _not_gateable(v)
        lines += _undecided(v)
    return lines


def _rule(v: Verdict) -> str:
    """The gate's family-wise rule, and the runs below which it cannot fail."""
    m, need = v.family, v.runs_to_fail
    short = [ch for _, ch in v.gated(UNDECIDED) if min(ch.runs) < need]
    looks = (f" at {fmt_share(1 - LEVEL)}/{v.looks} a look (run --gate looked after every pass, at "
             f"most {v.looks} times)" if v.looks > 1 else "")
    return (f"The gate's rule: Holm over the {m} gated figure{'s' if m != 1 else ''}{looks} "
            f"(exact one-sided p-values; when none is worse by more than "
            f"{fmt_percent(v.fail_above)}, it fails on one at most {fmt_share(1 - LEVEL)} of the "
            f"time, whatever their number): the smallest p must reach {fmt_sig(v.rate / m, 2)}"
            + (f"; {len(short)} undecided figure{'s have' if len(short) != 1 else ' has'} fewer "
               f"than the {need} ok runs a side that can reach it" if short else "") + ".")


def _nothing(v: Verdict) -> str:
    """The one line of a comparison with nothing to compare."""
    return "compare: " + NOTHING_IN_COMMON + (", the gate fails" if v.fail_above is not None
                                              else "")


def _only_lines(v: Verdict) -> list[str]:
    out = []
    for side in ("old", "new"):
        only = v.only(side)
        if only:
            names = ", ".join(c.key.label for c in only[:20])
            more = f" and {len(only) - 20} more" if len(only) > 20 else ""
            out.append(f"only in the {side} run: {len(only)} configurations: {names}{more}")
    return out


def render(v: Verdict) -> str:
    """Text for the terminal: an aligned table, a figure a row."""
    old, new = _sides(v)
    lines = [f"old: {old}", f"new: {new}"]
    lines += [f"note: {n}" for n in v.notes] + [""]
    if not v.common:
        return "\n".join(lines + [_nothing(v)] + _only_lines(v))
    rows = _rows(v)
    widths = [max(len(r[i]) for r in [HEADER] + rows) for i in range(len(HEADER))]

    def fmt(row: list[str]) -> str:
        return "  ".join(val.rjust(w) if i in NUMERIC else val.ljust(w)
                         for i, (val, w) in enumerate(zip(row, widths))).rstrip()

    lines += [fmt(HEADER), "  ".join("-" * w for w in widths)] + [fmt(r) for r in rows]
    return "\n".join(lines + [""] + _summary(v))


def render_markdown(v: Verdict, limit: int | None = None) -> str:
    """For a pull request: a heading, the notes, a table, the summary, every
    text from the data escaped (report.md_text). With `limit` (bytes, the
    github format's): the summary before the table, and the table's last
    rows left out, and counted, where the whole would not fit."""
    old, new = _sides(v)
    against = v.baseline or v.old_env.run_id or v.old_dir.name
    lines = [f"### Benchmark comparison: {md_text(v.new_env.run_id or v.new_dir.name)} "
             f"against {md_text(against)}", "", f"- old: {md_text(old)}", f"- new: {md_text(new)}"]
    lines += [f"- **note**: {md_text(n)}" for n in v.notes] + [""]
    if not v.common:
        return "\n".join(lines + [f"**{md_text(_nothing(v))}**"]
                         + [md_text(x) for x in _only_lines(v)]) + "\n"
    table = ["| " + " | ".join(HEADER) + " |", "|" + "|".join("---" for _ in HEADER) + "|"]
    # the configuration's cells come from the data; the figures are ours
    table += ["| " + " | ".join(md_text(cell) if i < 4 else cell.replace("|", "\\|")
                                for i, cell in enumerate(r)) + " |" for r in _rows(v)]
    summary = []
    for line in _summary(v):  # a paragraph each, its indented lines as a (nested) list
        indent = len(line) - len(line.lstrip())
        text = md_text(line.strip())
        summary += ["", text] if not indent else ["  " * (indent // 2 - 1) + "- " + text]
    if limit is None:
        return "\n".join(lines + table + summary) + "\n"
    head = "\n".join(lines + summary[1:] + ["", "<details><summary>every figure</summary>", ""])
    tail = "\n</details>\n"
    kept, left = fit_rows([head, *table[:2]], table[2:], [tail], limit)
    note = ["", f"... {left} more rows: `compare --format markdown` has them all."] if left else []
    return "\n".join([head, *table[:2], *kept, *note, tail])


def _change_json(v: Verdict, c: GroupComparison, ch: Change) -> dict[str, Any]:
    fail_above = v.fail_above
    iv = ch.interval
    gated = ch.metric in headline(c.key.workload)
    return {"old": ch.old, "new": ch.new, "estimate": ch.ratio, "change": ch.change,
            "low": iv.low if iv else None, "high": iv.high if iv else None,
            "confidence": iv.confidence if iv else None,
            "runs": {"old": ch.runs[0], "new": ch.runs[1]}, "verdict": ch.verdict,
            "headline": gated,
            "margin": ch.margin,
            "gate": v.gate_of(c, ch) if gated and fail_above is not None else None,
            "floor": fl if gated and fail_above is not None and (fl := v.floor_of(c, ch))
            is not None and math.isfinite(fl) else None,
            "p_worse": ch.p_worse(fail_above) if gated and fail_above is not None else None,
            "p_within": ch.p_within(fail_above) if gated and fail_above is not None else None}


@dataclass(frozen=True)
class Side:
    """A side of the comparison as the json output names it: its directory
    and its run's id (env.json's)."""
    dir: str
    run_id: str | None


# A configuration's identity in the json output: ConfigKey's fields, its
# dimensions (params) spread beside them.
KEY_FIELDS = tuple(f.name for f in fields(ConfigKey) if f.name != "params")


def to_json(v: Verdict) -> dict[str, Any]:
    undecided = v.gated(UNDECIDED)
    return {
        "old": {**dataclasses.asdict(Side(str(v.old_dir), v.old_env.run_id)),
                "baseline": v.baseline},
        "new": dataclasses.asdict(Side(str(v.new_dir), v.new_env.run_id)),
        "notes": v.notes,
        "level": LEVEL,
        "configurations": [{
            **{name: getattr(c.key, name) for name in KEY_FIELDS},
            **dict(c.key.params), "old_statuses": c.old_statuses, "new_statuses": c.new_statuses,
            "old_ok": c.old_ok, "new_ok": c.new_ok, "old_failed": c.old_failed,
            "new_failed": c.new_failed, "status_change": c.status_change or None,
            "changes": {ch.metric: _change_json(v, c, ch) for ch in c.figures()}}
            for c in v.comparisons],
        "counts": {verdict: len(v.figures(verdict)) for verdict in VERDICTS},
        "fail_above": v.fail_above, "failures": v.failures,
        "family": v.family if v.fail_above is not None else None,
        "runs_to_fail": v.runs_to_fail if v.fail_above is not None else None,
        "looks": v.looks,
        "failing_more": len(v.failing_more),
        "undecided": len(undecided),
        "not_gateable": len(v.gated(NOT_GATEABLE)),
        "calibration": v.noise.source if v.noise is not None else None,
        "runs_to_decide": max((r for _, ch in undecided
                               if (r := ch.runs_to_decide(v.fail_above, v.family, v.rate))
                               is not None),
                              default=None) if v.fail_above is not None else None,
        "passed": v.passed,
        "decided": not v.undecided,
        "exit_status": v.exit_status,
    }


def calibration_noise(run_dir: Path) -> Noise:
    """The A/A noise of a calibrate run (noise.Noise); one without an A/A
    pair is refused."""
    analysed = analyse(RunDir(Path(run_dir)))
    noise = Noise.of(analysed.groups, analysed.env.run_id or Path(run_dir).name,
                     analysed.env.host.get("hostname"))
    if not noise.runs:
        raise UsageError(f"{run_dir}: no configuration ran under two names X and X{AA}: not a "
                         "run of the calibrate suite (python -m harness run --suite calibrate)")
    return noise


def compare_dirs(old_dir: Path, new_dir: Path, fail_above: float | None = None,
                 margin: dict[str, float] | None = None, allow_undecided: bool = False,
                 calibration: Path | None = None) -> Verdict:
    """NEW against OLD; with a calibration run, the figures its A/A noise
    cannot gate at fail_above are named, not gated."""
    comparisons, old_env, new_env = compare_runs(old_dir, new_dir, margin)
    noise = calibration_noise(calibration) if calibration is not None else None
    return Verdict(comparisons, old_env, new_env, Path(old_dir), Path(new_dir), fail_above,
                   allow_undecided=allow_undecided, noise=noise)


def compare_baseline(run_dir: Path, baseline: str, fail_above: float | None = None,
                     margin: dict[str, float] | None = None,
                     allow_undecided: bool = False, calibration: Path | None = None) -> Verdict:
    """One run's implementations against one of them (--baseline); with a
    calibration run, as compare_dirs. A run --gate run is decided as its
    gate decided it: the 5% spent over its looks (gate.run_looks)."""
    analysed = analyse(RunDir(Path(run_dir)))
    noise = calibration_noise(calibration) if calibration is not None else None
    return baseline_verdict(analysed.groups, baseline, fail_above, analysed.env, Path(run_dir),
                            margin, allow_undecided, noise, run_looks(analysed.env))


def output(v: Verdict, fmt: str) -> str:
    if fmt == "json":
        return json.dumps(to_json(v), indent=2)
    if fmt == "github":
        return render_markdown(v, GITHUB_LIMIT)
    return render_markdown(v) if fmt == "markdown" else render(v)


def compare(old_dir: Path, new_dir: Path, fail_above: float | None = None) -> str:
    """NEW against OLD, as text for the terminal."""
    return render(compare_dirs(old_dir, new_dir, fail_above))
