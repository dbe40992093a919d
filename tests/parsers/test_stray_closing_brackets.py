"""A call list with a closing bracket that closes nothing: small models' BFCL replies.

Sources (transcribed outside the repository, see docs/accuracy.md): LuoZheng2002/translate's BFCL
results, Qwen3-0.6B under vLLM in prompt mode (``[f(a=[…]))]``, ``[f(k={…}])]``).
"""

from __future__ import annotations

import pytest

from utp.parsers import parse_response
from utp.parsers.pythoncalls import bracket_end
from utp.types import DiagnosticKind, Tool

from .conftest import assert_every_cut_matches

STATS = Tool(
    "basketball.player_stats.get",
    parameters={"type": "object", "properties": {"player_name": {"type": "string"}, "stats_fields": {"type": "array"}}},
)
SOLAR = Tool("solarFarm", parameters={"type": "object", "properties": {"potential": {"type": "object"}}})
WEATHER = Tool("get_weather", parameters={"type": "object", "properties": {"city": {"type": "string"}}})
TOOLS = [STATS, SOLAR, WEATHER]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            '[basketball.player_stats.get(player_name="LeBron James", stats_fields=["points per game", "assists"]))]',
            [("basketball.player_stats.get", {"player_name": "LeBron James", "stats_fields": ["points per game", "assists"]})],
        ),
        ('[solarFarm(potential={"coordinates": [43.6, -79.3], "panelArea": 80000}])]', [("solarFarm", {"potential": {"coordinates": [43.6, -79.3], "panelArea": 80000}})]),
    ],
)
def test_a_closing_bracket_that_closes_nothing_is_dropped(text: str, expected: list) -> None:
    result = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments) for c in result.tool_calls] == expected
    assert all("closes nothing" in "; ".join(c.repairs) for c in result.tool_calls)
    assert result.content == ""
    assert_every_cut_matches(text, TOOLS, step=11)


def test_a_stray_closer_inside_the_list_is_not_guessed_at() -> None:
    """Between two calls the count of brackets already closed the list: what follows is not read into it."""
    result = parse_response('[get_weather(city="Paris")), get_weather(city="Oslo")]', tools=TOOLS)
    assert result.tool_calls == []
    assert [d.kind for d in result.diagnostics] == [DiagnosticKind.UNPARSEABLE]


def test_the_list_ends_at_the_bracket_its_opener_waits_for() -> None:
    text = '[f(a=1))] and more text]'
    assert bracket_end(text, 0, 1000) == len("[f(a=1))]")
    assert bracket_end('[f("])")]', 0, 1000) == len('[f("])")]')  # brackets in strings close nothing
    assert bracket_end("[f(a=[1, 2)]", 0, 1000) == -1  # the inner list never closed: nothing ends it


def test_prose_with_a_stray_parenthesis_stays_prose() -> None:
    text = "The options are (a) weather, b) time and [c) news]."
    assert parse_response(text, tools=TOOLS).tool_calls == []


# --- Mistral Small 3.2's calls with [TOOL_CALLS] and [ARGS] stripped; GLM-4's name-and-object pairs ------------

SPOTIFY = Tool("spotify_play", parameters={"type": "object", "properties": {"artist": {"type": "string"}, "duration": {"type": "integer"}}})
RESEARCH = Tool("research", parameters={"type": "object", "properties": {"query": {"type": "string"}}})


def test_calls_glued_one_after_another_with_their_tokens_stripped() -> None:
    """aaronwu's BFCL results: Mistral-Small-3.2-24B served with special tokens skipped."""
    text = 'spotify_play{"artist": "Taylor Swift", "duration": 20}spotify_play{"artist": "Maroon 5", "duration": 15}'
    result = parse_response(text, tools=[SPOTIFY])
    assert [(c.name, c.arguments) for c in result.tool_calls] == [
        ("spotify_play", {"artist": "Taylor Swift", "duration": 20}),
        ("spotify_play", {"artist": "Maroon 5", "duration": 15}),
    ]
    assert result.content == ""
    assert_every_cut_matches(text, [SPOTIFY], step=9)


def test_a_glued_name_no_tool_has_ends_nothing() -> None:
    assert parse_response('spotify_play{"artist": "A"}unknown{"artist": "B"}', tools=[SPOTIFY]).tool_calls == []


def test_glm4_name_and_object_pairs_one_after_another() -> None:
    """tangefly/LMInfer's tests: GLM-4-0414 writes each call as its name's line, then its arguments."""
    text = 'get_weather\n{"city": "北京"}\nresearch\n{"query": "q"}'
    result = parse_response(text, tools=[WEATHER, RESEARCH])
    assert [(c.name, c.arguments) for c in result.tool_calls] == [("get_weather", {"city": "北京"}), ("research", {"query": "q"})]
    assert_every_cut_matches(text, [WEATHER, RESEARCH], step=7)
    assert parse_response('get_weather\n{"city": "北京"}\nThat is the call.', tools=[WEATHER, RESEARCH]).tool_calls == []
