"""Number and text formatting shared by the markdown and HTML reports.

One place decides how a rate, an interval or a missing figure reads, so the
same run shows the same numbers in every report format.
"""

from __future__ import annotations

import math
from typing import Any

NOT_MEASURED = "not measured"
DASH = "—"


def present(value: Any) -> bool:
    return value is not None and not (isinstance(value, float) and math.isnan(value))


def pct(value: Any, digits: int = 0) -> str:
    return f"{value * 100:.{digits}f}%" if present(value) else DASH


def rate_ci(rate: Any, low: Any, high: Any) -> str:
    """``83% [64–93%]``: the estimate with its 95% interval."""
    if not present(rate):
        return DASH
    return f"{rate * 100:.0f}% [{low * 100:.0f}–{high * 100:.0f}%]"


#: a per-call rate over fewer calls than this is shown with a warning (reports and screen agree)
FEW = 5


def counted_rate(successes: Any, total: Any, low: Any = None, high: Any = None) -> str:
    """``12/116 (10% [6–17%])``: the count first, so no percentage stands without its denominator.

    With fewer than :data:`FEW` in the denominator the rate is flagged: one
    call read out of one is not "100 % parse success".
    """
    if not present(total) or int(total) == 0:
        return f"{DASH} (0 measured)"
    n, k = int(total), int(successes or 0)
    rate = k / n
    text = f"{k}/{n} ({rate * 100:.0f}%"
    if present(low) and present(high):
        text += f" [{low * 100:.0f}–{high * 100:.0f}%]"
    text += ")"
    if n < FEW:
        text += " too few to judge"
    return text


def number(value: Any, digits: int = 1, missing: str = DASH) -> str:
    return f"{value:.{digits}f}" if present(value) else missing


def truncate_middle(text: str, limit: int = 1200) -> tuple[str, bool]:
    """Keep the start (where a call opens) and the end (where it breaks) of long text."""
    if len(text) <= limit:
        return text, False
    head = int(limit * 0.7)
    tail = limit - head
    omitted = len(text) - head - tail
    return f"{text[:head]}\n… [{omitted} characters omitted] …\n{text[-tail:]}", True


def fenced(text: str, info: str = "text") -> str:
    """A fenced block whose fence is longer than any backtick run inside (raw model text often has ```)."""
    longest = run = 0
    for ch in text:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{text}\n{fence}"


def md_cell(value: Any) -> str:
    """Table-cell-safe text: pipes escaped, newlines flattened."""
    return str(value).replace("|", "\\|").replace("\r", " ").replace("\n", " ")


def md_table(headers: list[str], rows: list[list[Any]]) -> str:
    lines = ["| " + " | ".join(md_cell(h) for h in headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines.extend("| " + " | ".join(md_cell(c) for c in row) + " |" for row in rows)
    return "\n".join(lines)
