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
"""

from __future__ import annotations

import dataclasses
import math
import shlex
import shutil
import statistics
import sys
from dataclasses import dataclass
from datetime import datetime
from itertools import count
from pathlib import Path
from typing import Any, Callable

from . import UsageError, relative
from .core import local_builds
from .analyse.analysis import Group, analyse, headline
from .core.envinfo import host
from .core.formatting import fmt_change_interval
from .processes.interrupts import Interrupted, interruptible
from .core.metrics import COUNTERS, METRICS
from .core.formatting import fmt_metric
from .plan.plan import plan
from .core.registry import Impl, resolve
from .record.rundir import RunDir, RunDirError, check_out, latest, new_env, open_run_dir, point_latest
from .session import run_suite, write_report
from .plan.options import Options
from .plan.settings import MAX_REPEAT, settings_from
from .core.stats import Interval, ratio_interval, runs_needed
from .core.variants import is_release, parse
from .releases.versions import between

# A bisect's own folder in OUT: its one run directory, the `latest` link
# through which each step's run resumes it (so no other run in OUT can
# redirect a step), and the lock held from the first step to the report.
FOLDER = "bisect-"


@dataclass(frozen=True)
class Found:
    """What a bisection found, for the printout and the tests."""
    figure: str
    releases: list[str]  # good to bad
    first_bad: str | None  # None: not found (see why)
    last_good: str | None
    change: Interval | None  # last_good -> first_bad
    overall: Interval | None  # good -> bad
    why: str = ""  # when first_bad is None
    measured: tuple[str, ...] = ()
    unsettled: tuple[str, ...] = ()  # steps whose interval held the midpoint: decided by estimate
    skipped: tuple[str, ...] = ()  # steps with no ok run, passed over (commits that do not build)

    @property
    def settled(self) -> bool:
        return self.first_bad is not None and not self.unsettled


class Stopped(Exception):
    """A step's run was interrupted: bisect ends with its exit status."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


def classify(ratio_to_good: Interval | None, midpoint: float, worse_up: bool) -> str | None:
    """'bad', 'good', or None (not settled) for a release whose figure's
    ratio to good's is this interval; midpoint: the geometric middle of
    bad/good; worse_up: bad's figure is above good's. Pure: the tests read it."""
    if ratio_to_good is None:
        return None
    side = ratio_to_good.side(midpoint)
    if side in ("not settled", "within"):
        return None
    return "bad" if (side == "above") == worse_up else "good"


