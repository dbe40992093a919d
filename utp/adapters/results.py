"""Pairing calls with their results, shared by every result adapter.

The loop hands over calls and results as two lists. Most of the time they are
in the same order, but a caller that ran calls concurrently may collect
results in completion order; when every result names its call by id, the ids
decide, so a result is never reported under the wrong call.
"""

from __future__ import annotations

from collections.abc import Sequence

from utp.types import ToolCall, ToolResult


def pair_results(calls: Sequence[ToolCall], results: Sequence[ToolResult]) -> list[tuple[ToolCall, ToolResult]]:
    """``(call, result)`` pairs in call order; a count mismatch is a caller bug."""
    if len(calls) != len(results):
        raise ValueError(
            f"format_results got {len(calls)} call(s) but {len(results)} result(s); "
            "each call needs exactly one result"
        )
    by_id = {r.call_id: r for r in results if r.call_id}
    if len(by_id) == len(results) and all(c.id in by_id for c in calls):
        return [(call, by_id[call.id]) for call in calls if call.id is not None]
    return list(zip(calls, results))


def error_line(result: ToolResult) -> str:
    """A refusal or failure as a model should read it in plain text."""
    kind = result.error_kind.value if result.error_kind else "error"
    return f"ERROR ({kind}): {result.error}"
