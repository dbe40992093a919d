"""Numbers longer than Python's int/str digit limit (4,300 digits by default).

Python refuses to convert such an integer between text and ``int`` and raises
``ValueError``; a model can write one anywhere a number goes. None of it may
escape validation, ``canonical_json``, the parsers or the loop, and a huge
integer must never be silently rounded to ``inf``: it is reported, naming the
argument, as a number too long to read.
"""

from __future__ import annotations

import json
import sys

import pytest

from tests.support.scripted_server import ScriptedServer, Turn
from utp.backends.ollama import OllamaBackend
from utp.formats import get_preset
from utp.loop import LoopLimits, ToolLoop
from utp.negotiator import negotiated_for
from utp.registry import ToolRegistry
from utp.types import ErrorKind, Tool, ToolCall, canonical_json
from utp.validation import validate_arguments

from .doubles import Recorder

LIMIT = sys.get_int_max_str_digits() or 4300
F = Tool("f", "Takes an integer.", {"type": "object", "properties": {"i": {"type": "integer"}}, "required": ["i"]})
G = Tool("g", "Takes a number.", {"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"]})


def _registry(handler: Recorder) -> ToolRegistry:
    registry = ToolRegistry()
    registry.register(F, handler)
    registry.register(G, handler)
    return registry


def test_check_reports_a_digit_string_past_the_limit_naming_the_argument():
    decision = _registry(Recorder("ok")).check(ToolCall("f", {"i": "1" * (LIMIT + 1)}))
    assert not decision.allowed and decision.error_kind is ErrorKind.INVALID_ARGUMENTS
    assert f"i: a number of {LIMIT + 1} digits" in decision.message


@pytest.mark.parametrize("schema_type", ["integer", "number"])
def test_a_python_int_past_the_limit_is_reported_not_raised(schema_type):
    outcome = validate_arguments({"type": "object", "properties": {"i": {"type": schema_type}}}, {"i": 10**LIMIT})
    assert outcome.errors == [f"i: a number of {LIMIT + 1} digits is longer than the {LIMIT} digits a number may have"]
    json.dumps(outcome.arguments)  # what is kept can be written to a transcript


def test_a_python_int_past_the_limit_where_a_string_goes_is_its_exact_digits():
    outcome = validate_arguments({"type": "object", "properties": {"s": {"type": "string"}}}, {"s": -(10**LIMIT)})
    assert outcome.ok and outcome.arguments["s"] == "-1" + "0" * LIMIT


def test_canonical_json_writes_a_huge_int_as_its_exact_digits():
    assert canonical_json({"i": [10**LIMIT]}) == '{"i":["1' + "0" * LIMIT + '"]}'
    assert ToolCall("f", {"i": 10**LIMIT}).canonical_key() != ToolCall("f", {"i": 10**LIMIT + 1}).canonical_key()


def test_a_huge_json_integer_never_becomes_inf():
    from utp.parsers.jsonrepair import loads_lenient

    value, repairs = loads_lenient('{"i": ' + "1" * 5000 + "}")
    assert value["i"] != float("inf") and str(value["i"]) == "1" * 5000
    outcome = validate_arguments(F.parameters, value)
    assert outcome.errors == ["i: a number of 5000 digits is longer than the " f"{LIMIT} digits a number may have"]


LOOP_OUTPUTS = {
    "hermes digit string": '<tool_call>{"name": "f", "arguments": {"i": "' + "1" * (LIMIT + 1) + '"}}</tool_call>',
    "hermes json integer": '<tool_call>{"name": "f", "arguments": {"i": ' + "1" * 5000 + "}}</tool_call>",
    "pythonic hex": "[f(i=0x" + "f" * 3600 + ")]",
    "pythonic binary": "[f(i=0b" + "1" * 14400 + ")]",
    "pythonic octal": "[f(i=0o" + "7" * 4800 + ")]",
    "llama python tag": "<|python_tag|>f(i=0x" + "f" * 3600 + ")",
}


@pytest.mark.anyio
@pytest.mark.parametrize("output", list(LOOP_OUTPUTS.values()), ids=list(LOOP_OUTPUTS))
async def test_the_loop_reports_a_huge_number_to_the_model(output):
    handler = Recorder("ok")
    with ScriptedServer([Turn(content=output), Turn(content="Done.")]) as srv:
        backend = OllamaBackend(srv.url, retries=0)
        try:
            loop = ToolLoop(backend, _registry(handler), negotiated_for(get_preset("native")), "m", {}, LoopLimits(max_rounds=3))
            result = await loop.run("go")
        finally:
            await backend.aclose()
    assert handler.calls == []
    json.dumps(result.to_dict())
    tool_message = [m for m in srv.chat_bodies[1]["messages"] if m["role"] == "tool"]
    assert tool_message and "i: a number of" in tool_message[-1]["content"]


@pytest.mark.anyio
@pytest.mark.parametrize("stream", [False, True])
async def test_a_huge_integer_in_a_servers_native_call_is_reported_to_the_model(stream):
    """Valid JSON from the server (Ollama re-emits the model's number): read, then reported, not 'not JSON'."""
    call = '{"message": {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "f", "arguments": {"i": %s}}}]}, "done": true}'
    handler = Recorder("ok")
    first = Turn(raw_chunks=[call % ("1" * 5000)]) if stream else Turn(raw_body=call % ("1" * 5000))
    with ScriptedServer([first, Turn(content="Done.")]) as srv:
        backend = OllamaBackend(srv.url, retries=0)
        try:
            loop = ToolLoop(backend, _registry(handler), negotiated_for(get_preset("native")), "m", {}, LoopLimits(max_rounds=3), stream=stream)
            result = await loop.run("go")
        finally:
            await backend.aclose()
    assert handler.calls == [] and result.final_answer == "Done."
    tool_message = [m for m in srv.chat_bodies[1]["messages"] if m["role"] == "tool"]
    assert f"i: a number of 5000 digits is longer than the {LIMIT} digits" in tool_message[-1]["content"]
