"""`harness bisect IMPL --good V1 --bad V2`: the first release between two
releases where a measured figure changed. The releases come from the
registry ([impl.versions]); each step runs releases through the normal
`run` pipeline into the bisect's own run directory (made at the start in a
bisect folder of OUT, held until the end, each step resuming it; `bisect
--resume RUN` continues an interrupted one), so every measured row stays
readable by report and compare. A step's verdict is a confidence
interval, never a single run:

- good and bad are measured first; their ratio's 95% interval must exclude
  1, else there is nothing to bisect;
- a release is "like bad" when the interval of its ratio to good lies
  wholly beyond the geometric midpoint of good and bad, on bad's side;
  "like good" when wholly on good's side; otherwise it gets more runs (up
  to --max-repeat), and if its interval still holds the midpoint, the
  search goes on by its estimate and the result says which steps were
  not settled (exit status 1: a change spread over several releases, or
  noise).

This module is the command's wiring: the search is analyse/bisection.py,
its folder record/bisect_folder.py, its printout present/bisect_report.py.
"""

from __future__ import annotations

import dataclasses
import shlex
import sys
from pathlib import Path
from typing import Callable

from . import UsageError, relative
from .core import local_builds
from .analyse.analysis import Group, analyse, headline
from .analyse.bisection import Bisection, Found
from .processes.interrupts import Interrupted, interruptible
from .core.metrics import METRICS
from .plan.plan import plan
from .core.registry import Impl, resolve
from .core.schema import ConfigKey
from .present.bisect_report import report_lines
from .record import bisect_folder
from .record.rundir import RunDir, RunDirError
from .session import run_suite, write_report
from .plan.options import Options
from .plan.settings import MAX_REPEAT, Settings, settings_from
from .core.stats import runs_needed
from .core.variants import is_release, parse
from .releases.versions import between


class Stopped(Exception):
    """A step's run was interrupted: bisect ends with its exit status."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


def _tagged(source: Path, tag: str, release: str) -> bool:
    """Whether release is one whose tag names a commit of source."""
    return is_release(release) and local_builds.names_commit(source, tag.format(version=release))


def _commit(source: Path, rev: str) -> str:
    try:
        return local_builds.commit_of(source, rev)[0]
    except local_builds.GitError as exc:
        raise UsageError(f"bisect: {exc}") from None


def commits_between(source: Path, good: str, bad: str) -> list[str]:
    """local_builds.commits_between, a git error said as bisect's."""
    try:
        return local_builds.commits_between(source, good, bad)
    except local_builds.GitError as exc:
        raise UsageError(f"bisect: {exc}") from None


class _Steps:
    """The configuration on each step (a release, or git:COMMIT), in the one
    spelling (variants.Spec): typed on each step's --impl, settings as given
    (the program gets them), and shown as the registry labels its rows (a
    credential masked)."""

    def __init__(self, name: str, impl: Impl, registries: tuple[str, ...],
                 source: Path | None) -> None:
        self.spec = dataclasses.replace(parse(name), base=impl.base)
        self.registries, self.source = registries, source
        self._resolved: dict[str, Impl] = {}  # each step's, resolved once (a commit asks git)

    def typed(self, release: str) -> str:
        return self.spec.at(release).label

    def impl(self, release: str) -> Impl:
        if release not in self._resolved:
            self._resolved[release] = resolve([self.typed(release)], self.registries,
                                              self.source)[0]
        return self._resolved[release]

    def shown(self, release: str) -> str:
        return self.impl(release).id

    def named(self, step: str) -> str:
        """A commit's label and subject."""
        return f"{self.shown(step)} ({self.impl(step).local.get('subject', '')})"


