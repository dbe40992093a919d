"""Inline SVG charts and the heat-map colour scale, written by hand so the HTML works offline.

Charts are horizontal bars labelled directly (the format name left of its
bar, the count right of it), so no legend colour has to be matched to a
series and no two series can be confused. Axes end at a round number just
above the data, not at a fixed 100 %, so a 6 % bar is not a sliver.
Coordinates are rounded to one decimal so the same data gives the same bytes.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape

#: ColorBrewer YlGnBu (9 classes): sequential and safe for the common colour-vision deficiencies
SEQUENTIAL = ("#ffffd9", "#edf8b1", "#c7e9b4", "#7fcdbb", "#41b6c4", "#1d91c0", "#225ea8", "#253494", "#081d58")
#: a measured zero: neutral, not the scale's lightest colour, so "never worked" reads apart from "rarely"
ZERO_FILL = "#eeeeee"
#: the classes from which the cell text turns white
DARK_FROM = 5
#: bars: the recommended format, the other formats (Okabe–Ito blue and sky blue: apart in every deficiency)
EMPHASIS = "#0072B2"
NORMAL = "#56B4E9"

WIDTH = 1060
LABEL_WIDTH = 170
VALUE_WIDTH = 190
ROW = 24
BAR = 14
TOP = 34
BOTTOM = 34


@dataclass(frozen=True)
class Bar:
    """One labelled bar: ``low``/``high`` draw an interval whisker; ``text`` is printed beside it."""

    label: str
    value: float
    text: str
    low: float | None = None
    high: float | None = None
    emphasis: bool = False


def _f(x: float) -> str:
    text = f"{x:.1f}"
    return text[:-2] if text.endswith(".0") else text


def nice_max(value: float) -> float:
    """A round axis maximum at or above ``value`` (1, 2, 2.5, 5 × 10^n)."""
    if value <= 0:
        return 1.0
    exponent = math.floor(math.log10(value))
    for step in (1, 2, 2.5, 5, 10):
        candidate = step * 10**exponent
        if candidate >= value * (1 - 1e-9):
            return float(candidate)
    return float(10 ** (exponent + 1))


def rate_axis_max(rates: Sequence[float]) -> float:
    """The top of a rate axis or colour scale: a round number just above the data, never above 100 %."""
    return min(1.0, nice_max(max(rates, default=0.0)))


def heat_colour(rate: float, top: float) -> tuple[str, str]:
    """(fill, text colour) of a heat-map cell for ``rate`` on a scale ending at ``top``."""
    if rate <= 0:
        return ZERO_FILL, "#555555"
    index = 1 + min(len(SEQUENTIAL) - 2, int(rate / top * (len(SEQUENTIAL) - 1)))
    return SEQUENTIAL[index], "#ffffff" if index >= DARK_FROM else "#111111"


def _label(v: float, percent: bool) -> str:
    return f"{_f(v * 100)}%" if percent else _f(v)


def hbars(title: str, bars: Sequence[Bar], *, percent: bool, axis_label: str) -> str:
    """An ``<svg>``: one directly labelled horizontal bar per item, in the given order."""
    plot = WIDTH - LABEL_WIDTH - VALUE_WIDTH
    height = TOP + len(bars) * ROW + BOTTOM
    tops = [b.high if b.high is not None else b.value for b in bars]
    top_value = rate_axis_max(tops) if percent else nice_max(max(tops, default=0.0))

    def x(v: float) -> float:
        return LABEL_WIDTH + max(0.0, min(v, top_value)) / top_value * plot

    parts = [
        f'<svg role="img" aria-label="{escape(title)}" width="{WIDTH}" height="{height}" '
        f'viewBox="0 0 {WIDTH} {height}" font-family="sans-serif" font-size="12">',
        f"<title>{escape(title)}</title>",
        f'<text x="0" y="16" font-size="14" font-weight="bold">{escape(title)}</text>',
    ]
    axis_y = TOP + len(bars) * ROW
    for tick in range(5):
        v = top_value * tick / 4
        tx = x(v)
        parts.append(f'<line x1="{_f(tx)}" y1="{TOP - 4}" x2="{_f(tx)}" y2="{axis_y}" stroke="#dddddd"/>')
        parts.append(f'<text x="{_f(tx)}" y="{axis_y + 14}" text-anchor="middle" fill="#444444">'
                     f"{escape(_label(v, percent))}</text>")
    parts.append(f'<text x="{_f(LABEL_WIDTH + plot / 2)}" y="{axis_y + 30}" text-anchor="middle" '
                 f'fill="#444444">{escape(axis_label)}</text>')
    for i, bar in enumerate(bars):
        parts.extend(_bar_parts(bar, TOP + i * ROW, x))
    parts.append("</svg>")
    return "\n".join(parts)


def _bar_parts(bar: Bar, row_top: float, x: Callable[[float], float]) -> list[str]:
    mid = row_top + ROW / 2
    weight = ' font-weight="bold"' if bar.emphasis else ""
    parts = [f'<text x="{LABEL_WIDTH - 8}" y="{_f(mid + 4)}" text-anchor="end"{weight}>{escape(bar.label)}</text>']
    tip = f"{bar.label}: {bar.text}"
    if bar.value > 0:
        parts.append(
            f'<rect x="{LABEL_WIDTH}" y="{_f(mid - BAR / 2)}" width="{_f(x(bar.value) - LABEL_WIDTH)}" height="{BAR}" '
            f'fill="{EMPHASIS if bar.emphasis else NORMAL}"><title>{escape(tip)}</title></rect>'
        )
    if bar.low is not None and bar.high is not None:
        lo, hi = x(bar.low), x(bar.high)
        parts.append(f'<path d="M{_f(lo)} {_f(mid)}H{_f(hi)}M{_f(lo)} {_f(mid - 4)}V{_f(mid + 4)}'
                     f'M{_f(hi)} {_f(mid - 4)}V{_f(mid + 4)}" stroke="#222222" fill="none"/>')
    parts.append(f'<text x="{WIDTH - VALUE_WIDTH + 10}" y="{_f(mid + 4)}"{weight}>{escape(bar.text)}</text>')
    return parts