class Bisection:
    """The search, with the measuring done by `measure(releases, runs)`
    (which records rows) and `values(release)` (which reads them back): the
    session's run in use, a table of made-up figures in the tests."""

    def __init__(self, releases: list[str], figure: str, repeat: int, max_repeat: int,
                 measure: Callable[[list[str], int], None],
                 values: Callable[[str], tuple[float, ...]],
                 say: Callable[[str], None] = print, skip: bool = False) -> None:
        self.releases, self.figure = releases, figure
        self.repeat, self.max_repeat = repeat, max_repeat
        self._measure, self._values, self.say = measure, values, say
        # skip: a step with no ok run is passed over, as `git bisect skip`
        # (a commit that does not build), instead of ending the search
        self.skip = skip
        self.runs: dict[str, int] = {}
        self.measured: list[str] = []
        self.unsettled: list[str] = []  # steps decided by their estimate alone
        self.skipped: list[str] = []

    def _run(self, releases: list[str], runs: int) -> None:
        todo = [r for r in releases if self.runs.get(r, 0) < runs]
        if todo:
            self._measure(todo, runs)
            for r in todo:
                self.runs[r] = runs
                if r not in self.measured:
                    self.measured.append(r)

    def ratio(self, old: str, new: str) -> Interval | None:
        return ratio_interval(self._values(old), self._values(new))

    def _settle(self, releases: list[str], decided: Callable[[], bool]) -> bool:
        """More runs of these releases until decided() or --max-repeat (none
        for a release with no ok run: its build failed, or it crashes)."""
        runs = self.repeat
        self._run(releases, runs)
        while not decided() and runs < self.max_repeat and all(self._values(r) for r in releases):
            runs = min(self.max_repeat, runs + 2)
            self.say(f"bisect: not settled yet; {runs} runs of {', '.join(releases)}")
            self._run(releases, runs)
        return decided()

    def search(self) -> Found:
        good, bad = self.releases[0], self.releases[-1]
        name = METRICS[self.figure].heading

        def overall() -> Interval | None:
            return self.ratio(good, bad)

        def settled() -> bool:
            iv = overall()
            return iv is not None and iv.side(1.0) in ("above", "below", "within")

        steps = "commits" if local_builds.is_git(good) else "releases"
        self.say(f"bisect: {len(self.releases)} {steps} from {good} to {bad}; measuring both ends")
        self._settle([good, bad], settled)
        both = overall()
        for end in (good, bad):
            if len(self._values(end)) < 2:
                return self._found(None, None, None, both, f"{end} has fewer than 2 ok runs "
                                   f"(see its rows): nothing to compare")
        if both is None or both.side(1.0) != ("above" if both.estimate > 1 else "below"):
            return self._found(None, None, None, both,
                               f"no change of {name} detected between {good} and {bad} "
                               f"({fmt_change_interval(both)})")
        worse_up = both.estimate > 1
        midpoint = math.sqrt(statistics.median(self._values(bad))
                             / statistics.median(self._values(good)))
        lo, hi = 0, len(self.releases) - 1
        while (mid := self._middle(lo, hi)) is not None:
            release = self.releases[mid]
            self.say(f"bisect: {self.releases[lo]} is like {good}, {self.releases[hi]} like {bad}; "
                     f"measuring {release} ({hi - lo - 1} {steps} between)")

            def decided(release: str = release) -> bool:
                return classify(self.ratio(good, release), midpoint, worse_up) is not None

            if self._settle([release], decided):
                verdict = classify(self.ratio(good, release), midpoint, worse_up)
                how = ""
            elif not self._values(release) and self.skip:
                self.skipped.append(release)
                self.say(f"bisect: {release} has no ok run (see its rows): skipped")
                continue
            elif not self._values(release):
                return self._found(None, self.releases[lo], self.releases[hi], both,
                                   f"{release} has no ok run (see its rows): the change lies "
                                   f"between {self.releases[lo]} and {self.releases[hi]}")
            else:
                # Its interval holds the midpoint after --max-repeat runs: a
                # change spread over several releases, or noise. The search
                # goes on by its estimate, and the result says so.
                iv = self.ratio(good, release)
                verdict = "bad" if (iv is not None and iv.estimate > midpoint) == worse_up else "good"
                self.unsettled.append(release)
                how = f", by its estimate: not settled after {self.runs[release]} runs"
            self.say(f"bisect: {release} is like {good if verdict == 'good' else bad} "
                     f"({name} {fmt_change_interval(self.ratio(good, release))} against {good}{how})")
            if verdict == "bad":
                hi = mid
            else:
                lo = mid
        return self._found(self.releases[hi], self.releases[lo],
                           self.ratio(self.releases[lo], self.releases[hi]), both, "")

    def _middle(self, lo: int, hi: int) -> int | None:
        """The next step between lo and hi: the middle, or the untried step
        nearest to it when the middle was skipped; None when none is left."""
        left = [i for i in range(lo + 1, hi) if self.releases[i] not in self.skipped]
        middle = (lo + hi) / 2
        return min(left, key=lambda i: (abs(i - middle), i)) if left else None

    def _found(self, first_bad: str | None, last_good: str | None, change: Interval | None,
               overall: Interval | None, why: str) -> Found:
        return Found(self.figure, self.releases, first_bad, last_good, change, overall, why,
                     tuple(self.measured), tuple(self.unsettled), tuple(self.skipped))