class _Measured:
    """The steps measured through run_suite into the bisect's run directory
    (measure), and each step's figures read back from it (values)."""

    def __init__(self, opts: Options, ram_bytes: int, steps: _Steps, folder: RunDir,
                 run: RunDir, template: ConfigKey, figure: str, known: list[str]) -> None:
        self.opts, self.ram_bytes, self.steps = opts, ram_bytes, steps
        self.folder, self.run, self.template, self.figure = folder, run, template, figure
        self.known = known  # the steps whose figures are read back: releases, then commits
        self.figures: dict[str, Group] = {}  # each step's, read back after each measure

    def measure(self, todo: list[str], runs: int) -> None:
        step = settings_from(dataclasses.replace(self.opts, impl=",".join(
            self.steps.typed(r) for r in todo), repeat=runs), self.ram_bytes)
        # run_suite resumes folder's latest, which only this bisect points
        code = run_suite(step, self.folder.path, resume=True, report=False)
        if code >= 128:  # interrupted: run_suite kept every row
            raise Stopped(code)
        groups = {g.key: g for g in analyse(self.run).groups}
        self.figures.clear()
        for release in self.known:
            group = groups.get(dataclasses.replace(self.template, impl=self.steps.shown(release)))
            if group is not None:
                self.figures[release] = group

    def values(self, release: str, metric: str | None = None) -> tuple[float, ...]:
        group = self.figures.get(release)
        return tuple(group.values(metric or self.figure)) if group is not None else ()

    def search(self, releases: list[str], repeat: int, max_repeat: int, skip: bool,
               label: Callable[[str], str]) -> Found:
        """One search over releases, its result printed."""
        found = Bisection(releases, self.figure, repeat, max_repeat, self.measure, self.values,
                          skip=skip).search()
        for line in report_lines(found, label, self.values):
            print(line)
        return found


def _one_impl(name: str, good: str, bad: str, registries: tuple[str, ...],
              commits_only: bool) -> Impl:
    """The implementation bisected, refused with two ends that are not two
    releases (or, with --source alone, two revisions)."""
    for option, release in (("--good", good), ("--bad", bad)):
        if not commits_only and not is_release(release):
            raise UsageError(f"bisect: {option} {release[:40]!r} is not a release")
    if good == bad:
        raise UsageError(f"bisect: --good and --bad are both {good}: give two releases")
    impls = resolve([name], registries)
    if len(impls) != 1:
        raise UsageError(f"bisect: {name!r} names {len(impls)} implementations: name one")
    return impls[0]


def _template(steps: _Steps, s: Settings, good: str, figure: str | None) -> tuple[ConfigKey, str]:
    """The one configuration these options run, and the figure followed
    (by default the workload's first headline)."""
    keys = {p.key for p in plan(resolve([steps.typed(good)], steps.registries, steps.source), s)}
    if len(keys) != 1:
        raise UsageError(f"bisect: {steps.shown(good)} runs {len(keys)} configurations of these "
                         f"options: give one --workload it runs, one --n and one value of each of "
                         f"its settings (--buffer, ...)")
    (template,) = keys
    workload = template.workload
    figure = figure or headline(workload)[0]

    def fills(m: str) -> bool:
        return METRICS[m].compared and (METRICS[m].common or workload in (METRICS[m].workloads or ()))

    if figure not in METRICS or not fills(figure):
        fits = ", ".join(m for m in METRICS if fills(m))
        raise UsageError(f"bisect: --figure {figure!r} is not a figure of {workload} ({fits})")
    return template, figure


