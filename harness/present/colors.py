"""One colour per implementation, the same in every plot of every run: a hue
per language, and per variant a shade of it (in the registry's declaration
order). Shades never carry the difference alone: each implementation also
has a marker, a line style (dashes) and a bar hatch of its own within its
language, assigned by its id (the language's ids sorted: variant_styles),
so the variants of one language read apart without colour, whatever order
the registry lists them in and whatever else ran. An implementation the
registry does not know (from an older run, or a fake) gets a grey, a
marker and a line style derived from its name; a variant or another release
of one it knows, that implementation's colour with another marker and dash."""

from __future__ import annotations

import zlib

from ..core.registry import Impl
from ..core.variants import base_of

Color = tuple[float, float, float]

# By the registry's language names (impls.toml); `node` is Node.js.
LANGUAGE_HUES = dict(go="#0a9bc7", rust="#c8401e", csharp="#7b3fb0", java="#e07b00",
                     node="#3a8f2d", python="#2b59c3", kotlin="#d6336c",
                     erlang="#a0522d", elixir="#b5179e", cpp="#111111")
# A language the table above does not name still gets a colour, not grey:
# one of these, chosen by its name.
SPARE_HUES = ("#17becf", "#bcbd22", "#8c564b", "#e377c2", "#7f7f00", "#006d5b")
UNKNOWN_HUE = "#6e6e6e"
LINE_STYLES = ("-", "--", "-.", ":", (0, (5, 1)), (0, (1, 1)))
HATCHES = (None, "//", "..", "xx", "\\\\", "--")
# Never "X" or "v": the plots use those for a failure and for a figure of 0.
MARKERS = ("o", "s", "^", "D", "P", "*", "h", "<", ">", "p")


def variant_styles(ids: list[str]) -> dict[str, int]:
    """Each of one language's implementations' index into MARKERS,
    LINE_STYLES and HATCHES: its place among the language's ids sorted, so
    it depends on the ids alone, never on the registry's order or on which
    of them a run has. Distinct within the language (up to the shortest
    of those tuples, six). Pure: the tests read it."""
    return {impl: i for i, impl in enumerate(sorted(set(ids)))}


def _rgb(hex_color: str) -> Color:
    return tuple(int(hex_color[i:i + 2], 16) / 255 for i in (1, 3, 5))  # type: ignore[return-value]


def _shade(color: Color, t: float) -> Color:
    """t < 0 darker (towards black), t > 0 lighter (towards white)."""
    target = 1.0 if t > 0 else 0.0
    return tuple(c + (target - c) * abs(t) for c in color)  # type: ignore[return-value]


def _shades(count: int) -> list[float]:
    """From a little darker than the hue to clearly lighter, evenly."""
    if count == 1:
        return [0.0]
    return [-0.3 + 0.8 * i / (count - 1) for i in range(count)]


class Palette:
    def __init__(self, registry: list[Impl]) -> None:
        by_language: dict[str, list[str]] = {}
        for impl in registry:
            by_language.setdefault(impl.language.name, []).append(impl.id)
        self._known: dict[str, tuple[Color, int]] = {}
        for language, ids in by_language.items():
            hue = _rgb(LANGUAGE_HUES.get(language)
                       or SPARE_HUES[zlib.crc32(language.encode()) % len(SPARE_HUES)])
            style = variant_styles(ids)
            for impl, t in zip(ids, _shades(len(ids))):
                self._known[impl] = (_shade(hue, t), style[impl])

    def _entry(self, impl: str) -> tuple[Color, int]:
        if impl in self._known:
            return self._known[impl]
        h = zlib.crc32(impl.encode())
        if (base := base_of(impl)) in self._known:
            # a variant or release (go[GOGC=off], rust-tokio@1.5.0): its
            # implementation's colour, a marker and dash other than its own
            color, style = self._known[base]
            return color, style + 1 + h % (len(LINE_STYLES) - 1)
        return _shade(_rgb(UNKNOWN_HUE), -0.3 + 0.8 * (h % 100) / 100), h % len(LINE_STYLES)

    def color(self, impl: str) -> Color:
        return self._entry(impl)[0]

    def line_style(self, impl: str) -> str | tuple:
        return LINE_STYLES[self._entry(impl)[1] % len(LINE_STYLES)]

    def hatch(self, impl: str) -> str | None:
        return HATCHES[self._entry(impl)[1] % len(HATCHES)]

    def marker(self, impl: str) -> str:
        return MARKERS[self._entry(impl)[1] % len(MARKERS)]
