"""Benchmarks for the per-call and per-round overhead UTP adds (``make bench``)."""

import asyncio

import pytest

from utp.loop import LoopLimits, ToolLoop
from utp.registry import ToolRegistry
from utp.types import Tool, ToolCall
from utp.validation import compile_schema, validate_arguments

from .doubles import FakeNegotiated, ScriptedBackend, reply

pytestmark = pytest.mark.bench

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"},
                                           "units": {"enum": ["c", "f"]}}, "required": ["city"]}


def registry():
    reg = ToolRegistry()
    reg.register(Tool("get_weather", "", SCHEMA), lambda city, days=1, units="c": {"t": 11})
    return reg


def test_bench_check_valid_call(benchmark):
    reg = registry()
    decision = benchmark(reg.check, ToolCall("get_weather", {"city": "Oslo", "days": 2}))
    assert decision.allowed


def test_bench_validate_with_coercion(benchmark):
    validator = compile_schema(SCHEMA)
    outcome = benchmark(validate_arguments, validator, {"city": "Oslo", "days": "2"})
    assert outcome.arguments["days"] == 2


def test_bench_loop_two_rounds_in_process(benchmark):
    reg = registry()

    def run_once():
        backend = ScriptedBackend([reply("", [{"name": "get_weather", "arguments": {"city": "Oslo"}}]), reply("done")])
        loop = ToolLoop(backend, reg, FakeNegotiated(), "m", None, LoopLimits())
        return asyncio.run(loop.run("weather"))

    result = benchmark(run_once)
    assert result.final_answer == "done"