def report_lines(found: Found, label: Callable[[str], str],
                 values: Callable[[str, str], tuple[float, ...]]) -> list[str]:
    """The result in words, then each measured release's median; label(release)
    is the configuration's name on that release, values(release, metric) its
    ok runs' values."""
    name = METRICS[found.figure].heading
    good, bad = found.releases[0], found.releases[-1]
    lines = []
    if found.first_bad:
        kind = "commit" if local_builds.is_git(found.first_bad) else "release"
        lines.append(f"first {kind} where {name} changed: {label(found.first_bad)} "
                     f"({found.last_good} → {found.first_bad}: {fmt_change_interval(found.change)}; "
                     f"{good} → {bad}: {fmt_change_interval(found.overall)})")
        before, after = found.last_good or good, found.first_bad
        beside = counter_changes(lambda m: values(before, m), lambda m: values(after, m))
        if beside:
            lines.append(f"  beside it ({found.last_good} → {found.first_bad}): {beside}")
        if found.unsettled:
            lines.append(f"not settled: {', '.join(found.unsettled)}: each held the midpoint of "
                         f"{good} and {bad} after every run it got and was placed by its "
                         f"estimate; the change may be spread over several releases")
    else:
        lines.append(f"not found: {found.why}")
    if found.skipped:
        lines.append(f"skipped (no ok run: see their rows): "
                     f"{', '.join(label(r) for r in found.skipped)}")
        if found.first_bad and found.last_good:
            lo, hi = found.releases.index(found.last_good), found.releases.index(found.first_bad)
            between = [r for r in found.releases[lo + 1:hi] if r in found.skipped]
            if between:
                lines.append(f"  the first change may also be at one of the skipped between "
                             f"them: {', '.join(label(r) for r in between)}")
    for release in sorted(found.measured, key=found.releases.index):
        vals = values(release, found.figure)
        median = fmt_metric(found.figure, statistics.median(vals)) if vals else "no ok run"
        lines.append(f"  {label(release)}: {name} {median} ({len(vals)} ok runs)")
    return lines


def counter_changes(old: Callable[[str], tuple[float, ...]],
                    new: Callable[[str], tuple[float, ...]]) -> str:
    """What the kernel counted, new against old: each counter's change with
    its interval ("voluntary context switches +210% [+180%, +240%] (95%)"),
    "; "-separated; "" when no counter has two positive values a side."""
    parts = []
    for m in COUNTERS:
        a, b = old(m), new(m)
        if a and b and min(a + b) > 0:
            parts.append(f"{METRICS[m].label} {fmt_change_interval(ratio_interval(a, b))}")
    return "; ".join(parts)


def _tagged(source: Path, tag: str, release: str) -> bool:
    """Whether release is one whose tag names a commit of source."""
    if not is_release(release):
        return False
    try:
        local_builds.commit_of(source, tag.format(version=release))
    except local_builds.GitError:
        return False
    return True


def _commit(source: Path, rev: str) -> str:
    try:
        return local_builds.commit_of(source, rev)[0]
    except local_builds.GitError as exc:
        raise UsageError(f"bisect: {exc}") from None


def commits_between(source: Path, good: str, bad: str) -> list[str]:
    """git:COMMIT steps from good to bad along the first parents (either
    may be the older), both ends included."""
    old, new = good[len(local_builds.GIT):], bad[len(local_builds.GIT):]
    try:
        steps = local_builds.first_parent_commits(source, old, new)
        if len(steps) == 1:  # bad is not after good: the other way round
            steps = local_builds.first_parent_commits(source, new, old)[::-1]
    except local_builds.GitError as exc:
        raise UsageError(f"bisect: {exc}") from None
    last = new if steps[0] == old else old
    if len(steps) < 2 or not steps[-1].startswith(last):
        raise UsageError(f"bisect: {old} and {new} are not on one first-parent line of {source}")
    return [local_builds.GIT + c[:local_builds.SHORT] for c in steps]


