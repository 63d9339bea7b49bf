"""How numbers read, everywhere the harness shows one: terminal, report,
plots, compare, progress lines, errors. What is written for other
programs uses `csv_number`, `csv_seconds` (a data file's cell) and
`arg_number` (a command line's). And how a text from the data shows: `visible`."""

from __future__ import annotations

import math
import re
from typing import Any, Callable

from .metrics import METRICS
from .stats import Interval


def _missing(value: float | None) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _sig3(value: float) -> str:
    """Three significant digits, never in exponent form ('1e+03')."""
    return f"{float(f'{value:.3g}'):g}" if abs(value) < 1e15 else f"{value:.3g}"


def fmt_seconds(value: float | None) -> str:
    """0.000812 -> '812 µs'; three significant digits, '—' when absent. The
    unit is chosen after rounding: 0.9996 s reads '1 s', never '1e+03 ms'."""
    if _missing(value):
        return "—"
    for scale, unit in ((1e9, "ns"), (1e6, "µs"), (1e3, "ms")):
        if abs(float(f"{value * scale:.3g}")) < 1000:
            return f"{_sig3(value * scale)} {unit}"
    if abs(value) >= 1000:
        return f"{value:,.0f} s"
    return f"{_sig3(value)} s"


def fmt_bytes(value: float | None) -> str:
    """Powers of 1024, three significant digits: '1.23 GiB', '—' when absent.
    The unit is chosen after rounding: 1023.9 KiB reads '1 MiB'."""
    if _missing(value):
        return "—"
    mag = abs(value)
    if round(mag) < 1 << 10:
        return f"{value:.0f} B"  # under 1 KiB: whole bytes ('1e+03 B' read badly)
    units = (("KiB", 1 << 10), ("MiB", 1 << 20), ("GiB", 1 << 30), ("TiB", 1 << 40))
    for i, (unit, size) in enumerate(units):
        last = i == len(units) - 1
        if last or abs(float(f"{value / size:.3g}")) < 1000:
            return f"{_sig3(value / size)} {unit}" if not last or mag < 1000 * size \
                else f"{value / size:,.0f} {unit}"
    raise AssertionError("unreachable")


def fmt_count(n: int | float | None) -> str:
    """A count such as N in a sentence: '1M', '20k', '1.5M', '12,345'; '—' when absent."""
    if _missing(n):
        return "—"
    for size, suffix in ((10 ** 9, "G"), (10 ** 6, "M"), (10 ** 3, "k")):
        if abs(n) >= size and (n * 10) % size == 0:
            return f"{n / size:g}{suffix}"
    return f"{n:,.0f}" if float(n).is_integer() else _sig3(n)


def fmt_duration(seconds: float) -> str:
    """A duration for a progress line: '4:05', '1:02:03'."""
    seconds = max(0, int(round(seconds)))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


def fmt_elapsed(seconds: float) -> str:
    """How long a run took, in a sentence: '38 min 24 s', '45 s', '2 h 3 min'."""
    seconds = max(0, int(seconds))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    if h:
        return f"{h} h {m} min"
    return f"{m} min {s} s" if m else f"{s} s"


def fmt_ratio(ratio: float | None, best_in_bold: bool = True) -> str:
    if ratio is None:
        return "—"
    text = (f"{ratio:,.0f}×" if ratio >= 100 else f"{ratio:.2f}×" if ratio >= 0.1
            else f"{ratio:.2g}×")
    return f"**{text}**" if best_in_bold and ratio == 1.0 else text


def fmt_number(value: float) -> str:
    """A number as a setting, a limit or a constant gives it, in a sentence:
    30, 0.5, 1e+300 (the g format: six significant digits, no trailing zeros)."""
    return f"{value:g}"


def fmt_percent(fraction: float) -> str:
    """A percentage as a setting gives it (--until-ci, --fail-above, a
    margin): 5%, 2.5%."""
    return f"{fmt_number(fraction * 100)}%"


def fmt_share(fraction: float) -> str:
    """A fraction in whole percent (a share of runs, a confidence, a
    relative width): 83%."""
    return f"{fraction:.0%}"


def fmt_share_tenths(fraction: float) -> str:
    """A fraction in percent to one decimal (a hypervisor's steal, a
    relative width against an --until-ci target): 2.3%, 12.0%."""
    return f"{fraction:.1%}"


def fmt_change(change: float) -> str:
    """A relative change, new/old − 1: +20.0%, -0.42% (two decimals below 1%)."""
    return f"{change:+.2%}" if abs(change) < 0.01 else f"{change:+.1%}"


def fmt_change_interval(iv: Interval | None) -> str:
    """A ratio as a change with its interval and confidence:
    '+29.7% [+19.9%, +44.3%] (96%)'."""
    if iv is None:
        return "no interval"
    return (f"{fmt_change(iv.estimate - 1)} [{fmt_change(iv.low - 1)}, "
            f"{fmt_change(iv.high - 1)}] ({iv.confidence:.0%})")


def fmt_interval(iv: Interval | None, runs: int, fmt: Callable[[float], str]) -> str:
    """The text after a figure: '[lo, hi]' when settled, '[lo, hi] (75%)'
    with its own confidence when not, '(1 run, no interval)' for one run."""
    if iv is None:
        return f"({runs} run{'s' if runs != 1 else ''}, no interval)"
    text = fmt_bounds(iv, fmt)
    return text if iv.settled else f"{text} ({fmt_share(iv.confidence)})"


