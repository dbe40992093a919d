"""The OpenAI adapters reproduce what real clients sent to real servers.

``recorded_tool_exchanges.jsonl`` holds requests a real client (llama-stack's
test harness) sent to Ollama's and vLLM's ``/v1`` endpoints. Reading each
recorded assistant turn with the parser and writing it back with the adapters
must give the same messages: same ids, same names, same arguments, same
result messages, and the same ``tools`` array for the same definitions.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from utp.adapters import OpenAIDefinitionAdapter, OpenAIResultAdapter
from utp.parsers import parse_response
from utp.types import ToolResult

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus" / "recorded_tool_exchanges.jsonl"


def _records():
    if not CORPUS.exists():
        return []
    return [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]


RECORDS = _records()
WITH_RESULTS = [r for r in RECORDS if any(m.get("role") == "tool" for m in r["request"].get("messages", []))]
WITH_TOOLS = [r for r in RECORDS if r["request"].get("tools")]


def _id(record):
    return f"{record['model']}:{record['source'].get('path', '')[-40:]}"


def test_corpus_is_present():
    assert len(WITH_RESULTS) >= 30, f"expected the recorded exchanges at {CORPUS}"


@pytest.mark.parametrize("record", WITH_RESULTS, ids=_id)
def test_history_round_trips_through_the_openai_adapters(record):
    messages = record["request"]["messages"]
    for index, message in enumerate(messages):
        if message.get("role") != "assistant" or not message.get("tool_calls"):
            continue
        adapter = OpenAIResultAdapter()
        parsed = parse_response(message)
        rebuilt = adapter.format_assistant(parsed)
        assert rebuilt["content"] == (message.get("content") or "")
        assert [c["id"] for c in rebuilt["tool_calls"]] == [c["id"] for c in message["tool_calls"]]
        assert [c["function"]["name"] for c in rebuilt["tool_calls"]] == [c["function"]["name"] for c in message["tool_calls"]]
        for ours, theirs in zip(rebuilt["tool_calls"], message["tool_calls"]):
            assert json.loads(ours["function"]["arguments"]) == json.loads(theirs["function"]["arguments"] or "{}")
            assert ours["type"] == "function"
        recorded_results = [m for m in messages[index + 1 :] if m.get("role") == "tool"][: len(parsed.tool_calls)]
        # Some clients send a result as content parts; we always send its text (equally valid).
        expected = [{**m, "content": _text(m["content"])} for m in recorded_results]
        results = [
            ToolResult(call_id=m["tool_call_id"], tool_name=c.name, result=m["content"], executed=True)
            for c, m in zip(parsed.tool_calls, expected)
        ]
        assert adapter.format_results(parsed.tool_calls[: len(results)], results) == expected


def _text(content):
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content


@pytest.mark.parametrize("record", WITH_TOOLS[:20], ids=_id)
def test_tools_array_matches_the_recorded_request(record):
    sent = record["request"]["tools"]
    ours = OpenAIDefinitionAdapter().format_tools(sent)
    assert [t["function"]["name"] for t in ours] == [t["function"]["name"] for t in sent]
    for mine, theirs in zip(ours, sent):
        expected = dict(theirs["function"].get("parameters") or {})
        expected.setdefault("type", "object")
        expected.setdefault("properties", {})
        assert mine["function"]["parameters"] == expected
        assert mine["function"]["description"] == (theirs["function"].get("description") or "")
