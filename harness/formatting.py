"""How numbers read, everywhere the harness shows one: terminal, report,
plots, compare. Files written for other programs use `csv_number`."""

from __future__ import annotations

import math
from typing import Any, Callable

from .stats import Interval, describe


def _missing(value: float | None) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def fmt_seconds(value: float | None) -> str:
    """0.000812 -> '812 µs'; three significant digits, '—' when absent."""
    if _missing(value):
        return "—"
    mag = abs(value)
    for limit, scale, unit in ((1e-6, 1e9, "ns"), (1e-3, 1e6, "µs"), (1.0, 1e3, "ms")):
        if mag < limit:
            return f"{value * scale:.3g} {unit}"
    return f"{value:.3g} s"


def fmt_bytes(value: float | None) -> str:
    """Powers of 1024, three significant digits: '1.23 GiB', '—' when absent."""
    if _missing(value):
        return "—"
    mag = abs(value)
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if mag >= size:
            return f"{value / size:.3g} {unit}"
    return f"{value:.0f} B"  # under 1 KiB: whole bytes ('1e+03 B' read badly)


def fmt_duration(seconds: float) -> str:
    """A duration for a progress line: '4:05', '1:02:03'."""
    seconds = max(0, int(round(seconds)))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


def fmt_ratio(ratio: float | None, best_in_bold: bool = True) -> str:
    if ratio is None:
        return "—"
    text = f"{ratio:.2f}×" if ratio >= 0.1 else f"{ratio:.2g}×"
    return f"**{text}**" if best_in_bold and ratio == 1.0 else text


def fmt_interval(iv: Interval | None, runs: int, fmt: Callable[[float], str]) -> str:
    """The text after a figure: '[lo, hi]' when settled, '[lo, hi] (75%)'
    with its own confidence when not, '(1 run, no interval)' for one run."""
    text = describe(iv, runs, fmt)
    return text if iv is not None else f"({text})"


def fmt_ratio_bound(ratio: float) -> str:
    """A ratio's interval bound: '1.25', without the × of the estimate; three
    decimals where two would round a bound off 1 onto '1.00'."""
    if ratio < 0.1:
        return f"{ratio:.2g}"
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
        text = f"{value:.3g}" if abs(value) < 1000 else f"{value:,.0f}"
        return text + (" req/s" if unit == "rps" else "")
    return fmt_seconds(value)


def fmt_plain(value: float, _pos: Any = None) -> str:
    """An axis number: '1,000,000' for large values, '0.5' for small."""
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:g}"


def csv_number(value: Any) -> str:
    """A cell of a CSV file: empty for None; floats to 10 significant digits
    (nanoseconds for anything under 10 s; drops float noise such as
    0.010100999999999999); anything else as str()."""
    if value is None:
        return ""
    if isinstance(value, float):
        return format(value, ".10g")
    return str(value)
