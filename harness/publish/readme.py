"""README.md's generated block (between its `<!-- headline -->` markers),
from two published pages: the newest run that measured the floor (a run of
every implementation) gives its headline rankings (report.headline_places:
each runtime's joint 95% place, the set that could be best, the tiers, the
leader's multiple of the floor, which is never ranked) and the families'
settled counts; the newest run of the claims suite gives the articles'
claims judged. The pages' own figures, shortened: a ranking shows its
first runtimes' places and counts the rest."""

from __future__ import annotations

from collections import Counter

from .page import asked, elapsed, machine
from .published import Run
from ..analyse import questions, ranks
from ..core.formatting import fmt_bounds, fmt_places, fmt_ratio, fmt_ratio_bound
from ..core.metrics import METRICS
from ..present.outline import CLAIMS, PLACES
from ..present.report import (headline_places, md_anchor, md_table, md_text, places_summary,
                              ranking_title)

HEADLINE_START, HEADLINE_END = "<!-- headline -->", "<!-- /headline -->"
CLAIMS_SUITE = "claims"  # the suite that measures the articles' claims (suites.toml)
PLACES_SHOWN = 3  # runtimes shown of a ranking with their places, the rest counted
VERDICTS = (questions.HOLDS, questions.DOES_NOT_HOLD, questions.NOT_SETTLED,
            questions.NOT_MEASURED)


def compact_places(r: ranks.RankIntervals) -> str:
    """The first PLACES_SHOWN runtimes with their joint 95% places, the rest
    counted: the page has the whole ranking."""
    shown = [f"{p.impl} {fmt_places(p.lo, p.hi)}" for p in r.places[:PLACES_SHOWN]]
    rest = len(r.places) - PLACES_SHOWN
    return "; ".join(shown + ([f"{rest} more"] if rest > 0 else []))


def best_text(r: ranks.RankIntervals) -> str:
    """The set that could be best: its first PLACES_SHOWN names, the rest counted."""
    names = [p.impl for p in r.best_set]
    more = len(names) - PLACES_SHOWN
    return ", ".join(names[:PLACES_SHOWN]) + (f" and {more} more" if more > 0 else "")


def link(name: str, anchor: str = "") -> str:
    return f"docs/results/{name}.md" + (f"#{anchor}" if anchor else "")


def rankings_part(run: Run, name: str) -> list[str]:
    placed = headline_places(run.groups, run.env)
    if not placed:
        return []
    env = run.env
    floors = ", ".join(map(md_text, env.floor_impls))
    lines = [f"The `{md_text(env.settings.suite or 'chosen options')}` suite on "
             f"{machine(env)}, run `{md_text(env.run_id)}` of {md_text(str(env.started_at)[:10])} "
             f"({elapsed(env)}; [its page]({link(name, md_anchor(PLACES.title))})). "
             f"{md_text(places_summary(placed))} The floor ({floors}) is not ranked.", ""]
    rows = [[md_text(ranking_title(r)), md_text(best_text(r)), md_text(compact_places(r)),
             str(len(r.tiers())) + (f" ({len(r.apart)} apart)" if r.apart else ""),
             fmt_ratio(m, best_in_bold=False) if (m := leader_floor(r)) is not None else "—"]
            for r in placed]
    return lines + md_table(["ranking", "could be best (95%)", "joint 95% places, best first",
                             "tiers", "leader × floor"], rows) + [""]


def leader_floor(r: ranks.RankIntervals) -> float | None:
    """The ranking's first runtime as a multiple of the floor (worse side above 1)."""
    lead, base = r.places[0].group.median(r.metric), r.floor.median(r.metric) if r.floor else None
    if not base or not lead:
        return None
    return base / lead if METRICS[r.metric].higher_is_better else lead / base


def claims_part(run: Run, name: str) -> list[str]:
    found = asked(run)
    if found is None or not found.claims:
        return []
    env = run.env
    counts = Counter(c.verdict for c in found.claims)
    lines = [f"The articles' claims on run `{md_text(env.run_id)}` of "
             f"{md_text(str(env.started_at)[:10])}, {machine(env)} "
             f"([claims]({link(name, md_anchor(CLAIMS.title))}), with each ratio's runs): "
             + ", ".join(f"{md_text(v)} {counts[v]}" for v in VERDICTS if counts[v]) + ".", ""]
    rows = [[md_text(c.claim.text), md_text(c.claim.published),
             f"{fmt_ratio(c.interval.estimate, best_in_bold=False)} "
             f"{fmt_bounds(c.interval, fmt_ratio_bound)}" if c.interval is not None and c.measured
             else "—",
             md_text(c.verdict)]  # the page says why
            for c in found.claims]
    return lines + md_table(["claim", "article", "this run", "verdict"], rows)


def block(headline: tuple[Run, str] | None, claims: tuple[Run, str] | None) -> str:
    """The block's text, from (run, page name) of each page."""
    lines = (rankings_part(*headline) if headline else []) + (
        claims_part(*claims) if claims else [])
    return "\n".join(lines).strip("\n")


def with_block(readme: str, text: str) -> str:
    start, end = readme.index(HEADLINE_START), readme.index(HEADLINE_END)
    return readme[:start + len(HEADLINE_START)] + "\n" + text + "\n" + readme[end:]
