"""README.md's generated block (between its `<!-- headline -->` markers),
from two published pages: the newest run that measured the floor (a run of
every implementation) gives the families' settled counts and, per workload
and headline figure, the ranking of its largest configuration in tiers,
the floor beside it, never in it; the newest run of the claims suite gives
the articles' claims judged. The pages' own tables (report.ranking_rows,
claim_rows), shortened: a tier of many shows its first names and how many
more."""

from __future__ import annotations

from collections import Counter

from .page import CLAIMS_TITLE, asked, elapsed, machine
from .published import Run
from ..analyse import questions, verdicts
from ..core.formatting import fmt_bounds, fmt_ratio, fmt_ratio_bound
from ..core.metrics import METRICS
from ..present.report import floor_multiple, md_anchor, md_table, md_text

HEADLINE_START, HEADLINE_END = "<!-- headline -->", "<!-- /headline -->"
CLAIMS_SUITE = "claims"  # the suite that measures the articles' claims (suites.toml)
TIER_NAMES = 3  # names shown of a tier, the rest counted
TOP_PLACES = 4  # tiers shown of a ranking: those starting at these places
VERDICTS = (questions.HOLDS, questions.DOES_NOT_HOLD, questions.NOT_SETTLED,
            questions.NOT_MEASURED)


def compact_tiers(r: questions.Ranking) -> str:
    """Ranking.tier_text with a long tier cut ('1–30: a ~ b ~ c ~ … (27 more)')
    and the tiers past TOP_PLACES counted ('6–18: 7 more tiers'): the page
    has the whole ranking."""
    parts = []
    tiers = r.tiers()
    shown = [t for t in tiers if t[0] <= TOP_PLACES]
    if len(shown) < len(tiers):
        rest = len(tiers) - len(shown)
        last_place = len(r.order)
        tail = f"{tiers[len(shown)][0]}–{last_place}: {rest} more tier{'s' if rest != 1 else ''}"
    else:
        tail = ""
    for first, members in shown:
        last = first + len(members) - 1
        names = members[0].impl
        for place in range(first, min(last, first + TIER_NAMES - 1)):
            pair = r.pairs[place - 1]
            names += f" {'=' if pair.verdict == questions.LEVEL_WORD else '~'} {pair.other.impl}"
        if len(members) > TIER_NAMES:
            names += f" ~ … ({len(members) - TIER_NAMES} more)"
        parts.append(f"{first}{f'–{last}' if last != first else ''}: {names}")
    return "; ".join(parts + ([tail] if tail else []))


def headline_rankings(q: questions.Questions) -> list[questions.Ranking]:
    """Per workload and figure, the ranking of the largest configuration."""
    chosen: dict[tuple[str, str], questions.Ranking] = {}
    for r in q.rankings:
        held = chosen.get((r.workload, r.metric))
        if held is None or r.order[0].key.sort_key >= held.order[0].key.sort_key:
            chosen[(r.workload, r.metric)] = r
    return list(chosen.values())


def link(name: str, anchor: str = "") -> str:
    return f"docs/results/{name}.md" + (f"#{anchor}" if anchor else "")


def rankings_part(run: Run, name: str) -> list[str]:
    found = asked(run)
    if found is None:
        return []
    env = run.env
    floors = ", ".join(map(md_text, env.floor_impls))
    lines = [f"The `{md_text(env.settings.get('suite') or 'chosen options')}` suite on "
             f"{machine(env)}, run `{md_text(env.run_id)}` of {md_text(str(env.started_at)[:10])} "
             f"({elapsed(env)}; [its page]({link(name)})). {md_text(found.summary())} "
             f"The floor ({floors}) is not ranked.", ""]
    rows = [[md_text(r.workload), md_text(verdicts.where(r.order[0])),
             md_text(METRICS[r.metric].label), md_text(compact_tiers(r)),
             fmt_ratio(m, best_in_bold=False) if (m := floor_multiple(r)) is not None else "—"]
            for r in headline_rankings(found)]
    if not rows:
        return lines
    return lines + md_table(["workload", "at", "figure", "ranking, best first (tiers)",
                             "leader × floor"], rows) + [""]


def claims_part(run: Run, name: str) -> list[str]:
    found = asked(run)
    if found is None or not found.claims:
        return []
    env = run.env
    counts = Counter(c.verdict for c in found.claims)
    lines = [f"The articles' claims on run `{md_text(env.run_id)}` of "
             f"{md_text(str(env.started_at)[:10])}, {machine(env)} "
             f"([claims]({link(name, md_anchor(CLAIMS_TITLE))}), with each ratio's runs): "
             + ", ".join(f"{md_text(v)} {counts[v]}" for v in VERDICTS if counts[v]) + ".", ""]
    rows = [[md_text(c.claim.text), md_text(c.claim.published),
             f"{fmt_ratio(c.interval.estimate, best_in_bold=False)} "
             f"{fmt_bounds(c.interval, fmt_ratio_bound)}" if c.interval is not None and c.measured
             else "—",
             md_text(c.verdict + (f": {c.why}" if c.why else ""))]
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
