"""Call markup left in a final answer (a "leak"), and parser crashes noted in a round.

A final answer that still holds ``<tool_call>`` means the model meant a call
that was never read, so a leak counts as a meant call and fails the turn.
Only the openers that can only be markup count: the triggers of the
auto-enabled families that contain a bracket or a bar.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from typing import Any

#: triggers that also begin ordinary prose or only end a turn, or that label a tool's result as well as a
#: call (``<tool_name>`` in the ``<function_results>`` a model echoes): not evidence of call markup
_NOT_LEAK_TRIGGERS = frozenset({"{", "[", "(", "<", "```", "<|end|>", "<|eot_id|>", "<|return|>", "<tool_name>", "<function_name>"})
#: call markup is bracketed; word or prompt triggers ("Action:", ">>>") occur in normal answers
_MARKUP_CHAR = re.compile(r"[<\[{|｜]")

#: a round note or diagnostic saying a parser raised (families must never raise)
#: (the composite reports a family that raised as "<family>: parser error <Exc>: ...")
PARSER_CRASH = re.compile(
    r"\bparser error\b|\b(pars\w*|famil\w*)\b.*\b(raised|crash\w*|exception|traceback)\b", re.IGNORECASE | re.DOTALL
)


def leak_triggers() -> list[str]:
    """Literal call openers of the auto-enabled families that can only be markup.

    Left out: opt-in families (a bash code block is a fine answer), bare
    brackets and fences, turn-ending tokens, and triggers without a bracket
    or bar (``Action:``, ``>>>``), which appear in ordinary prose. A
    trigger's trailing blank stays: ``<function`` alone is a prefix of prose
    tags and of an answer cut off mid-word.
    """
    from utp.parsers.base import registered_families

    return list(_markup_triggers(tuple(registered_families().values())))


@functools.lru_cache(maxsize=8)
def _markup_triggers(families: tuple[Any, ...]) -> tuple[str, ...]:
    """The triggers of these families that can only be markup (cached: every run of a report asks)."""
    found: set[str] = set()
    for family in families:
        if not family.in_auto:
            continue
        for trigger in family.triggers:
            stripped = trigger.strip()
            if len(stripped) > 1 and stripped not in _NOT_LEAK_TRIGGERS and _MARKUP_CHAR.search(stripped):
                found.add(trigger)  # kept whole: the blank in "<function " is what makes it markup
    return tuple(sorted(found))


def find_leak(text: str | None, triggers: Iterable[str] | None = None) -> str | None:
    """The first call-markup trigger present in a final answer, if any."""
    if not text:
        return None
    for trigger in leak_triggers() if triggers is None else triggers:
        if trigger and trigger in text:
            return trigger
    return None


__all__ = ["PARSER_CRASH", "find_leak", "leak_triggers"]
