"""The scripted server (a test double) itself: what other engineers' tests rely on."""

from __future__ import annotations

import json

import httpx
import pytest

from tests.support.scripted_server import ModelCard, ScriptedServer, Turn, closed_port_url, turn_from_callable


def test_turns_are_consumed_in_order_and_requests_recorded() -> None:
    with ScriptedServer([Turn(content="one"), Turn(content="two")]) as srv:
        first = httpx.post(f"{srv.url}/api/chat", json={"model": "m", "messages": [], "stream": False}).json()
        second = httpx.post(f"{srv.url}/v1/chat/completions", json={"model": "m", "messages": []}).json()
        leftover = httpx.post(f"{srv.url}/api/chat", json={"model": "m", "messages": [], "stream": False})
    assert first["message"]["content"] == "one" and first["done"] is True
    assert second["choices"][0]["message"]["content"] == "two"
    assert leftover.status_code == 500 and "no turns left" in leftover.json()["error"]
    assert [r.path for r in srv.requests] == ["/api/chat", "/v1/chat/completions", "/api/chat"]
    assert srv.chat_bodies[0] == {"model": "m", "messages": [], "stream": False}


def test_default_turn_answers_when_the_script_is_exhausted() -> None:
    with ScriptedServer(default_turn=Turn(content="always")) as srv:
        replies = [httpx.post(f"{srv.url}/api/chat", json={"model": "m", "messages": [], "stream": False}).json() for _ in range(3)]
    assert [r["message"]["content"] for r in replies] == ["always"] * 3


def test_ollama_stream_splits_content_and_ends_with_counters() -> None:
    with ScriptedServer([Turn(content="abcdefghij", counters={"eval_count": 99})], chunk_size=3) as srv:
        lines = httpx.post(f"{srv.url}/api/chat", json={"model": "m", "messages": []}).text.splitlines()
    chunks = [json.loads(line) for line in lines]
    assert [c["message"]["content"] for c in chunks[:-1]] == ["abc", "def", "ghi", "j"]
    assert chunks[-1]["done"] is True and chunks[-1]["eval_count"] == 99


def test_sse_stream_fragments_arguments_and_ends_with_done() -> None:
    turn = Turn(tool_calls=[{"name": "f", "arguments": {"key": "value"}}])
    with ScriptedServer([turn], chunk_size=4) as srv:
        text = httpx.post(f"{srv.url}/v1/chat/completions", json={"model": "m", "messages": [], "stream": True}).text
    events = [e.removeprefix("data: ") for e in text.split("\n\n") if e]
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    fragments = [tc["function"]["arguments"] for c in chunks for tc in c["choices"][0]["delta"].get("tool_calls", [])]
    assert len(fragments) > 2 and "".join(fragments) == '{"key":"value"}'
    assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"
    assert not any("usage" in c for c in chunks)  # not asked for


def test_models_mapping_gates_names() -> None:
    with ScriptedServer(models={"a:latest": ModelCard(digest="d" * 64)}) as srv:
        shown = httpx.post(f"{srv.url}/api/show", json={"model": "a"})
        missing = httpx.post(f"{srv.url}/api/chat", json={"model": "b", "messages": []})
        tags = httpx.get(f"{srv.url}/api/tags").json()
    assert shown.status_code == 200 and shown.json()["capabilities"] == ["completion", "tools"]
    assert missing.status_code == 404 and missing.json() == {"error": "model 'b' not found"}
    assert tags["models"][0]["digest"] == "d" * 64


def test_callable_turn_and_unknown_route() -> None:
    with ScriptedServer([turn_from_callable(lambda body: Turn(content=body["model"].upper()))]) as srv:
        reply = httpx.post(f"{srv.url}/api/chat", json={"model": "echo", "messages": [], "stream": False}).json()
        nowhere = httpx.get(f"{srv.url}/api/nothing")
    assert reply["message"]["content"] == "ECHO"
    assert nowhere.status_code == 404


def test_closed_port_refuses() -> None:
    with pytest.raises(httpx.ConnectError):
        httpx.get(closed_port_url() + "/api/version", timeout=2)