def run_bisect(name: str, good: str, bad: str, opts: Options, out: Path,
               ram_bytes: int, figure: str | None = None, max_repeat: int = 10,
               resume: Path | None = None) -> int:
    """The `bisect` command: 0 when a release is found with every step
    settled, 1 otherwise (no change, a release with no ok run, or a step
    decided by its estimate), the rows in its own run directory (new in a
    bisect folder of out, or resume's). opts: the measuring options.
    Every refusal comes before anything is written."""
    if parse(name).version:
        raise UsageError(f"bisect: {name!r} names a release: give the implementation, and the "
                         f"releases with --good and --bad")
    source = Path(settings_from(opts, ram_bytes).source or "") if opts.source else None
    registries = opts.registry
    tag = next((i.versions.tag for i in resolve([name], registries) if i.versions), "")
    # --source with two releases of an implementation that names its tags:
    # the releases first, then the commits between the two it found
    then_commits = bool(source and tag and all(_tagged(source, tag, v) for v in (good, bad)))
    commits_only = source is not None and not then_commits
    impl = _one_impl(name, good, bad, registries, commits_only)
    steps = _Steps(name, impl, registries, source)
    if commits_only:  # the steps are commits: git:COMMIT
        assert source is not None
        good, bad = (local_builds.GIT + _commit(source, rev)[:local_builds.SHORT] for rev in (good, bad))
    s = settings_from(dataclasses.replace(opts, impl=steps.typed(good)), ram_bytes)
    template, figure = _template(steps, s, good, figure)
    repeat = max(s.repeat, runs_needed()[1])
    if not repeat <= max_repeat <= MAX_REPEAT:
        raise UsageError(f"bisect: --max-repeat must be from {repeat} to {MAX_REPEAT}")
    releases = _steps_between(impl, source if commits_only else None, good, bad)
    folder, run, made = _open_folder(out, resume)
    measured = _Measured(opts, ram_bytes, steps, folder, run, template, figure, list(releases))
    where = relative(run.path)
    try:
        with interruptible():
            found = measured.search(releases, repeat, max_repeat, commits_only,
                                    steps.named if commits_only else steps.shown)
            if then_commits and found.first_bad and found.last_good:
                assert source is not None
                commits = _commits_of(source, tag, found)
                if commits is None:  # no such tag there: the release is the answer
                    return 0 if found.settled else 1
                measured.known += commits
                found = measured.search(commits, repeat, max_repeat, True, steps.named)
            write_report(run.path)  # every step's rows: the sweep plot among the report's
    except (Stopped, Interrupted) as stop:
        code = stop.code if isinstance(stop, Stopped) else 128 + stop.signum
        print(f"bisect: stopped; every row so far is in {where}: continue with the same bisect "
              f"command and --resume {where}", file=sys.stderr)
        return code
    except (UsageError, RunDirError):
        # refused by the first step's checks: nothing of this bisect is left
        if resume is None and not bisect_folder.has_rows(run):
            bisect_folder.discard(folder.path, made)
        raise
    print(f"rows: {relative(run.runs_path)}; compare any two releases with "
          f"python -m harness compare {where} --baseline {shlex.quote(steps.shown(releases[0]))}")
    return 0 if found.settled else 1


def _steps_between(impl: Impl, source: Path | None, good: str, bad: str) -> list[str]:
    """The steps from good to bad, whichever is newer: the commits between
    them in source where given (the steps are commits), else the releases."""
    releases = commits_between(source, good, bad) if source is not None \
        else between(impl, good, bad)
    if releases[0] != good:
        releases.reverse()  # from good to bad, whichever is newer
    return releases


def _open_folder(out: Path, resume: Path | None) -> tuple[RunDir, RunDir, list[Path]]:
    """(the bisect folder, its run directory, the folders this made): a new
    one in out, or resume's, held; said."""
    if resume is None:
        folder, run, made = bisect_folder.start(out)
        print(f"bisect: recording into {relative(run.path)}")
        return folder, run, made
    folder, run = bisect_folder.resume(resume)
    print(f"bisect: continuing {relative(run.path)}")
    return folder, run, []


def _commits_of(source: Path, tag: str, found: Found) -> list[str] | None:
    """The commits from the last release like good to the first like bad,
    each end by its tag in source; None (said) when a tag names none."""
    assert found.last_good is not None and found.first_bad is not None
    try:
        ends = [_commit(source, tag.format(version=r))[:local_builds.SHORT]
                for r in (found.last_good, found.first_bad)]
        commits = commits_between(source, *(local_builds.GIT + c for c in ends))
    except UsageError as exc:
        print(f"{exc}: the commits between the two releases are not searched")
        return None
    print(f"bisect: on into the {len(commits) - 2} commits between "
          f"{tag.format(version=found.last_good)} and "
          f"{tag.format(version=found.first_bad)} in {source}")
    return commits
