"""Inline SVG bar charts, written by hand so the HTML report works offline with no libraries.

Grouped bars (one group per model, one bar per format) with optional 95%
interval whiskers. Coordinates are rounded to one decimal so the same data
gives the same bytes.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from html import escape

#: colour-blind-safe palette (Okabe–Ito plus darker tones), cycled by series index
PALETTE = (
    "#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9",
    "#F0E442", "#000000", "#7F3C8D", "#11A579", "#3969AC", "#E73F74",
)

BAR_WIDTH = 16
GROUP_GAP = 28
PLOT_HEIGHT = 200
LEFT = 56
TOP = 34
RIGHT = 16
LABEL_SPACE = 46
LEGEND_ROW = 18
LEGEND_COL = 170
MIN_WIDTH = 440
#: average glyph width at font-size 11, for fitting group labels under their bars
CHAR_WIDTH = 6.2


def _f(x: float) -> str:
    text = f"{x:.1f}"
    return text[:-2] if text.endswith(".0") else text


def fit_label(text: str, width: float) -> str:
    """Shorten a label to the space under its group (the full text stays in a tooltip)."""
    room = max(4, int(width / CHAR_WIDTH))
    return text if len(text) <= room else text[: room - 1] + "…"


def nice_max(value: float) -> float:
    """A round axis maximum at or above ``value`` (1, 2, 2.5, 5 × 10^n)."""
    if value <= 0:
        return 1.0
    exponent = math.floor(math.log10(value))
    for step in (1, 2, 2.5, 5, 10):
        candidate = step * 10**exponent
        if candidate >= value:
            return float(candidate)
    return float(10 ** (exponent + 1))


def grouped_bars(
    title: str,
    groups: Sequence[str],
    series: Sequence[str],
    values: Mapping[tuple[str, str], tuple[float, float | None, float | None]],
    *,
    percent: bool = False,
    y_label: str = "",
) -> str:
    """An ``<svg>`` element: bars for ``values[(group, series)] = (value, ci_low, ci_high)``.

    Missing pairs leave a gap; ``percent`` draws a 0–100% axis for rates in [0, 1].
    """
    n_series = max(1, len(series))
    group_width = n_series * BAR_WIDTH + GROUP_GAP
    plot_width = max(1, len(groups)) * group_width
    width = max(LEFT + plot_width + RIGHT, MIN_WIDTH)
    legend_cols = max(1, int((width - LEFT) // LEGEND_COL))
    legend_rows = math.ceil(len(series) / legend_cols) if series else 0
    height = TOP + PLOT_HEIGHT + LABEL_SPACE + legend_rows * LEGEND_ROW + 8
    top_value = 1.0 if percent else nice_max(max((v[0] for v in values.values() if v[0] is not None), default=0.0))

    def y(v: float) -> float:
        return TOP + PLOT_HEIGHT - (max(0.0, min(v, top_value)) / top_value) * PLOT_HEIGHT

    parts = [
        f'<svg role="img" aria-label="{escape(title)}" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">',
        f"<title>{escape(title)}</title>",
        f'<text x="{LEFT}" y="16" font-size="13" font-weight="bold">{escape(title)}</text>',
    ]
    for tick in range(5):
        v = top_value * tick / 4
        ty = y(v)
        label = f"{v * 100:.0f}%" if percent else _f(v)
        parts.append(f'<line x1="{LEFT}" y1="{_f(ty)}" x2="{LEFT + plot_width}" y2="{_f(ty)}" stroke="#ddd"/>')
        parts.append(f'<text x="{LEFT - 6}" y="{_f(ty + 4)}" text-anchor="end" fill="#444">{escape(label)}</text>')
    if y_label:
        parts.append(
            f'<text x="12" y="{_f(TOP + PLOT_HEIGHT / 2)}" transform="rotate(-90 12 {_f(TOP + PLOT_HEIGHT / 2)})" '
            f'text-anchor="middle" fill="#444">{escape(y_label)}</text>'
        )
    for g_index, group in enumerate(groups):
        gx = LEFT + g_index * group_width + GROUP_GAP / 2
        for s_index, name in enumerate(series):
            item = values.get((group, name))
            if item is None or item[0] is None:
                continue
            value, low, high = item
            x = gx + s_index * BAR_WIDTH
            top = y(value)
            tip = f"{group} · {name}: " + (f"{value * 100:.0f}%" if percent else _f(value))
            if low is not None and high is not None:
                tip += f" [{low * 100:.0f}–{high * 100:.0f}%]" if percent else f" [{_f(low)}–{_f(high)}]"
            parts.append(
                f'<rect x="{_f(x + 1)}" y="{_f(top)}" width="{BAR_WIDTH - 2}" height="{_f(TOP + PLOT_HEIGHT - top)}" '
                f'fill="{PALETTE[s_index % len(PALETTE)]}"><title>{escape(tip)}</title></rect>'
            )
            if low is not None and high is not None:
                cx = x + BAR_WIDTH / 2
                y_low, y_high = y(low), y(high)
                parts.append(
                    f'<path d="M{_f(cx)} {_f(y_low)}V{_f(y_high)}M{_f(cx - 4)} {_f(y_low)}H{_f(cx + 4)}'
                    f'M{_f(cx - 4)} {_f(y_high)}H{_f(cx + 4)}" stroke="#222" fill="none"/>'
                )
        label_x = gx + n_series * BAR_WIDTH / 2
        parts.append(
            f'<text x="{_f(label_x)}" y="{TOP + PLOT_HEIGHT + 16}" text-anchor="middle">'
            f"<title>{escape(group)}</title>{escape(fit_label(group, group_width))}</text>"
        )
    parts.append(
        f'<line x1="{LEFT}" y1="{TOP + PLOT_HEIGHT}" x2="{LEFT + plot_width}" y2="{TOP + PLOT_HEIGHT}" stroke="#444"/>'
    )
    legend_top = TOP + PLOT_HEIGHT + LABEL_SPACE
    for s_index, name in enumerate(series):
        row, col = divmod(s_index, legend_cols)
        lx = LEFT + col * LEGEND_COL
        ly = legend_top + row * LEGEND_ROW
        parts.append(f'<rect x="{lx}" y="{ly - 9}" width="10" height="10" fill="{PALETTE[s_index % len(PALETTE)]}"/>')
        parts.append(f'<text x="{lx + 14}" y="{ly}">{escape(name)}</text>')
    parts.append("</svg>")
    return "\n".join(parts)
