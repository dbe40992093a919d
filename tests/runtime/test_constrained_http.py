"""constrained-json over real HTTP: the reply schema in each server's own field, rebuilt per
round from the tools the tier offers, calls read and checked like any other, and a server
that will not (or did not) enforce the schema ends the run as structured_output_unsupported.

The server is the scripted model server (a TEST DOUBLE on 127.0.0.1); backends, loop,
adapters, parsers, registry and the jsonschema validator are the real ones.
"""

import json

import pytest

from tests.support.scripted_server import ScriptedServer, Turn, turn_from_callable
from utp.backends.ollama import OllamaBackend
from utp.backends.openai_compat import RESPONSE_SCHEMA_NAME, OpenAICompatBackend
from utp.constrained import reply_schema
from utp.formats import get_preset
from utp.loop import LoopLimits, Termination, ToolLoop
from utp.negotiator import negotiated_for
from utp.pathguard import PathGuard
from utp.registry import ToolRegistry
from utp.types import Tool, ToolTier

from .doubles import Recorder

pytestmark = pytest.mark.anyio

WEATHER = Tool("get_weather", "Current weather for a city.",
               {"type": "object", "properties": {"city": {"type": "string", "minLength": 2}}, "required": ["city"]})
READ = Tool("read_file", "Read a file.", {"type": "object", "properties": {"path": {"type": "string", "format": "path"}}, "required": ["path"]},
            tier=ToolTier.WALK)
