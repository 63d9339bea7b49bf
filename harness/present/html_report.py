"""report.html for one run directory: one self-contained file (inline CSS
and JavaScript, the plots as data: images; nothing fetched from a network)
beside report.md, its sections in the outline's order (outline.py) under a
line of links to each. Per workload a table sortable by any column (a click
on its header; numbers sort by the raw value in each cell's data-value, not
by their text) with each configuration's command, runtime and a link to
the environment. Rendering only: the figures come from analysis, their text
from report's cells and formatting.

Nothing from the data is markup: every value is escaped where it is
written (_esc; report's cells are Markdown whose subset _inline converts,
escaping each piece), and the page's Content-Security-Policy lets nothing
run but its own script and style (by their hashes) and fetch nothing, so a
run directory someone sent can put no live element into the page."""

from __future__ import annotations

import base64
import hashlib
import html
import io
import re
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from PIL import Image, features

from ..analyse import analysis, questions, ranks, standings, verdicts
from ..analyse.analysis import Group, Results
from ..core.formatting import visible
from ..core.schema import Status
from . import outline
from .report import (CLAIMS_HEADER, HEADLINE_HEADER, PLACES_HEADER, RANKING_HEADER,
                     STANDINGS_HEADER, STYLES_HEADER, TWO_MODES_INTRO, RunReport, build_table, check_lines,
                     claim_rows, environment_rows, headline_cells, legend_rows, overlap_note,
                     place_rows, places_summary, ranking_rows, section_title, standings_rows,
                     styles_rows, two_modes_lines, unranked_lines)

CSS = """
body{font:15px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0 auto;
 max-width:1400px;padding:1em 2em;color:#1b1b1b;background:#fff}
h1{font-size:1.6em;margin:.3em 0}h2{margin-top:1.6em;border-bottom:1px solid #ddd}
h3{margin:1em 0 .3em}
#verdicts{background:#f4f8fb;border:1px solid #cfe0ee;border-radius:6px;padding:.2em 1.2em 1em}
#verdicts li{margin:.25em 0}
ul.failures li{color:#9b2c2c}
nav{position:sticky;top:0;z-index:2;background:#fff;border-bottom:1px solid #ddd;
 padding:.3em 0;font-size:14px}
nav a{margin-right:1em;white-space:nowrap}
.banner{background:#fff4e5;border:1px solid #f0c36d;padding:.6em 1em;border-radius:6px}
.scroll{overflow-x:auto}
table{border-collapse:collapse;font-size:13px;margin:.5em 0}
th,td{border:1px solid #ddd;padding:3px 7px;vertical-align:top;text-align:left}
th{background:#f2f2f2;position:sticky;top:0}
table.sortable th{cursor:pointer;user-select:none;white-space:nowrap}
table.sortable th:hover{background:#e6eef6}
th[aria-sort=ascending]::after{content:" \\25B2"}th[aria-sort=descending]::after{content:" \\25BC"}
td.num{white-space:nowrap}
#table-places td:nth-child(n+2):nth-child(-n+5){white-space:nowrap}
tr:nth-child(even) td{background:#fafafa}
details summary{cursor:pointer;color:#2b6cb0}
details code{display:block;white-space:pre-wrap;word-break:break-all;font-size:12px}
img.plot{max-width:100%;border:1px solid #eee;margin:.5em 0}
ul.warnings li{margin:.2em 0}
"""

