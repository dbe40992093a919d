"""Native ``tool_calls`` in every shape servers and SDKs produce."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from utp.parsers import parse_response
from utp.parsers.native import parse_native_calls
from utp.types import DiagnosticKind


def test_ollama_object_arguments() -> None:
    response = {"message": {"role": "assistant", "content": "", "tool_calls": [{"function": {"index": 0, "name": "get_weather", "arguments": {"city": "Paris"}}}]}, "done_reason": "stop"}
    parsed = parse_response(response)
    assert [(c.name, c.arguments, c.format) for c in parsed.tool_calls] == [("get_weather", {"city": "Paris"}, "native")]
    assert parsed.finish_reason == "tool_calls"


def test_openai_string_arguments_and_ids() -> None:
    response = {"choices": [{"finish_reason": "tool_calls", "message": {"content": None, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "a", "arguments": '{"x": 1}'}},
        {"id": "call_2", "type": "function", "function": {"name": "b", "arguments": ""}},
    ]}}]}
    parsed = parse_response(response)
    assert [(c.name, c.arguments, c.id) for c in parsed.tool_calls] == [("a", {"x": 1}, "call_1"), ("b", {}, "call_2")]


def test_double_encoded_and_malformed_string_arguments_are_repaired() -> None:
    calls, diagnostics = parse_native_calls([
        {"function": {"name": "a", "arguments": json.dumps(json.dumps({"x": 1}))}},
        {"function": {"name": "b", "arguments": "{'y': True,}"}},
    ])
    assert [(c.name, c.arguments) for c in calls] == [("a", {"x": 1}), ("b", {"y": True})]
    assert all(c.repairs for c in calls)
    assert [d.kind for d in diagnostics] == [DiagnosticKind.REPAIRED, DiagnosticKind.REPAIRED]


def test_plain_dicts_objects_and_anthropic_input() -> None:
    items = [
        {"name": "plain", "arguments": {"a": 1}},
        SimpleNamespace(id="o1", function=SimpleNamespace(name="obj", arguments='{"b": 2}')),
        {"type": "tool_use", "id": "toolu_1", "name": "anth", "input": {"c": 3}},
    ]
    calls, diagnostics = parse_native_calls(items)
    assert [(c.name, c.arguments, c.id) for c in calls] == [("plain", {"a": 1}, None), ("obj", {"b": 2}, "o1"), ("anth", {"c": 3}, "toolu_1")]
    assert diagnostics == []


def test_sdk_object_response() -> None:
    message = SimpleNamespace(content="", tool_calls=[SimpleNamespace(id="x", function=SimpleNamespace(name="f", arguments="{}"))])
    response = SimpleNamespace(choices=[SimpleNamespace(message=message, finish_reason="tool_calls")])
    assert [c.name for c in parse_response(response).tool_calls] == ["f"]


def test_openai_legacy_function_call() -> None:
    response = {"choices": [{"message": {"content": None, "function_call": {"name": "f", "arguments": '{"a": 1}'}}}]}
    assert [(c.name, c.arguments) for c in parse_response(response).tool_calls] == [("f", {"a": 1})]


@pytest.mark.parametrize(
    "item",
    [{"function": {"arguments": "{}"}}, {"function": {"name": "", "arguments": "{}"}}, {"function": {"name": "f", "arguments": "[1, 2"}}, 42, None],
)
def test_unreadable_native_items_become_diagnostics(item: object) -> None:
    calls, diagnostics = parse_native_calls([item])
    assert calls == []
    assert [d.kind for d in diagnostics] == [DiagnosticKind.UNPARSEABLE]


def test_an_object_whose_attribute_raises_is_a_diagnostic() -> None:
    class Exploding:
        @property
        def function(self) -> object:
            raise RuntimeError("boom")

    calls, diagnostics = parse_native_calls([Exploding()])
    assert calls == [] and "boom" in diagnostics[0].reason
