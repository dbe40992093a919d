import json

import pytest

from utp.backends.base import BackendError, BackendErrorKind
from utp.formats import get_preset
from utp.loop import LoopLimits, LoopResult, Termination, ToolLoop
from utp.registry import ToolRegistry
from utp.types import Tool, ToolTier

from .doubles import (
    FakeNegotiated,
    NamesDefinitionAdapter,
    Recorder,
    ScriptedBackend,
    ToolMessageResultAdapter,
    double_format,
    reply,
)

pytestmark = pytest.mark.anyio

WEATHER = Tool("get_weather", "Weather.", {"type": "object", "properties": {"city": {"type": "string"}},
                                           "required": ["city"]})
READ = Tool("read_file", "Read.", {"type": "object", "properties": {"path": {"type": "string"}}}, tier=ToolTier.WALK)
WRITE = Tool("write_file", "Write.", {"type": "object", "properties": {"path": {"type": "string"}}}, tier=ToolTier.RUN)


@pytest.fixture
def handlers():
    return {"get_weather": Recorder({"city": "Tokyo", "temp_c": 11}), "read_file": Recorder("file text"),
            "write_file": Recorder("written")}


@pytest.fixture
def registry(handlers):
    reg = ToolRegistry()
    for tool in (WEATHER, READ, WRITE):
        reg.register(tool, handlers[tool.name])
    return reg


def make_loop(backend, registry, negotiated=None, **limits):
    stream = limits.pop("stream", False)
    return ToolLoop(backend, registry, negotiated or FakeNegotiated(), "scripted-model", {"temperature": 0},
                    LoopLimits(**limits), system_prompt="You are helpful.", stream=stream, format_builder=double_format)


def call(name, **arguments):
    return {"name": name, "arguments": arguments}


def assert_serialisable(result: LoopResult):
    text = json.dumps(result.to_dict())
    assert json.loads(text)["termination"] == result.termination.value


async def test_call_then_final_answer(registry, handlers):
    backend = ScriptedBackend([reply("", [call("get_weather", city="Tokyo")]), reply("It is 11 C in Tokyo.")])
    result = await make_loop(backend, registry).run("What's the weather in Tokyo?")
    assert result.termination is Termination.FINAL_ANSWER
    assert result.final_answer == "It is 11 C in Tokyo."
    assert handlers["get_weather"].calls == [{"city": "Tokyo"}]
    second = backend.requests[1]
    assert second.messages[0] == {"role": "system", "content": "You are helpful.\nTools: get_weather"}
    assert [m["role"] for m in second.messages] == ["system", "user", "assistant", "tool"]
    assert json.loads(second.messages[-1]["content"]) == {"city": "Tokyo", "temp_c": 11}
    assert second.tools == [{"type": "function", "function": {"name": "get_weather", "parameters": WEATHER.parameters}}]
    assert second.options == {"temperature": 0} and second.model == "scripted-model"
    rounds = result.transcript.to_dict()
    assert [r["index"] for r in rounds] == [0, 1]
    for key in ("index", "content", "thinking", "raw_text", "calls", "diagnostics", "counters", "notes", "request", "raw_response"):
        assert key in rounds[0]
    assert rounds[0]["calls"][0]["decision"] == "executed"
    assert rounds[0]["calls"][0]["result"]["result"] == {"city": "Tokyo", "temp_c": 11}
    assert rounds[0]["counters"]["prompt_tokens"] == 10
    assert rounds[0]["request"]["messages"][-1] == {"role": "user", "content": "What's the weather in Tokyo?"}
    assert rounds[0]["messages_count"] == 2  # snapshot, not the growing list
    assert result.messages[-1] == {"role": "assistant", "content": "It is 11 C in Tokyo.", "tool_calls": []}
    assert result.tokens == 30
    assert_serialisable(result)


async def test_max_rounds(registry):
    backend = ScriptedBackend([reply("", [call("get_weather", city=f"c{i}")]) for i in range(3)])
    result = await make_loop(backend, registry, max_rounds=3).run("weather everywhere")
    assert result.termination is Termination.MAX_ROUNDS and result.final_answer is None
    assert len(backend.requests) == 3
    assert "max_rounds (3) reached" in result.transcript.rounds[-1].notes[-1]
    assert_serialisable(result)


