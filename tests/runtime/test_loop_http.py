"""The loop over real HTTP: OllamaBackend → scripted Ollama server (a TEST DOUBLE
model on 127.0.0.1) with the real negotiator adapters and the real parsers.

The must-show (SDD P0): a model that answers with ``<tools>{…}</tools>`` in
``content`` instead of native ``tool_calls`` still gets its tool executed, sees
the result, and ends with a final answer.
"""

import json

import pytest

from tests.support.scripted_server import ScriptedServer, Turn, turn_from_callable
from utp.backends.ollama import OllamaBackend
from utp.formats import get_preset
from utp.loop import LoopLimits, Termination, ToolLoop
from utp.negotiator import negotiated_for
from utp.registry import ToolRegistry
from utp.types import Tool, ToolTier

from .doubles import Recorder

pytestmark = pytest.mark.anyio

WEATHER = Tool("get_weather", "Current weather for a city.",
               {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})
WRITE = Tool("write_file", "Write a file.", {"type": "object", "properties": {"path": {"type": "string"},
                                                                           "content": {"type": "string"}}},
             tier=ToolTier.RUN)

P0_ANSWER = '<tools>\n{"name": "get_weather", "arguments": {"city": "Tokyo"}}\n</tools>'


def build(handlers):
    registry = ToolRegistry()
    registry.register(WEATHER, handlers["get_weather"])
    registry.register(WRITE, handlers["write_file"])
    return registry


@pytest.fixture
def handlers():
    return {"get_weather": Recorder({"city": "Tokyo", "temp_c": 11, "sky": "clear"}), "write_file": Recorder("ok")}


@pytest.mark.parametrize("stream", [False, True])
async def test_p0_tools_tag_in_content_is_executed_and_fed_back(handlers, stream):
    def final_turn(body):
        # the scripted model answers from what it was actually sent back
        tool_messages = [m for m in body["messages"] if m["role"] == "tool"]
        result = json.loads(tool_messages[-1]["content"])
        return Turn(content=f"It is {result['temp_c']} °C and {result['sky']} in {result['city']}.")

    with ScriptedServer([Turn(content=P0_ANSWER), turn_from_callable(final_turn)]) as srv:
        backend = OllamaBackend(srv.url, retries=0)
        try:
            loop = ToolLoop(backend, build(handlers), negotiated_for(get_preset("native")), "qwen2.5:0.5b",
                            {"temperature": 0, "seed": 1}, LoopLimits(max_rounds=4), stream=stream)
            result = await loop.run("What's the weather in Tokyo?")
        finally:
            await backend.aclose()
        bodies = srv.chat_bodies

    assert result.termination is Termination.FINAL_ANSWER
    assert result.final_answer == "It is 11 °C and clear in Tokyo."
    assert handlers["get_weather"].calls == [{"city": "Tokyo"}]
    first, second = bodies
    assert [t["function"]["name"] for t in first["tools"]] == ["get_weather"]  # write_file is locked
    assert first["stream"] is stream and first["options"] == {"temperature": 0, "seed": 1}
    assistant = second["messages"][-2]
    assert assistant["role"] == "assistant" and assistant["tool_calls"][0]["function"]["name"] == "get_weather"
    assert second["messages"][-1]["role"] == "tool"
    call = result.transcript.to_dict()[0]["calls"][0]
    assert (call["format"], call["decision"], call["known"]) == ("hermes", "executed", True)
    assert result.transcript.rounds[0].raw_text == P0_ANSWER
    assert result.transcript.rounds[0].counters["completion_tokens"] is not None
    json.dumps(result.to_dict())


async def test_prompted_format_over_http_refuses_a_locked_tool(handlers):
    escalation = '<tool_call>\n{"name": " Write_File ", "arguments": {"path": "x", "content": "y"}}\n</tool_call>'
    with ScriptedServer([Turn(content=escalation), Turn(content="I can't write files here.")]) as srv:
        backend = OllamaBackend(srv.url, retries=0)
        try:
            loop = ToolLoop(backend, build(handlers), negotiated_for(get_preset("prompt-hermes")), "m",
                            None, LoopLimits(max_rounds=3), system_prompt="Be brief.")
            result = await loop.run("What's the weather like?")
        finally:
            await backend.aclose()
        bodies = srv.chat_bodies

    assert result.termination is Termination.FINAL_ANSWER
    assert not handlers["write_file"].calls
    call = result.transcript.to_dict()[0]["calls"][0]
    assert call["decision"] == "tier_violation" and call["result"]["executed"] is False
    assert "tools" not in bodies[0] or not bodies[0]["tools"]  # prompt format: definitions live in the prompt
    assert bodies[0]["messages"][0]["role"] == "system" and "get_weather" in bodies[0]["messages"][0]["content"]
    assert "write_file" not in bodies[0]["messages"][0]["content"]
    assert "tier_violation" in bodies[1]["messages"][-1]["content"]


async def test_http_error_ends_with_backend_error(handlers):
    with ScriptedServer([Turn.http_error(500, "runner crashed")]) as srv:
        backend = OllamaBackend(srv.url, retries=0)
        try:
            loop = ToolLoop(backend, build(handlers), negotiated_for(get_preset("native")), "m")
            result = await loop.run("weather?")
        finally:
            await backend.aclose()
    assert result.termination is Termination.BACKEND_ERROR
    assert "runner crashed" in result.error


async def test_real_fallback_switches_bundle(handlers):
    negotiated = negotiated_for(get_preset("prompt-hermes"), fallbacks=[get_preset("prompt-json")])
    broken = '<tool_call>{{{ nonsense </tool_call>'
    turns = [Turn(content=broken), Turn(content='{"name": "get_weather", "arguments": {"city": "Oslo"}}'),
             Turn(content="Oslo: 11 °C.")]
    with ScriptedServer(turns) as srv:
        backend = OllamaBackend(srv.url, retries=0)
        try:
            loop = ToolLoop(backend, build(handlers), negotiated, "m", None, LoopLimits(fallback_after=1))
            result = await loop.run("weather in Oslo")
        finally:
            await backend.aclose()
        bodies = srv.chat_bodies
    assert result.format_switches and result.format_switches[0].startswith("format switch: prompt-hermes -> prompt-json")
    assert result.termination is Termination.FINAL_ANSWER
    assert handlers["get_weather"].calls == [{"city": "Oslo"}]
    assert bodies[0]["messages"][0]["content"] != bodies[1]["messages"][0]["content"]  # new system prompt
