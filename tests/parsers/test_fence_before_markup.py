"""A fence's backticks right before call markup are no code span.

One or two backticks before a trigger show syntax (`` `<tool_call>` ``); a
model that opens a fence and writes its call markup on the same line
(```` ```<｜DSML｜invoke ```` after a stray empty fence) is calling.
"""

from __future__ import annotations

import pytest

from utp.parsers import parse_response

from .conftest import assert_every_cut_matches

TOOLS = [{"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}]
INVOKE = '<｜DSML｜invoke name="get_weather"><｜DSML｜parameter name="city" string="true">Boston</｜DSML｜parameter></｜DSML｜invoke>'


@pytest.mark.parametrize("before", ["Calling.\n\n```json\n\n```", "、、、\n```", "```"])
def test_markup_after_a_fences_backticks_is_read(before: str) -> None:
    parsed = parse_response(before + INVOKE, tools=TOOLS)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("get_weather", {"city": "Boston"})]


@pytest.mark.parametrize("quote", ["`", "``"])
def test_markup_in_a_code_span_is_shown_not_called(quote: str) -> None:
    text = f"Write {quote}{INVOKE}{quote} to call it."
    assert parse_response(text, tools=TOOLS).tool_calls == []


def test_streams_agree_at_every_cut() -> None:
    assert_every_cut_matches("Calling.\n```" + INVOKE + "\nDone.", TOOLS, 4)
