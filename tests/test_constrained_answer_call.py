"""constrained-call: the text answer written as a call to a reserved ``answer`` tool.

Checked against the real jsonschema validator, read back through the ordinary parser and the
constrained result adapter, and run through the real ToolLoop over real HTTP against the
scripted model server (a TEST DOUBLE on 127.0.0.1).
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.scripted_server import ScriptedServer, Turn
from utp import parse_response
from utp.adapters.constrained import ConstrainedDefinitionAdapter, ConstrainedResultAdapter
from utp.backends.ollama import OllamaBackend
from utp.constrained import ANSWER_TOOL_NAMES, answer_call_text, answer_tool_name, follows_schema, reply_schema, unenforced_reply
from utp.formats import PRESETS, get_preset
from utp.loop import Termination, ToolLoop
from utp.negotiator import negotiated_for
from utp.registry import ToolRegistry
from utp.types import Tool

pytestmark = pytest.mark.anyio

WEATHER = Tool("get_weather", "Current weather for a city.",
               {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})
TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=20)


def answer_reply(text: str, name: str = "answer") -> str:
    return json.dumps({"name": name, "arguments": {"text": text}}, ensure_ascii=False)


@settings(deadline=None)
@given(TEXT)
def test_an_answer_call_validates_and_reads_back_as_plain_content(text):
    schema = reply_schema([WEATHER], answer="call")
    reply = answer_reply(text)
    assert follows_schema(json.loads(reply), schema)
    assert unenforced_reply(schema, reply) is None
    parsed = ConstrainedResultAdapter(answer="call").read_answer(parse_response(reply, tools=[WEATHER]))
    assert (parsed.tool_calls, parsed.content, parsed.diagnostics) == ([], text, [])


def test_the_key_shaped_answer_is_not_an_answer_under_the_call_shape():
    schema = reply_schema([WEATHER], answer="call")
    assert not follows_schema({"answer": "hi"}, schema)
    assert not follows_schema(json.loads(answer_reply("hi")), reply_schema([WEATHER]))


def test_real_calls_still_validate_and_stay_calls():
    schema = reply_schema([WEATHER], answer="call")
    call = '{"name": "get_weather", "arguments": {"city": "Oslo"}}'
    assert follows_schema(json.loads(call), schema)
    parsed = ConstrainedResultAdapter(answer="call").read_answer(parse_response(call, tools=[WEATHER]))
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("get_weather", {"city": "Oslo"})]


def test_an_answer_cut_off_by_the_token_limit_keeps_what_was_said():
    cut = '{"name": "answer", "arguments": {"text": "It is 11 degrees in Tok'
    assert answer_call_text(cut) == "It is 11 degrees in Tok"
    parsed = ConstrainedResultAdapter(answer="call").read_answer(parse_response(cut, tools=[WEATHER]))
    assert (parsed.tool_calls, parsed.content, parsed.diagnostics) == ([], "It is 11 degrees in Tok", [])


def test_a_tool_really_named_answer_keeps_its_name_and_the_answer_tool_moves_aside():
    real = Tool("answer", "Post an answer to the forum.", {"type": "object", "properties": {"text": {"type": "string"}}})
    assert answer_tool_name([real]) == ANSWER_TOOL_NAMES[1]
    schema = reply_schema([real], answer="call")
    names = [b["properties"]["name"]["const"] for b in schema["anyOf"] if "properties" in b]
    assert names == ["answer", ANSWER_TOOL_NAMES[1]]
    parsed = ConstrainedResultAdapter(answer="call").read_answer(parse_response(answer_reply("posted"), tools=[real]))
    assert [c.name for c in parsed.tool_calls] == ["answer"]  # a registered tool's call is a call


def test_the_prompt_shows_the_answer_call_and_the_key_preset_is_unchanged():
    call_prompt = ConstrainedDefinitionAdapter(answer="call").format_system_prompt("", [WEATHER])
    key_prompt = ConstrainedDefinitionAdapter().format_system_prompt("", [WEATHER])
    assert '{"name": "answer", "arguments": {"text": "your answer in plain words"}}' in call_prompt
    assert '{"answer"' not in call_prompt
    assert key_prompt.count('{"answer": ...}') == 2 and '{"answer": "your answer in plain words"}' in key_prompt


def test_the_preset_is_constrained_and_distinct():
    assert PRESETS["constrained-call"].is_constrained and PRESETS["constrained-json"].is_constrained
    assert not PRESETS["fewshot-json"].is_constrained
    assert PRESETS["constrained-call"] != PRESETS["constrained-json"]


async def test_the_loop_runs_the_call_then_ends_on_the_answer_call_over_real_http():
    ran: list[dict] = []
    registry = ToolRegistry()
    registry.register(WEATHER, lambda **kw: ran.append(kw) or {"temp_c": 11})
    turns = [Turn(content='{"name": "get_weather", "arguments": {"city": "Oslo"}}'), Turn(content=answer_reply("11 degrees in Oslo."))]
    with ScriptedServer(turns) as srv:
        backend = OllamaBackend(srv.url, retries=0)
        try:
            result = await ToolLoop(backend, registry, negotiated_for(get_preset("constrained-call")), "m", None).run("weather in Oslo?")
        finally:
            await backend.aclose()
        bodies = srv.chat_bodies
    assert result.termination is Termination.FINAL_ANSWER
    assert result.final_answer == "11 degrees in Oslo."
    assert ran == [{"city": "Oslo"}]
    assert all(body["format"] == reply_schema([WEATHER], answer="call") for body in bodies)


async def test_restraint_under_the_call_shape_executes_nothing():
    registry = ToolRegistry()
    registry.register(WEATHER, lambda **kw: pytest.fail("no tool should run"))
    with ScriptedServer([Turn(content=answer_reply("Canberra."))]) as srv:
        backend = OllamaBackend(srv.url, retries=0)
        try:
            result = await ToolLoop(backend, registry, negotiated_for(get_preset("constrained-call")), "m", None).run("capital of Australia?")
        finally:
            await backend.aclose()
    assert (result.termination, result.final_answer) == (Termination.FINAL_ANSWER, "Canberra.")
    assert result.transcript.to_dict()[0]["calls"] == []
