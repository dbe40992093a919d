"""Call markup written without its special tokens, or bent by the model, read from each format's definition.

* MiniMax-M3's argument elements with its marker token dropped, inside MiniMax's
  ``<minimax:tool_call>`` block: ``<invoke name="f"><city>Oslo</city></invoke>``
  (nested elements are objects, a repeated key a list, leaves typed by the schema).

Every shape has its negative (prose that mentions it is no call) and streams to the
one-shot reading.
"""

from __future__ import annotations

import pytest

from utp.parsers import parse_response
from utp.types import Tool

from .conftest import assert_every_cut_matches, assert_stream_matches_under

LOOKUP = Tool("lookup", parameters={"type": "object", "properties": {
    "term": {"type": "string"}, "max_hits": {"type": "integer"}, "fuzzy": {"type": "boolean"},
    "where": {"type": "object", "properties": {"lang": {"type": "string"}, "year": {"type": "integer"}}},
    "tags": {"type": "array", "items": {"type": "string"}}}})
FORECAST = Tool("forecast", parameters={"type": "object", "properties": {"town": {"type": "string"}}})
TOOLS = [LOOKUP, FORECAST]


def calls(text: str, tools: list[Tool] | None = TOOLS) -> list[tuple[str, dict]]:
    return [(c.name, c.arguments) for c in parse_response(text, tools=tools).tool_calls]


UNMARKED_M3 = [
    ('<minimax:tool_call><invoke name="lookup"><term>tide tables</term><max_hits>4</max_hits><fuzzy>false</fuzzy></invoke></minimax:tool_call>',
     [("lookup", {"term": "tide tables", "max_hits": 4, "fuzzy": False})]),
    ('<minimax:tool_call>\n<invoke name="lookup">\n<where><lang>nl</lang><year>1999</year></where>\n<tags>a</tags><tags>b</tags>\n</invoke>\n</minimax:tool_call>',
     [("lookup", {"where": {"lang": "nl", "year": 1999}, "tags": ["a", "b"]})]),
    ('Checking. <minimax:tool_call><invoke name="forecast"><town>Oslo</town></invoke><invoke name="lookup"><term>x</term></invoke></minimax:tool_call> done',
     [("forecast", {"town": "Oslo"}), ("lookup", {"term": "x"})]),
]


@pytest.mark.parametrize(("text", "want"), UNMARKED_M3)
def test_minimax_m3_elements_without_the_marker_token_are_arguments(text: str, want: list) -> None:
    assert calls(text) == want
    assert_stream_matches_under(text, TOOLS, 3)


def test_minimax_m3_elements_stream_at_every_cut() -> None:
    assert_every_cut_matches(UNMARKED_M3[1][0], TOOLS, 9)


def test_prose_about_invoke_elements_is_no_call() -> None:
    text = 'In MiniMax output an argument looks like <city>Oslo</city> inside an invoke tag; write <invoke name="..."> yourself.'
    assert calls(text) == []
