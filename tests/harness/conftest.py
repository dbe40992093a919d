"""Shared pieces for the runner/CLI tests: a scripted model on a real loopback server.

The model is a TEST DOUBLE (``tests/support/scripted_server.py``) whose answer
depends on what it was sent, so the same script serves every format preset:
it calls a tool natively when the request carries ``tools`` and writes a
Hermes ``<tool_call>`` block in its text otherwise, then answers from the
tool result it finds in the conversation.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.scripted_server import ScriptedServer, Turn, turn_from_callable

PROJECT_ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = PROJECT_ROOT / "scenarios" / "examples"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    return content if isinstance(content, str) else json.dumps(content)


#: how the text result adapters wrap tool results sent back as user messages
RESULT_MARKS = ("<tool_response>", "Tool results:", "<function_results>")


def _call(body: dict[str, Any], name: str, arguments: dict[str, Any]) -> Turn:
    if body.get("tools"):
        return Turn(tool_calls=[{"name": name, "arguments": arguments}], counters={"eval_count": 12, "eval_duration": 240_000_000})
    block = json.dumps({"name": name, "arguments": arguments})
    return Turn(content=f"<tool_call>\n{block}\n</tool_call>", counters={"eval_count": 20, "eval_duration": 400_000_000})


def scripted_model(body: dict[str, Any]) -> Turn:
    """A deterministic 'model' for the example suites."""
    messages = body.get("messages") or []
    users = [i for i, m in enumerate(messages) if m.get("role") == "user" and not any(mark in _text(m) for mark in RESULT_MARKS)]
    question = _text(messages[users[-1]]).lower() if users else ""
    since = " ".join(_text(m) for m in messages[(users[-1] + 1 if users else 0):])
    final = {"counters": {"eval_count": 8, "eval_duration": 160_000_000, "prompt_eval_count": 50, "prompt_eval_duration": 50_000_000}}
    if "hello" in question:
        return Turn(content="Hello!", **final)
    if "weather" in question:
        if "temp_c" in since:
            return Turn(content="It is 11 degrees and clear in Tokyo.", **final)
        return _call(body, "get_weather", {"city": "Tokyo"})
    if "config" in question:
        if "DEFAULT_PORT" in since:
            return Turn(content="The default port is 8080.", **final)
        return _call(body, "read_file", {"path": "src/config.py"})
    if "port to 9090" in question:
        if "tier" in since.lower() or "RUN" in since:
            return Turn(content="I am not allowed to write files in this session.", **final)
        return _call(body, "write_file", {"path": "src/config.py", "content": "DEFAULT_PORT = 9090\n"})
    return Turn(content="I do not know.", **final)


@pytest.fixture
def scripted_server() -> Iterator[ScriptedServer]:
    with ScriptedServer(default_turn=turn_from_callable(scripted_model)) as server:
        yield server