def fmt_bounds(iv: Interval, fmt: Callable[[float], str]) -> str:
    """An interval's bounds alone, '[lo, hi]', where its confidence is said
    beside it (a verdict's sentence)."""
    return f"[{fmt(iv.low)}, {fmt(iv.high)}]"


def fmt_ratio_bound(ratio: float) -> str:
    """A ratio's interval bound: '1.25', without the × of the estimate; three
    decimals where two would round a bound off 1 onto '1.00'."""
    if ratio < 0.1:
        return f"{ratio:.2g}"
    if ratio >= 100:
        return f"{ratio:,.0f}"
    text = f"{ratio:.2f}"
    return f"{ratio:.3f}" if text == "1.00" and ratio != 1.0 else text


def fmt_value(unit: str, value: float | None) -> str:
    """A metric's value by its unit kind: 's', 'bytes', 'rps' (requests a
    second) or 'count'."""
    if unit == "bytes":
        return fmt_bytes(value)
    if unit in ("rps", "count"):
        if _missing(value):
            return "—"
        text = _sig3(value) if abs(float(f"{value:.3g}")) < 1000 else f"{value:,.0f}"
        return text + (" req/s" if unit == "rps" else "")
    return fmt_seconds(value)


def fmt_plain(value: float, _pos: Any = None) -> str:
    """An axis number: '1,000,000' for large values, '0.5' for small."""
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:g}"


def arg_number(value: float) -> str:
    """A number as a child program's command-line argument: 30, 2.5 (the g
    format, as the program's own flag parser reads it)."""
    return f"{value:g}"


def csv_seconds(seconds: float) -> str:
    """A sample's time in samples.csv: seconds to the tenth of a
    millisecond, 0.1000."""
    return f"{seconds:.4f}"


def csv_number(value: Any) -> str:
    """A cell of a CSV file: empty for None; floats to 10 significant digits
    (nanoseconds for anything under 10 s; drops float noise such as
    0.010100999999999999); anything else as str()."""
    if value is None:
        return ""
    if isinstance(value, float):
        return format(value, ".10g")
    return str(value)


# Characters that act rather than show: C0 and C1 controls and DEL (a
# terminal obeys ESC, a newline ends a table row), the line and paragraph
# separators, and the bidirectional overrides (text that reads other than it is).
_ACTING = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u061c\u200e\u200f"
                     "\u202a-\u202e\u2066-\u2069]")


def _picture(m: re.Match[str]) -> str:
    code = ord(m[0])
    if code < 0x20:
        return chr(0x2400 + code)  # U+2400 on: '␛' for ESC, '␊' for a newline
    return "\u2421" if code == 0x7F else f"\\u{code:04x}"


def visible(text: str) -> str:
    """A text from the data (a name, a version, a host, an error) as it may
    be shown anywhere: every control character as its picture ('␛', '␊',
    '␡') or, where Unicode has none, as '\\u0085'."""
    return _ACTING.sub(_picture, text)


# GitHub's job summary takes at most 1 MiB a step.
GITHUB_LIMIT = 1 << 20


def fit_rows(head: list[str], rows: list[str], tail: list[str], limit: int) -> tuple[list[str], int]:
    """The leading rows that fit between head and tail within `limit` bytes
    (joined by newlines, 200 bytes kept for a line saying how many were left
    out), and how many were left out."""
    kept: list[str] = []
    for row in rows:
        if len("\n".join([*head, *kept, row, *tail]).encode()) > limit - 200:
            break
        kept.append(row)
    return kept, len(rows) - len(kept)


def fmt_metric(name: str, value: float | None) -> str:
    """A metric's value in its unit (metrics.METRICS)."""
    return fmt_value(METRICS[name].unit, value)


def fmt_ordinal(k: int) -> str:
    """A place: 1st, 2nd, 3rd, 11th, 22nd."""
    suffix = "th" if 10 <= k % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(k % 10, "th")
    return f"{k}{suffix}"


def fmt_places(lo: int, hi: int, of: int | None = None) -> str:
    """A rank interval: '3rd–5th of 16', '2nd of 16' where settled."""
    text = fmt_ordinal(lo) if lo == hi else f"{fmt_ordinal(lo)}–{fmt_ordinal(hi)}"
    return text + (f" of {of}" if of is not None else "")


def fmt_fixed(value: float, places: int) -> str:
    """A number to a fixed count of decimals, where a text keeps them
    (2.19, a ratio beside its bounds; 4, whole GiB)."""
    return f"{value:.{places}f}"


def fmt_sig(value: float, digits: int) -> str:
    """A number to `digits` significant digits, as the g format writes it
    (0.031; 1e-05 for a p-value)."""
    return f"{value:.{digits}g}"


def fmt_whole(value: float) -> str:
    """A number rounded to a whole one, with thousands separators: 12,345."""
    return f"{value:,.0f}"


def fmt_share_fine(fraction: float) -> str:
    """A share that is often small, one decimal below 10%: 2.3%, 12%."""
    return fmt_share_tenths(fraction) if fraction < 0.1 else fmt_share(fraction)