# Click a header: sort its table by that column, ascending then descending.
# A cell sorts by its data-value when it has one (a number), else by its text;
# cells whose data-value is empty (no value) go last either way. #sort=TABLE_ID:COLUMN[:desc] in
# the address sorts on load (a link can show a table already sorted).
JS = r"""
(function(){
function key(td){
  if(!td) return null;
  var v=td.getAttribute('data-value');
  if(v===null) v=td.textContent;
  if(v==='') return null;
  var n=Number(v);
  return isNaN(n)?v.toLowerCase():n;
}
function sortTable(table,col,dir){
  var body=table.tBodies[0], rows=Array.prototype.slice.call(body.rows);
  rows.forEach(function(r,i){r._i=i;});
  rows.sort(function(a,b){
    var x=key(a.cells[col]), y=key(b.cells[col]);
    if(x===null&&y===null) return a._i-b._i;
    if(x===null) return 1; if(y===null) return -1;
    var c;
    if(typeof x==='number'&&typeof y==='number') c=x-y;
    else c=String(x).localeCompare(String(y));
    return (dir==='descending'?-c:c)||a._i-b._i;
  });
  rows.forEach(function(r){body.appendChild(r);});
  Array.prototype.forEach.call(table.tHead.rows[0].cells,function(th,i){
    if(i===col) th.setAttribute('aria-sort',dir); else th.removeAttribute('aria-sort');
  });
}
window.sortTable=sortTable;
document.querySelectorAll('table.sortable').forEach(function(table){
  Array.prototype.forEach.call(table.tHead.rows[0].cells,function(th,i){
    th.addEventListener('click',function(){
      sortTable(table,i,th.getAttribute('aria-sort')==='ascending'?'descending':'ascending');
    });
  });
});
var m=/#sort=([^:]+):(\d+)(:desc)?/.exec(location.hash);
if(m){var t=document.getElementById(m[1]); if(t) sortTable(t,Number(m[2]),m[3]?'descending':'ascending');}
})();
"""



def _source_hash(source: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(source.encode()).digest()).decode() + "'"


# The page may run its own script and use its own style, nothing else (an
# element or handler that got in from the data would not run), and may load
# nothing but its data: plots; no fetch, form, frame or base of any kind.
CSP = (f"default-src 'none'; img-src data:; style-src {_source_hash(CSS)}; "
       f"script-src {_source_hash(JS)}; base-uri 'none'; form-action 'none'")


def _esc(value: Any) -> str:
    """A value from the data as HTML text or an attribute's value: escaped,
    quotes included, its control characters shown (formatting.visible)."""
    return html.escape(visible(str(value)), quote=True)


# What a backslash escapes in Markdown; a piece's element by its style.
PUNCTUATION = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
TAGS = {"": "{}", "strong": "<strong>{}</strong>", "code": "<code>{}</code>"}
_FENCE = re.compile("`+")


def _spans(text: str) -> list[tuple[str, str]]:
    """Report's cells are Markdown with their data escaped (report.md_text,
    md_code); the subset they use, as (style, text) pieces: a backslash
    escape, **strong** and a code span of any fence."""
    out: list[tuple[str, str]] = []
    strong, plain, i = False, "", 0

    def flush(style: str) -> None:
        nonlocal plain
        if plain:
            out.append((style, plain))
        plain = ""

    while i < len(text):
        fence = _FENCE.match(text, i)
        if text[i] == "\\" and i + 1 < len(text) and text[i + 1] in PUNCTUATION:
            plain, i = plain + text[i + 1], i + 2
        elif fence and (end := re.compile(rf"(?<!`){fence[0]}(?!`)").search(text, i + len(fence[0]))):
            flush("strong" if strong else "")
            code = text[i + len(fence[0]):end.start()]
            if code.startswith(" ") and code.endswith(" ") and code.strip():
                code = code[1:-1]
            out.append(("code", code.replace("\\|", "|")))  # the cell's escaped bound
            i = end.end()
        elif text.startswith("**", i):
            flush("strong" if strong else "")
            strong, i = not strong, i + 2
        else:
            step = len(fence[0]) if fence else 1  # an unclosed fence is text
            plain, i = plain + text[i:i + step], i + step
    flush("strong" if strong else "")
    return out


def _inline(text: str) -> str:
    """A cell's Markdown as HTML: each piece escaped, in its element."""
    return "".join(TAGS[style].format(_esc(piece)) for style, piece in _spans(text))


def _plain(text: str) -> str:
    """A cell's Markdown as the text it shows."""
    return "".join(piece for _, piece in _spans(text))


def _anchor(*parts: Any) -> str:
    """An id: letters, digits, '_' and '-' only (nothing to escape)."""
    return re.sub(r"[^A-Za-z0-9_-]+", "-", "-".join(str(p) for p in parts if p is not None)).strip("-")


def _attr(value: Any, shown: str) -> str:
    """A cell's sort value: none where it is the text the cell shows (the
    script sorts by the text then; repeating every text in an attribute made
    a default run's page a tenth larger), empty where the cell has none."""
    if value is None:
        return ' data-value=""'
    if isinstance(value, str) and value == shown:
        return ""
    if isinstance(value, float):
        return f' data-value="{value!r}"'
    return f' data-value="{_esc(value)}"'


