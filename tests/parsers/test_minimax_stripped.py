"""MiniMax's XML calls with every ``<`` and ``</`` lost (MLX quants: exo#1882, mlx-lm#1145).

The markup's structure is all there (``invoke name="f">``, ``parameter name="k">v``,
``parameter>``, ``invoke>``), so it is read as the invokes it was, but only
where nothing else can be meant: where the answer's calls are, for offered
tools, every block closed.
"""

from __future__ import annotations

import pytest

from utp.parsers import parse_response
from utp.types import Tool

from .conftest import assert_every_cut_matches

TOOLS = [
    Tool("get_weather", parameters={"type": "object", "properties": {"location": {"type": "string"}, "days": {"type": "integer"}}}),
    Tool("bash", parameters={"type": "object", "properties": {"command": {"type": "string"}}}),
]

#: real: the "actual output" of both reports, word for word
REPORTED = 'invoke name="get_weather">\nparameter name="location">Parisparameter>\ninvoke>'


def _calls(text: str, tools: list[Tool] | None = TOOLS) -> list[tuple]:
    return [(c.name, c.arguments) for c in parse_response(text, tools=tools).tool_calls]


def test_the_reported_output_is_the_call_it_was() -> None:
    parsed = parse_response(REPORTED, tools=TOOLS)
    assert [(c.name, c.arguments, c.format) for c in parsed.tool_calls] == [("get_weather", {"location": "Paris"}, "minimax_stripped")]
    assert parsed.content == "" and parsed.diagnostics == []


def test_several_invokes_after_a_lead_in_typed_values_and_the_blocks_closer() -> None:
    text = (
        "Checking both:\n"
        'invoke name="get_weather">\nparameter name="location">Paris, FRparameter>\nparameter name="days">3parameter>\ninvoke>\n'
        "invoke name='bash'>\nparameter name='command'>ls -la\n  | headparameter>\ninvoke>\n"
        "minimax:tool_call>"
    )
    parsed = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [
        ("get_weather", {"location": "Paris, FR", "days": 3}),
        ("bash", {"command": "ls -la\n  | head"}),
    ]
    assert parsed.content == "Checking both:"


@pytest.mark.parametrize(
    "text",
    [
        REPORTED.replace("get_weather", "send_email"),  # no tool of that name
        "To call it, write invoke name=\"get_weather\"> and then the parameters.",  # inside a sentence
        'invoke name="get_weather">\nparameter name="location">Paris',  # never closed
        'invoke name="get_weather">\nThe location is Paris.\ninvoke>',  # not the structure
        "Sure.\n" + REPORTED + "\nMore words after it.",  # not where the answer's calls are
        "Sure.\n" + REPORTED,
    ],
)
def test_anything_else_stays_prose(text: str) -> None:
    parsed = parse_response(text, tools=TOOLS)
    assert parsed.tool_calls == [] and parsed.content == text


def test_without_tools_it_stays_prose() -> None:
    assert _calls(REPORTED, tools=None) == []


def test_the_intact_markup_is_still_claude_style_xml() -> None:
    text = '<minimax:tool_call>\n<invoke name="get_weather">\n<parameter name="location">Paris</parameter>\n</invoke>\n</minimax:tool_call>'
    assert [(c.name, c.format) for c in parse_response(text, tools=TOOLS).tool_calls] == [("get_weather", "anthropic_xml")]


@pytest.mark.parametrize("text", [REPORTED, "Here it is:\n" + REPORTED, "Sure.\n" + REPORTED + "\nDone.", 'invoke name="get_weather">\nparameter name="location">Paris'])
def test_streaming_any_cut_matches_one_shot(text: str) -> None:
    assert_every_cut_matches(text, TOOLS, step=7)