async def test_repeated_call_is_stopped_without_running(registry, handlers):
    backend = ScriptedBackend([reply("", [call("get_weather", city="Oslo")]) for _ in range(3)])
    result = await make_loop(backend, registry, max_repeats=2).run("weather")
    assert result.termination is Termination.REPEATED_CALL
    assert len(handlers["get_weather"].calls) == 2
    last = result.transcript.to_dict()[-1]["calls"][0]
    assert last["decision"] == "duplicate_stopped" and last["result"]["executed"] is False
    assert_serialisable(result)


async def test_token_budget(registry):
    backend = ScriptedBackend([reply("", [call("get_weather", city=f"c{i}")], 12, 3) for i in range(5)])
    result = await make_loop(backend, registry, token_budget=20).run("weather")
    assert result.termination is Termination.TOKEN_BUDGET
    assert len(backend.requests) == 2  # 15 tokens <= 20 allows a second request; 30 > 20 stops
    assert result.transcript.rounds[-1].notes == ["token budget exceeded: 30 > 20; no further request"]


async def test_completion_marker(registry, handlers):
    backend = ScriptedBackend([reply("Wrote it. TASK COMPLETE", [call("get_weather", city="Rome")])])
    result = await make_loop(backend, registry, completion_marker="task complete").run("weather in Rome")
    assert result.termination is Termination.COMPLETION_MARKER
    assert result.final_answer == "Wrote it. TASK COMPLETE"
    assert handlers["get_weather"].calls == [{"city": "Rome"}]  # the turn's calls still ran


async def test_backend_error_is_recorded_not_raised(registry):
    backend = ScriptedBackend([reply("", [call("get_weather", city="Oslo")]),
                               BackendError(BackendErrorKind.SERVER_ERROR, "model runner crashed", status=500)])
    result = await make_loop(backend, registry).run("weather")
    assert result.termination is Termination.BACKEND_ERROR
    assert result.error == "server_error (HTTP 500): model runner crashed"
    assert result.transcript.rounds[-1].error == result.error
    assert_serialisable(result)


async def test_unreadable_call_gets_one_correction_then_parse_failure(registry, handlers):
    backend = ScriptedBackend([reply('CALL {"name": "get_weather", "arguments": {'), reply("CALL {still broken")])
    result = await make_loop(backend, registry).run("weather")
    assert result.termination is Termination.PARSE_FAILURE
    assert "invalid JSON in call" in result.error
    correction = backend.requests[1].messages[-1]
    assert correction["role"] == "user" and "could not be read" in correction["content"]
    assert "invalid JSON in call" in correction["content"]
    notes = result.transcript.to_dict()[0]["notes"]
    assert any("unreadable call-like output" in n for n in notes)
    assert not handlers["get_weather"].calls


async def test_model_recovers_after_correction(registry, handlers):
    backend = ScriptedBackend([reply("CALL {oops"), reply('CALL {"name": "get_weather", "arguments": {"city": "Lima"}}'),
                               reply("Sunny in Lima.")])
    result = await make_loop(backend, registry).run("weather")
    assert result.termination is Termination.FINAL_ANSWER and result.final_answer == "Sunny in Lima."
    assert handlers["get_weather"].calls == [{"city": "Lima"}]


async def test_adapter_parse_error_hook_is_used(registry):
    class HookedResults(ToolMessageResultAdapter):
        def format_parse_error(self, diagnostics):
            return {"role": "tool", "content": f"PARSE ERROR: {diagnostics[0].reason}"}

    backend = ScriptedBackend([reply("CALL {x"), reply("fine, no tools then")])
    negotiated = FakeNegotiated(result_adapter=HookedResults())
    result = await make_loop(backend, registry, negotiated).run("weather")
    assert backend.requests[1].messages[-1] == {"role": "tool", "content": "PARSE ERROR: invalid JSON in call"}
    assert result.termination is Termination.FINAL_ANSWER