def _start(out: Path) -> tuple[RunDir, RunDir, list[Path]]:
    """A new bisect folder in OUT (created atomically, a taken name gets a
    suffix), held, with its run directory; also the folders this made."""
    check_out(out)
    made = [p for p in (out, *out.parents) if not (p.exists() or p.is_symlink())]
    path = None
    try:
        out.mkdir(parents=True, exist_ok=True)
        stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
        for suffix in count(1):
            path = out / (f"{FOLDER}{stamp}" + (f"-{suffix}" if suffix > 1 else ""))
            try:
                path.mkdir()
                break
            except FileExistsError:
                continue
        folder = RunDir(path)
        folder.lock()
        run = RunDir.create_new(path, lambda run_id: new_env(run_id, host()))
        point_latest(path, run)
    except OSError as exc:
        _discard(path, made)
        raise UsageError(f"--out: cannot write {exc.filename or out}: {exc.strerror}") from None
    return folder, run, made


def _discard(path: Path | None, made: list[Path]) -> None:
    """A new bisect's folder removed, and the folders made for it: a refusal
    leaves nothing written."""
    if path is not None:
        shutil.rmtree(path, ignore_errors=True)
    for folder in made:
        try:
            folder.rmdir()
        except OSError:
            pass


def _continue(text: Path) -> tuple[RunDir, RunDir]:
    """An earlier bisect's run directory (--resume), held: refused when it
    is not one, or another bisect holds it."""
    run = open_run_dir(text)
    holder = latest(run.path.parent)
    if not run.path.parent.name.startswith(FOLDER) or holder is None or holder.path != run.path:
        raise UsageError(f"bisect --resume: {text} is not a bisect's run directory (the one its "
                         f"first line names, {FOLDER}.../RUN)")
    folder = RunDir(run.path.parent)
    folder.lock()
    return folder, run


