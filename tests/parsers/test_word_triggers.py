"""Triggers that are words start a call only where a word starts.

An offered tool's name (``get_weather(``), a namespace (``functions.``,
``default_api.``), ``functools[``, FunctionGemma's bare ``call:`` and Kimi
K2's stripped ``functions.f:0`` line are identifiers: glued to the word before
them (``forget_weather(``, ``recall:``) they are part of another word. The
families that say so (:attr:`CallFamily.word_triggers`) have the scan skip
such places, one-shot and streaming alike, so a stream no longer holds back
the ``d`` that ends "read" as the possible start of ``default_api.``. Harmony
(``…done.assistantcommentary`` once its tokens are stripped), ReAct
(``xAction:``) and GigaChat (``Okfunction call<|role_sep|>``) are read glued
to the text before them, as before.
"""

from __future__ import annotations

import pytest

from utp.parsers import family_names, get_family, parse_response
from utp.parsers.triggerscan import WORD_CHARACTER
from utp.parsers.streaming import ContentDelta, StreamParser
from utp.types import Tool

from .conftest import assert_every_cut_matches

WEATHER = Tool("get_weather", parameters={"type": "object", "properties": {"city": {"type": "string"}}})
TOOLS = [WEATHER]

#: each a call at a word start; the same text glued to a word before it is no call
WORD_CALLS = [
    ('get_weather(city="Paris")', "pythonic"),
    ('functions.get_weather({"city": "Paris"})', "pythonic"),
    ('default_api.get_weather(city="Paris")', "pythonic"),
    ('functools[{"name": "get_weather", "arguments": {"city": "Paris"}}]', "functools"),
    ("call:get_weather{city:<escape>Paris<escape>}", "functiongemma"),
    ('functions.get_weather:0{"city": "Paris"}', "kimi_k2"),
    ('get_weather\n{"city": "Paris"}', "glm"),
]


def _glued(text: str) -> str:
    """The call text with a word glued before its trigger."""
    return "x" + text


@pytest.mark.parametrize(("text", "family"), WORD_CALLS, ids=[f for _, f in WORD_CALLS])
def test_a_word_trigger_is_a_call_where_a_word_starts(text: str, family: str) -> None:
    parsed = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments, c.format) for c in parsed.tool_calls] == [("get_weather", {"city": "Paris"}, family)]


@pytest.mark.parametrize(("text", "family"), WORD_CALLS, ids=[f for _, f in WORD_CALLS])
def test_a_word_trigger_glued_to_the_word_before_it_is_no_call(text: str, family: str) -> None:
    glued = _glued(text)
    parsed = parse_response(glued, tools=TOOLS)
    assert parsed.tool_calls == [] and parsed.content == glued
    assert_every_cut_matches(glued, TOOLS, step=7)


@pytest.mark.parametrize(
    ("text", "family"),
    [
        ('Done.assistantcommentary to=functions.get_weather json<|message|>{"city": "Paris"}', "harmony"),
        ('Thought: I should look.Action: get_weather\nAction Input: {"city": "Paris"}', "react"),
        ('Okfunction call<|role_sep|>\n{"name": "get_weather", "arguments": {"city": "Paris"}}', "gigachat"),
    ],
    ids=["harmony", "react", "gigachat"],
)
def test_families_whose_calls_may_be_glued_to_text_still_read_them(text: str, family: str) -> None:
    parsed = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments, c.format) for c in parsed.tool_calls] == [("get_weather", {"city": "Paris"}, family)]
    assert_every_cut_matches(text, TOOLS, step=9)


def test_only_families_that_say_so_have_word_triggers() -> None:
    """The thirteen that opt in; a family glued to text by its template must not (its calls would be lost):
    harmony's stripped headers and mistral's ``[TOOL_CALLS]`` stand anywhere; only harmony's bare recipient
    (``to=f {…}``) and mistral's stripped ``f[ARGS]`` are words, and react's ``ACTION:``
    (its ``Action:`` stands anywhere, as before)."""
    opted = sorted(name for name in family_names() if get_family(name).word_triggers)
    assert opted == [
        "functiongemma", "functools", "gigachat", "glm", "harmony", "history_display", "keyword_command", "kimi_k2", "minimax_stripped", "mistral", "named_json",
        "pythonic", "react",
    ]


def _content(events: list) -> str:
    return "".join(e.text for e in events if type(e) is ContentDelta)


def test_a_stream_does_not_hold_back_the_end_of_a_word() -> None:
    """ "rea|d" cannot be the start of ``default_api.`` or ``get_weather(``: out at once."""
    parser = StreamParser(tools=TOOLS)
    assert _content(parser.feed("I will read")) == "I will read"
    assert _content(parser.feed(" the log")) == " the log"


def test_a_stream_still_holds_back_a_word_that_may_begin_a_call() -> None:
    parser = StreamParser(tools=TOOLS)
    assert _content(parser.feed("Checking.\nget_wea")) == "Checking."
    events = parser.feed('ther(city="Paris")') + parser.close()
    assert [e.call.name for e in events if hasattr(e, "call")] == ["get_weather"]


@pytest.mark.parametrize("before", ["", " ", "\n", "(", "[", ".", "é", "_", "7"])
def test_the_word_test_is_python_regex_word_characters(before: str) -> None:
    """The scan's lookbehind and the stream's held-suffix check agree on what a word character is."""
    text = f'{before}get_weather(city="Paris")'
    glued = before != "" and WORD_CHARACTER.match(before) is not None
    assert assert_every_cut_matches(text, TOOLS, step=5) is None
    if glued:
        assert parse_response(text, tools=TOOLS).tool_calls == []