async def test_runtime_format_fallback(registry):
    fallback = get_preset("prompt-json")
    negotiated = FakeNegotiated(bundle=get_preset("prompt-hermes"), fallbacks=[fallback])
    backend = ScriptedBackend([reply("CALL {x"), reply("CALL {y"), reply("CALL {z"), reply("CALL {w")])
    result = await make_loop(backend, registry, negotiated, fallback_after=2, parse_failure_retries=5,
                             max_rounds=4).run("weather")
    assert result.format_switches == ["format switch: prompt-hermes -> prompt/json (2 unreadable round(s) in a row; model wrote json)"]
    rounds = result.transcript.to_dict()
    assert rounds[1]["notes"][-2] == result.format_switches[0]
    assert rounds[1]["format"]["label"] == "prompt-hermes"
    assert rounds[2]["format"]["prompt_family"] == "json"
    assert any("no fallback format is left" in n for n in rounds[3]["notes"])
    assert result.termination is Termination.MAX_ROUNDS


async def test_fallback_resets_the_parse_failure_count(registry, handlers):
    negotiated = FakeNegotiated(bundle=get_preset("prompt-hermes"), fallbacks=[get_preset("prompt-json")])
    backend = ScriptedBackend([reply("CALL {x"), reply("CALL {y"),
                               reply('CALL {"name": "get_weather", "arguments": {"city": "Quito"}}'), reply("Done.")])
    result = await make_loop(backend, registry, negotiated, fallback_after=2, parse_failure_retries=1).run("weather")
    assert result.termination is Termination.FINAL_ANSWER
    assert handlers["get_weather"].calls == [{"city": "Quito"}]


async def test_intent_unlocks_and_offers_more_tools(registry):
    backend = ScriptedBackend([reply("ok")])
    result = await make_loop(backend, registry).run("Please read setup.py")
    assert result.tier_start is ToolTier.CRAWL and result.tier_after_intent is ToolTier.WALK
    assert [t["function"]["name"] for t in backend.requests[0].tools] == ["get_weather", "read_file"]
    assert result.transcript.rounds[0].notes[0] == "intent: tier CRAWL -> WALK (matched 'read')"


async def test_out_of_tier_call_is_refused_and_fed_back(registry, handlers):
    backend = ScriptedBackend([reply("", [call("write_file", path="x")]), reply("I cannot write files.")])
    result = await make_loop(backend, registry).run("weather please")
    record = result.transcript.to_dict()[0]["calls"][0]
    assert record["decision"] == "tier_violation" and record["result"]["executed"] is False
    assert not handlers["write_file"].calls
    fed_back = json.loads(backend.requests[1].messages[-1]["content"])
    assert fed_back["kind"] == "tier_violation"
    assert "write_file" not in [t["function"]["name"] for t in backend.requests[0].tools]


async def test_demonstrations_go_before_the_user_turn_and_history_is_kept(registry):
    class Demonstrating(NamesDefinitionAdapter):
        def demonstrations(self, tools):
            return [{"role": "user", "content": "demo q"}, {"role": "assistant", "content": "demo a"}]

    backend = ScriptedBackend([reply("Hello again.")])
    history = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    negotiated = FakeNegotiated(definition_adapter=Demonstrating())
    result = await make_loop(backend, registry, negotiated, stream=True).run("and now?", history=history)
    sent = backend.requests[0]
    assert [m["content"] for m in sent.messages[1:]] == ["demo q", "demo a", "hi", "hello", "and now?"]
    assert sent.stream is True
    assert result.messages[:3] == [*history, {"role": "user", "content": "and now?"}]


async def test_loop_object_is_reusable_and_repeat_counts_reset(registry, handlers):
    backend = ScriptedBackend([reply("", [call("get_weather", city="A")]), reply("one"),
                               reply("", [call("get_weather", city="A")]), reply("two")])
    loop = make_loop(backend, registry, max_repeats=1)
    first = await loop.run("weather")
    second = await loop.run("weather again", history=first.messages)
    assert (first.final_answer, second.final_answer) == ("one", "two")
    assert len(handlers["get_weather"].calls) == 2


def test_limits_are_validated():
    with pytest.raises(ValueError, match="max_rounds must be at least 1.*fallback_after"):
        LoopLimits(max_rounds=0, fallback_after=0)