def _has_rows(run: RunDir) -> bool:
    try:
        return bool(run.runs().rows)
    except RunDirError:
        return True  # not ours to judge: kept


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
    for option, release in (("--good", good), ("--bad", bad)):
        if not commits_only and not is_release(release):
            raise UsageError(f"bisect: {option} {release[:40]!r} is not a release")
    if good == bad:
        raise UsageError(f"bisect: --good and --bad are both {good}: give two releases")
    impls = resolve([name], registries)
    if len(impls) != 1:
        raise UsageError(f"bisect: {name!r} names {len(impls)} implementations: name one")
    impl = impls[0]
    # The configuration on a release, in the one spelling (variants.Spec):
    # typed on each step's --impl, settings as given (the program gets
    # them), and shown as the registry labels its rows (a credential masked).
    spec = dataclasses.replace(parse(name), base=impl.base)
    resolved: dict[str, Impl] = {}  # each step's, resolved once (a commit asks git)

    def typed(release: str) -> str:
        return spec.at(release).label

    def step_impl(release: str) -> Impl:
        if release not in resolved:
            resolved[release] = resolve([typed(release)], registries, source)[0]
        return resolved[release]

    def shown(release: str) -> str:
        return step_impl(release).id

    def named(step: str) -> str:
        """A commit's label and subject."""
        return f"{shown(step)} ({step_impl(step).local.get('subject', '')})"

    if commits_only:  # the steps are commits: git:COMMIT
        assert source is not None
        good, bad = (local_builds.GIT + _commit(source, rev)[:local_builds.SHORT] for rev in (good, bad))
    s = settings_from(dataclasses.replace(opts, impl=typed(good)), ram_bytes)
    keys = {p.key for p in plan(resolve([typed(good)], registries, source), s)}
    if len(keys) != 1:
        raise UsageError(f"bisect: {shown(good)} runs {len(keys)} configurations of these options: "
                         f"give one --workload it runs, one --n and one value of each of its "
                         f"settings (--buffer, ...)")
    (template,) = keys
    workload = template.workload
    figure = figure or headline(workload)[0]

    def fills(m: str) -> bool:
        return METRICS[m].compared and (METRICS[m].common or workload in (METRICS[m].workloads or ()))

    if figure not in METRICS or not fills(figure):
        fits = ", ".join(m for m in METRICS if fills(m))
        raise UsageError(f"bisect: --figure {figure!r} is not a figure of {workload} ({fits})")
    repeat = max(s.repeat, runs_needed()[1])
    if not repeat <= max_repeat <= MAX_REPEAT:
        raise UsageError(f"bisect: --max-repeat must be from {repeat} to {MAX_REPEAT}")
    if commits_only:
        assert source is not None
        releases = commits_between(source, good, bad)
    else:
        releases = between(impl, good, bad)
    if releases[0] != good:
        releases.reverse()  # from good to bad, whichever is newer

    made: list[Path] = []
    if resume is None:
        folder, run, made = _start(out)
        print(f"bisect: recording into {relative(run.path)}")
    else:
        folder, run = _continue(resume)
        print(f"bisect: continuing {relative(run.path)}")
    figures: dict[str, Group] = {}  # each release's, read back after each step
    commits: list[str] = []  # then_commits: the second search's steps

    def measure(todo: list[str], runs: int) -> None:
        step = settings_from(dataclasses.replace(opts, impl=",".join(typed(r) for r in todo),
                                                 repeat=runs), ram_bytes)
        # run_suite resumes folder's latest, which only this bisect points
        code = run_suite(step, folder.path, resume=True, report=False)
        if code >= 128:  # interrupted: run_suite kept every row
            raise Stopped(code)
        groups = {g.key: g for g in analyse(run).groups}
        figures.clear()
        for release in releases + commits:
            group = groups.get(dataclasses.replace(template, impl=shown(release)))
            if group is not None:
                figures[release] = group

    def values(release: str, metric: str = figure) -> tuple[float, ...]:
        group = figures.get(release)
        return tuple(group.values(metric)) if group is not None else ()

    where = relative(run.path)
    try:
        with interruptible():
            found = Bisection(releases, figure, repeat, max_repeat, measure, values,
                              skip=commits_only).search()
            for line in report_lines(found, named if commits_only else shown, values):
                print(line)
            if then_commits and found.first_bad and found.last_good:
                assert source is not None
                try:
                    ends = [_commit(source, tag.format(version=r))[:local_builds.SHORT]
                            for r in (found.last_good, found.first_bad)]
                    commits += commits_between(source, *(local_builds.GIT + c for c in ends))
                except UsageError as exc:  # no such tag there: the release is the answer
                    print(f"{exc}: the commits between the two releases are not searched")
                    return 0 if found.settled else 1
                print(f"bisect: on into the {len(commits) - 2} commits between "
                      f"{tag.format(version=found.last_good)} and "
                      f"{tag.format(version=found.first_bad)} in {source}")
                found = Bisection(commits, figure, repeat, max_repeat, measure, values,
                                  skip=True).search()
                for line in report_lines(found, named, values):
                    print(line)
            write_report(run.path)  # every step's rows: the sweep plot among the report's
    except (Stopped, Interrupted) as stop:
        code = stop.code if isinstance(stop, Stopped) else 128 + stop.signum
        print(f"bisect: stopped; every row so far is in {where}: continue with the same bisect "
              f"command and --resume {where}", file=sys.stderr)
        return code
    except (UsageError, RunDirError):
        # refused by the first step's checks: nothing of this bisect is left
        if resume is None and not _has_rows(run):
            _discard(folder.path, made)
        raise
    print(f"rows: {relative(run.runs_path)}; compare any two releases with "
          f"python -m harness compare {where} --baseline {shlex.quote(shown(releases[0]))}")
    return 0 if found.settled else 1