def _details(g: Group) -> str:
    """A configuration's command lines (runs.csv), runtime and statuses."""
    commands = sorted({r.command for r in g.rows if r.command})
    errors = sorted({r.error for r in g.rows if r.error and r.status != Status.OK})
    parts = [f"<b>{_esc(g.label)}</b>",
             f"runtime: {_esc(g.runtime or '—')}",
             f"runs: {_esc(g.statuses)}"]
    parts += [f"<code>{_esc(c)}</code>" for c in commands] or ["(no command recorded)"]
    parts += [f"error: {_esc(e)}" for e in errors]
    parts.append('<a href="#environment">environment and versions</a>')
    return (f'<details id="{_anchor("cfg", g.label)}"><summary>run</summary>'
            + "<br>".join(parts) + "</details>")


def _table_html(table_id: str, header: list[str], rows: Iterable[list[tuple[str, Any]]],
                sortable: bool = True, details: Sequence[Group] = (),
                links: Sequence[str] = ()) -> str:
    """A table of report's cells (Markdown, each with the value it sorts
    by); with `details`, a last column holding each row's group's _details;
    with `links`, each row's first cell links to that id (an _anchor: no
    character to escape)."""
    head = "".join(f"<th>{_esc(h)}</th>" for h in header + (["details"] if details else []))
    body = []
    for i, row in enumerate(rows):
        cells = []
        for j, (text, value) in enumerate(row):
            klass = ' class="num"' if isinstance(value, (int, float)) else ""
            shown = _inline(text)
            if j == 0 and links and links[i]:
                shown = f'<a href="#{_anchor(links[i])}">{shown}</a>'
            attr = _attr(value, _plain(text)) if sortable else ""
            cells.append(f"<td{klass}{attr}>{shown}</td>")
        if details:
            cells.append(f'<td data-value="">{_details(details[i])}</td>')
        body.append("<tr>" + "".join(cells) + "</tr>")
    klass = ' class="sortable"' if sortable else ""
    return (f'<div class="scroll"><table id="{table_id}"{klass}><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table></div>")


def _png(path: Path, alt: str) -> str:
    """A plot, inline: as lossless WebP where that is smaller (the same
    pixels; a default run's plots take 38% fewer bytes, which keeps the page
    within 1.5 MB), else its PNG."""
    kind, raw = "png", path.read_bytes()
    if features.check("webp"):
        with Image.open(io.BytesIO(raw)) as image:
            packed = io.BytesIO()
            image.save(packed, "WEBP", lossless=True)
        if packed.tell() < len(raw):
            kind, raw = "webp", packed.getvalue()
    data = base64.b64encode(raw).decode("ascii")
    return f'<img class="plot" alt="{_esc(alt)}" src="data:image/{kind};base64,{data}">'


def render_html(results: Results, plots: dict[str, Path] | None = None,
                found: list[standings.Standing] | None = None,
                asked: questions.Questions | None = None,
                placed: list[ranks.RankIntervals] | None = None) -> str:
    """report.html's text: a line of links to its sections and a check's
    banner, then the outline's sections (outline.py). plots: the PNGs to
    embed by file name (default: those in the run's plots/); found, asked,
    placed: the run's standings, questions and headline rankings (default:
    report.run_standings, run_questions, headline_places)."""
    run_dir, env = results.run.path, results.env
    if plots is None:
        folder = run_dir / "plots"
        plots = {p.name: p for p in sorted(folder.glob("*.png"))} if folder.is_dir() else {}
    run_id = env.run_id or run_dir.name
    report = RunReport.of(results, plots, found, asked, placed)
    links: list[tuple[str, str]] = []  # (id, text) of each section written, for the nav

    def section(s: outline.Section, level: int, inner: list[str]) -> list[str]:
        if s is outline.WORKLOADS:
            links.extend((_anchor("workload", w), w) for w in report.by_workload)
            return _workload_sections(report)
        body = _HTML_BODIES[s.id](report)
        if body is None:
            return []
        if level > 2:
            return [f"<h{level}>{_esc(s.title)}</h{level}>"] + body + inner
        links.append((s.id, s.title))
        return [f'<section id="{s.id}"><h2>{_esc(s.title)}</h2>'] + body + inner + ["</section>"]

    sections = outline.walk(outline.HTML, section)
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           f'<meta http-equiv="Content-Security-Policy" content="{_esc(CSP)}">',
           '<meta name="viewport" content="width=device-width, initial-scale=1">',
           f"<title>Benchmark report: run {_esc(run_id)}</title>",
           f"<style>{CSS}</style></head><body>",
           f"<h1>Benchmark report: run {_esc(run_id)}</h1>",
           "<nav>" + "".join(f'<a href="#{_anchor(target)}">{_esc(text)}</a>'
                             for target, text in links) + "</nav>"]
    if report.checking:
        banner = " ".join(outline.CHECK_BANNER.format(suite=env.settings.suite).split("\n"))
        out.append(f'<p class="banner">{_inline(banner)}'
                   + (f" {_esc(note)}" if (note := overlap_note(env)) else "") + "</p>")
    out += sections
    out.append(f"<script>{JS}</script></body></html>")
    return "\n".join(out) + "\n"