WRITE = Tool("write_file", "Write a file.",
             {"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}}}, tier=ToolTier.RUN)

CALL = '{"name": "get_weather", "arguments": {"city": "Oslo"}}'
ANSWER = '{"answer": "It is 11 degrees in Oslo."}'


@pytest.fixture
def handlers():
    return {"get_weather": Recorder({"temp_c": 11}), "read_file": Recorder("text"), "write_file": Recorder("ok")}


def registry(handlers, **kw) -> ToolRegistry:
    reg = ToolRegistry(**kw)
    for tool in (WEATHER, READ, WRITE):
        reg.register(tool, handlers[tool.name])
    return reg


async def run_loop(backend, reg, user="weather in Oslo?", preset="constrained-json", **limits):
    loop = ToolLoop(backend, reg, negotiated_for(get_preset(preset)), "m", {"temperature": 0}, LoopLimits(**limits))
    try:
        return await loop.run(user)
    finally:
        await backend.aclose()


@pytest.mark.parametrize("stream", [False, True])
async def test_ollama_gets_the_schema_in_format_and_the_answer_comes_back_as_prose(handlers, stream):
    with ScriptedServer([Turn(content=CALL), Turn(content=ANSWER)]) as srv:
        backend = OllamaBackend(srv.url, retries=0)
        loop = ToolLoop(backend, registry(handlers), negotiated_for(get_preset("constrained-json")), "m", None, stream=stream)
        result = await loop.run("weather in Oslo?")
        await backend.aclose()
        bodies = srv.chat_bodies
    assert result.termination is Termination.FINAL_ANSWER
    assert result.final_answer == "It is 11 degrees in Oslo."
    assert handlers["get_weather"].calls == [{"city": "Oslo"}]
    for body in bodies:
        assert "tools" not in body
        assert body["format"] == reply_schema([WEATHER])  # crawl tier: read/write locked, so not offered
    assert '{"answer": ' in bodies[0]["messages"][0]["content"]  # the instructions name the answer branch
    call = result.transcript.to_dict()[0]["calls"][0]
    assert (call["format"], call["decision"]) == ("json", "executed")


async def test_openai_compatible_servers_get_a_json_schema_response_format(handlers):
    with ScriptedServer([Turn(content=CALL), Turn(content=ANSWER)]) as srv:
        result = await run_loop(OpenAICompatBackend(srv.url, retries=0), registry(handlers))
        bodies = srv.chat_bodies
    assert result.final_answer == "It is 11 degrees in Oslo."
    assert handlers["get_weather"].calls == [{"city": "Oslo"}]
    for body in bodies:
        assert "tools" not in body and "format" not in body
        assert body["response_format"] == {
            "type": "json_schema", "json_schema": {"name": RESPONSE_SCHEMA_NAME, "schema": reply_schema([WEATHER])}
        }


async def test_the_schema_is_rebuilt_each_round_from_what_the_tier_offers(handlers):
    reg = registry(handlers, tier="walk")
    with ScriptedServer([Turn(content=ANSWER), Turn(content=ANSWER)]) as srv:
        await run_loop(OllamaBackend(srv.url, retries=0), reg)
        reg.unlock("run")
        await run_loop(OllamaBackend(srv.url, retries=0), reg)
        walk, run = (body["format"] for body in srv.chat_bodies)
    assert walk == reply_schema([WEATHER, READ])
    assert run == reply_schema([WEATHER, READ, WRITE])


async def test_free_form_presets_send_no_schema(handlers):
    with ScriptedServer([Turn(content="Oslo: 11 degrees.")]) as srv:
        await run_loop(OllamaBackend(srv.url, retries=0), registry(handlers), preset="prompt-json")
        assert "format" not in srv.chat_bodies[0]


async def test_registry_checks_still_run_on_constrained_calls(handlers, tmp_path):
    """The grammar forces the shape; the path guard and the full argument schema still decide."""
    escape = '[{"name": "read_file", "arguments": {"path": "../../etc/passwd"}}, {"name": "get_weather", "arguments": {"city": "O"}}]'
    reg = registry(handlers, tier="walk", path_guard=PathGuard([tmp_path]))
    with ScriptedServer([Turn(content=escape), Turn(content=ANSWER)]) as srv:
        result = await run_loop(OllamaBackend(srv.url, retries=0), reg)
    decisions = [c["decision"] for c in result.transcript.to_dict()[0]["calls"]]
    assert decisions == ["path_violation", "invalid_arguments"]  # minLength: a grammar may not enforce it
    assert handlers["read_file"].calls == [] and handlers["get_weather"].calls == []
    assert result.termination is Termination.FINAL_ANSWER


@pytest.mark.parametrize(
    "turn",
    [
        Turn.http_error(400, "JSON schema conversion failed:\nUnrecognized schema: {\"const\": 1}"),  # llama-server
        Turn.http_error(500, 'response_format type must be one of "text" or "json_object", but got: json_schema'),
        Turn.http_error(400, '"m" does not support structured output with this format'),  # the embedded engine
        Turn(content="Sure! The weather in Oslo is sunny."),  # a server that ignored the schema
        Turn(content='{"name": "write_file", "arguments": {"path": "x"}}'),  # a tool this round did not offer
    ],
    ids=["conversion-failed", "old-llama-server", "embedded", "ignored-prose", "ignored-shape"],
)
@pytest.mark.parametrize("backend_cls", [OllamaBackend, OpenAICompatBackend])
async def test_a_server_that_does_not_enforce_the_schema_is_a_clear_unsupported_outcome(handlers, turn, backend_cls):
    with ScriptedServer([turn]) as srv:
        result = await run_loop(backend_cls(srv.url, retries=0), registry(handlers))
    assert result.termination is Termination.BACKEND_ERROR
    assert result.error.startswith("structured_output_unsupported")
    assert result.final_answer is None
    assert not any(h.calls for h in handlers.values())  # nothing was read free-form and run


async def test_a_reply_cut_off_by_the_token_limit_is_not_called_unsupported(handlers):
    cut = Turn(content='{"name": "get_weather", "arguments": {"city": "Os', done_reason="length")
    with ScriptedServer([cut, Turn(content=CALL), Turn(content=ANSWER)]) as srv:
        result = await run_loop(OllamaBackend(srv.url, retries=0), registry(handlers))
        retry = srv.chat_bodies[1]["messages"][-1]["content"]
    assert result.termination is Termination.FINAL_ANSWER
    assert '{"name": "get_weather", "arguments": {"city": "Paris"}}' in retry  # told the syntax again
    assert handlers["get_weather"].calls == [{"city": "Oslo"}]


async def test_the_runtime_fallback_can_switch_to_constrained_json(handlers):
    negotiated = negotiated_for(get_preset("prompt-hermes"), fallbacks=[get_preset("constrained-json")])
    with ScriptedServer([Turn(content="<tool_call>{{{ nonsense </tool_call>"), Turn(content=CALL), Turn(content=ANSWER)]) as srv:
        backend = OllamaBackend(srv.url, retries=0)
        loop = ToolLoop(backend, registry(handlers), negotiated, "m", None, LoopLimits(fallback_after=1))
        result = await loop.run("weather in Oslo?")
        await backend.aclose()
        bodies = srv.chat_bodies
    assert result.format_switches[0].startswith("format switch: prompt-hermes -> constrained-json")
    assert "format" not in bodies[0] and bodies[1]["format"] == reply_schema([WEATHER])
    assert result.final_answer == "It is 11 degrees in Oslo."
    assert handlers["get_weather"].calls == [{"city": "Oslo"}]


async def test_the_instructions_and_schema_stay_in_step_with_what_the_model_answers(handlers):
    """A scripted model that answers from the schema it was sent: the first offered tool, by its const."""
    def from_schema(body):
        branch = body["format"]["anyOf"][0]
        return Turn(content=json.dumps({"name": branch["properties"]["name"]["const"], "arguments": {"city": "Oslo"}}))

    with ScriptedServer([turn_from_callable(from_schema), Turn(content=ANSWER)]) as srv:
        result = await run_loop(OllamaBackend(srv.url, retries=0), registry(handlers))
    assert handlers["get_weather"].calls == [{"city": "Oslo"}]
    assert result.termination is Termination.FINAL_ANSWER
