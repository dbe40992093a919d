"""Fenced calls: a closing fence indented with the block, a body glued to the opener, and floods of
fence openers read in linear time."""

from __future__ import annotations

import time

import pytest

from tests.parsers.conftest import assert_every_cut_matches
from utp.parsers import parse_response
from utp.types import Tool

TOOLS = [Tool("get_weather", parameters={"type": "object", "properties": {"location": {"type": "string"}}})]
CALL = '{"name": "get_weather", "arguments": {"location": "Boston"}}'


@pytest.mark.parametrize(
    "text",
    [
        f"```json\n        {CALL}\n        ```",  # a block indented as a whole, closer included
        f"```xml\n    {CALL}\n    ```",  # a wrong label, the whole answer, calling an offered tool
        f"Sure.\n\n```json\n  {CALL}\n  ```\n\nDone.",
    ],
)
def test_an_indented_closing_fence_closes_the_block(text: str) -> None:
    parsed = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("get_weather", {"location": "Boston"})]
    assert parsed.diagnostics == []  # no "text after the JSON value" to ignore: the fence ended the body
    assert_every_cut_matches(text, TOOLS, step=9)


def test_an_indented_fence_line_inside_prose_after_the_block_is_not_its_closer() -> None:
    """The first closing line ends the block; a later indented fence is another block's, not this one's."""
    text = f"```json\n{CALL}\n```\nthen\n    ```\nplain\n    ```"
    assert [c.name for c in parse_response(text, tools=TOOLS).tool_calls] == ["get_weather"]


@pytest.mark.parametrize(
    "text",
    [
        f"```json{CALL}```",  # AutoGPT's replies: the body on the opener's line, the closer glued to it
        f"```{CALL}```",
        f"Sure.\n```json{CALL}\n```\n",
    ],
)
def test_a_body_glued_to_the_opener_is_read(text: str) -> None:
    parsed = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("get_weather", {"location": "Boston"})]
    assert "`" not in parsed.content
    assert_every_cut_matches(text, TOOLS, step=9)


@pytest.mark.parametrize(
    "text",
    [
        f"Write ```json{CALL}``` in your reply, then explain.",  # inline code in a sentence
        '```json{"zip": "02134"}```',  # JSON, but no call (its keys fit no offered tool)
        f"```python{CALL}```",  # another label glued: not this shape
    ],
)
def test_a_glued_fence_that_is_no_call_stays_prose(text: str) -> None:
    assert parse_response(text, tools=TOOLS).tool_calls == []


def _cpu(text: str) -> float:
    best = float("inf")
    for _ in range(3):
        start = time.process_time()
        parse_response(text, tools=TOOLS)
        best = min(best, time.process_time() - start)
    return max(best, 1e-4)


@pytest.mark.parametrize("unit", ["```json\n{\n", "```json\n{\n  ```\n"])
def test_floods_of_fence_openers_cost_linear_work(unit: str) -> None:
    """Each opener once asked whether only blanks followed it by copying the rest of the text:
    quadratic (23x for 4x the text at this size). Four times the text must cost about four times."""
    small = unit * (40000 // len(unit))
    _cpu(small)  # warm the caches
    ratio = _cpu(small * 4) / _cpu(small)
    assert ratio < 10, f"{unit!r}: {ratio:.1f}x for 4x the text"