def _verdicts(r: RunReport) -> list[str]:
    """The Verdicts' lead: a check's result (its failed configurations
    listed), or the questions' summary."""
    if r.checking:
        check = check_lines(r.results.groups)
        items = [line[2:] for line in check[1:] if line.startswith("- ")]
        return [f'<p class="settled">{_inline(check[0])}</p>'] + (
            ['<ul class="failures">' + "".join(f"<li>{_inline(i)}</li>" for i in items) + "</ul>"]
            if items else [])
    out = [f'<p class="settled"><b>{_esc(r.asked.summary())}</b></p>'] if r.asked else []
    if note := standings.unjudged_note(r.results.env.settings):
        out.append(f"<p>{_esc(note)}</p>")
    return out


def _places(r: RunReport) -> list[str] | None:
    """The headline rankings: their summary, intro and table, each ranking's
    first row linking to its workload's section (unsortable: a ranking's
    rows read in its order); the runtimes left unplaced and the
    configurations whose runs fall into two modes."""
    if not r.placed:
        return None
    groups = standings.judged(r.results.groups, r.results.env.settings)
    rows = place_rows(r.placed)
    links = [_anchor("workload", p.workload) for p in r.placed for _ in p.places]
    out = [f"<p><b>{_esc(places_summary(r.placed))}</b></p><p>{_inline(outline.PLACES.intro)}</p>",
           _table_html("table-places", PLACES_HEADER, [[(c, None) for c in row] for row in rows],
                       sortable=False, links=[a if row[0] else "" for a, row in zip(links, rows)])]
    if unranked := unranked_lines(r.placed, groups):
        out.append("<p>Not placed:</p>" + _list(unranked, "unplaced"))
    if two := two_modes_lines(groups):
        out.append(f"<p>{_inline(TWO_MODES_INTRO)}</p>" + _list(two, "two-modes"))
    return out


def _cells(rows: list[list[str]]) -> list[list[tuple[str, Any]]]:
    """Report's Markdown cells, each sorting by the text it shows."""
    return [[(c, _plain(c)) for c in row] for row in rows]


def _claims(r: RunReport) -> list[str] | None:
    if r.asked is None or not r.asked.claims:
        return None
    return [f"<p>{_inline(outline.CLAIMS.intro)}</p>",
            _table_html("table-claims", CLAIMS_HEADER, _cells(claim_rows(r.asked)))]


def _styles(r: RunReport) -> list[str] | None:
    if r.asked is None or not r.asked.styles:
        return None
    found = r.asked.styles
    return [f"<p>{_inline(outline.STYLES.intro)}</p>",
            _table_html("table-styles", STYLES_HEADER, _cells(styles_rows(found)))]


def _rankings(r: RunReport) -> list[str] | None:
    if r.asked is None or not r.asked.rankings:
        return None
    return [f"<p>{_inline(outline.RANKINGS.intro)}</p>",
            _table_html("table-rankings", RANKING_HEADER, _cells(ranking_rows(r.asked)))]


def _leaders(r: RunReport) -> list[str] | None:
    """report.md's first screen: the leaders, each linked to its workload."""
    if r.checking:
        return None
    found = verdicts.headlines(r.results.groups, r.standing)
    rows = [[(c, _plain(c)) for c in headline_cells(h)] for h in found]
    return ([_table_html("table-verdicts", HEADLINE_HEADER, rows,
                         links=[_anchor("workload", h.workload) for h in found])] if rows
            else ["<p>No runs were recorded.</p>"]) + [f"<p>{_inline(outline.LEADERS.intro)}</p>"]


