"""Whether a line of an answer stands inside a Markdown code fence.

A fence's body is the fenced family's to judge: call JSON shown as a sample in a
fence must not turn into calls one line at a time when another reader meets its
lines. Only the nearby text is looked at, with C-level searches, so a reader may
ask at every line of a flood.
"""

from __future__ import annotations

import re

#: how far back a line of JSON looks for the fence it may stand in (a fence holds a few calls)
_FENCE_LOOKBACK = 2048
#: a line that cannot be part of a JSON value (its first character starts no JSON token)
_NON_JSON_LINE = re.compile(r"\n[ \t]*+[^\s{}\[\]\",\d\-]")


def inside_fence(text: str, line_start: int) -> bool:
    """Does the line after ``line_start`` (the index of the newline before it) stand in a code fence?

    The nearest fence line above, with nothing but lines of JSON between (a second call
    object in a sample fence is the fence's, not a call on its own line), opens a fence when
    it has a label (a closing fence has none), or is bare with no label-bearing fence above
    it for it to close. A fence line right above the line is taken to open one either way.
    Each step is one C-level search bounded by the lookback, so a flood of JSON lines stays linear.
    """
    floor = max(0, line_start - _FENCE_LOOKBACK)
    fence = text.rfind("```", floor, line_start)
    if fence < 0:
        return False
    head = text.rfind("\n", floor, fence) + 1
    if (head == 0 and floor > 0) or text[head:fence].strip(" \t"):
        return False  # backticks inside a line, or a line longer than the lookback: not a fence line
    line_end = text.find("\n", fence, line_start + 1)
    if line_end == line_start:
        return True
    if _NON_JSON_LINE.search(text, line_end, line_start) is not None:
        return False
    if text[fence + 3 : line_end].strip():
        return True
    above = text.rfind("```", floor, head)
    if above < 0:
        return True
    above_end = text.find("\n", above, head)
    return not text[above + 3 : above_end].strip()
