"""A bisect's search, measured through callables (bisect.py's run
directory, or made-up figures in the tests): good and bad first, then the
release between them whose ratio's 95% interval to good lies wholly on one
side of their geometric midpoint (bisect.py's docstring says the rules).
Decides and says each step; writes nothing."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Callable

from ..core import local_builds
from ..core.formatting import fmt_change_interval
from ..core.metrics import METRICS
from ..core.stats import Interval, ratio_interval


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

    @property
    def _steps(self) -> str:
        return "commits" if local_builds.is_git(self.releases[0]) else "releases"

    def search(self) -> Found:
        ends = self._ends()
        if isinstance(ends, Found):
            return ends
        both, midpoint, worse_up = ends
        lo, hi = 0, len(self.releases) - 1
        while (mid := self._middle(lo, hi)) is not None:
            verdict = self._step(mid, lo, hi, midpoint, worse_up)
            if verdict == "bad":
                hi = mid
            elif verdict == "good":
                lo = mid
            elif verdict == "missing":
                return self._found(None, self.releases[lo], self.releases[hi], both,
                                   f"{self.releases[mid]} has no ok run (see its rows): the "
                                   f"change lies between {self.releases[lo]} and "
                                   f"{self.releases[hi]}")
        return self._found(self.releases[hi], self.releases[lo],
                           self.ratio(self.releases[lo], self.releases[hi]), both, "")

    def _ends(self) -> Found | tuple[Interval, float, bool]:
        """Good and bad measured until their ratio is settled: (their ratio,
        the geometric midpoint of their figures, whether bad's is above
        good's), or what was found where they show no change to look for."""
        good, bad = self.releases[0], self.releases[-1]
        name = METRICS[self.figure].heading

        def overall() -> Interval | None:
            return self.ratio(good, bad)

        def settled() -> bool:
            iv = overall()
            return iv is not None and iv.side(1.0) in ("above", "below", "within")

        self.say(f"bisect: {len(self.releases)} {self._steps} from {good} to {bad}; "
                 f"measuring both ends")
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
        midpoint = math.sqrt(statistics.median(self._values(bad))
                             / statistics.median(self._values(good)))
        return both, midpoint, both.estimate > 1

    def _step(self, mid: int, lo: int, hi: int, midpoint: float, worse_up: bool) -> str:
        """One release between lo and hi measured and judged: "good" or
        "bad"; "skipped" (no ok run, with skip), or "missing" (no ok run)."""
        good, bad = self.releases[0], self.releases[-1]
        release, name = self.releases[mid], METRICS[self.figure].heading
        self.say(f"bisect: {self.releases[lo]} is like {good}, {self.releases[hi]} like {bad}; "
                 f"measuring {release} ({hi - lo - 1} {self._steps} between)")

        def decided() -> bool:
            return classify(self.ratio(good, release), midpoint, worse_up) is not None

        if self._settle([release], decided):
            verdict = classify(self.ratio(good, release), midpoint, worse_up)
            how = ""
        elif not self._values(release) and self.skip:
            self.skipped.append(release)
            self.say(f"bisect: {release} has no ok run (see its rows): skipped")
            return "skipped"
        elif not self._values(release):
            return "missing"
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
        return str(verdict)

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