def _failures(r: RunReport) -> list[str] | None:
    failed = verdicts.failures(r.results.groups)
    return (['<ul class="failures">' + "".join(f"<li>{_esc(f)}</li>" for f in failed) + "</ul>"]
            if failed else None)


def _list(items: list[str], klass: str) -> str:
    """Markdown list items ('- text') as an HTML list, each escaped."""
    return (f'<ul class="{klass}">' + "".join(f"<li>{_inline(i[2:])}</li>" for i in items)
            + "</ul>")


def _warnings(r: RunReport) -> list[str]:
    warned = analysis.warnings(r.results.groups, r.results.env, r.results.notes)
    return ['<ul class="warnings">' + "".join(f"<li>{_esc(w)}</li>" for w in warned) + "</ul>"
            if warned else "<p>None.</p>"]


def _notes(r: RunReport) -> list[str] | None:
    notes = analysis.design_notes(r.results.groups)
    return ["<ul>" + "".join(f"<li>{_esc(n)}</li>" for n in notes) + "</ul>"] if notes else None


def _workload_sections(r: RunReport) -> list[str]:
    """Each workload's section: its table and plots."""
    out = []
    for workload, members in r.by_workload.items():
        table = build_table(workload, members, r.results.ranks)
        out.append(f'<section id="{_anchor("workload", workload)}">'
                   f"<h2>{_esc(section_title(workload))}</h2>")
        out.append(_table_html(_anchor("table", workload), table.header, table.rows,
                               details=table.groups))
        mine = sorted((n for n in r.plots if n.startswith(f"{workload}_")),
                      key=lambda n: [k in n for k in ("_time", "_rss", "_mem_per_task")],
                      reverse=True)
        out += [_png(r.plots[n], n[:-4].replace("_", " ")) for n in mine]
        out.append("</section>")
    return out


def _implementations(r: RunReport) -> list[str] | None:
    if not r.by_workload:
        return None
    return [f"<p>{_inline(outline.IMPLEMENTATIONS.intro)}</p>",
            _table_html("table-implementations", ["impl", "language", "runtime", "flags"],
                        _cells(legend_rows(r.results.groups, r.results.env)))]


def _over_time(r: RunReport) -> list[str] | None:
    shown = [f"rss_over_time_{w}.png" for w in r.by_workload if f"rss_over_time_{w}.png" in r.plots]
    return [_png(r.plots[n], n[:-4]) for n in shown] or None


def _standings(r: RunReport) -> list[str] | None:
    if not r.standing:
        return None
    return [f"<p><b>{_esc(standings.summary(r.standing))}</b> "
            f"{_inline(outline.STANDINGS.intro)}</p>",
            _table_html("table-standings", STANDINGS_HEADER, _cells(standings_rows(r.standing)))]


def _environment(r: RunReport) -> list[str]:
    env, groups = r.results.env, r.results.groups
    return [_table_html("table-environment", ["", ""],
                        [[(c, None) for c in row] for row in environment_rows(env, groups)]
                        if env else [[("(no env.json in this run directory)", None)]],
                        sortable=False)]


# Each section's body in report.html (the outline gives their order and
# titles): its elements, or None where the run has none of it.
_HTML_BODIES: dict[str, Callable[[RunReport], list[str] | None]] = {
    outline.VERDICTS.id: _verdicts,
    outline.PLACES.id: _places,
    outline.CLAIMS.id: _claims,
    outline.STYLES.id: _styles,
    outline.RANKINGS.id: _rankings,
    outline.LEADERS.id: _leaders,
    outline.FAILURES.id: _failures,
    outline.ENVIRONMENT.id: _environment,
    outline.WARNINGS.id: _warnings,
    outline.NOTES.id: _notes,
    outline.GLANCE.id: lambda r: ([_png(r.plots["summary.png"], "summary")]
                              if "summary.png" in r.plots else None),
    outline.IMPLEMENTATIONS.id: _implementations,
    outline.OVER_TIME.id: _over_time,
    outline.STANDINGS.id: _standings,
}


def write_html(results: Results, into: Path | None = None,
               plots: dict[str, Path] | None = None,
               found: list[standings.Standing] | None = None,
               asked: questions.Questions | None = None,
               placed: list[ranks.RankIntervals] | None = None) -> Path:
    path = (into or results.run.path) / "report.html"
    path.write_text(render_html(results, plots, found, asked, placed), encoding="utf-8")
    return path
