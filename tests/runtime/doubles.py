"""TEST DOUBLES for the runtime tests: a scripted in-process backend, a line-JSON
parser and minimal adapters.

They implement the real protocols (ChatBackend, ToolCallParser, definition and
result adapters) with the least behaviour that lets the loop's own logic be
tested on its own; the real parsers, adapters and HTTP backend are exercised
in test_loop_http.py.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from utp.backends.base import BackendError, BackendResponse, ChatRequest, Counters, ModelInfo
from utp.formats import FormatBundle
from utp.loop import LoopFormat
from utp.types import Diagnostic, DiagnosticKind, ParsedResponse, Tool, ToolCall, ToolResult


def reply(content: str = "", calls: Sequence[dict[str, Any]] = (), prompt_tokens: int = 10, completion_tokens: int = 5) -> BackendResponse:
    message = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = [{"function": {"name": c["name"], "arguments": c.get("arguments", {})}} for c in calls]
    raw = {"model": "scripted", "message": message, "done": True, "done_reason": "stop",
           "prompt_eval_count": prompt_tokens, "eval_count": completion_tokens}
    return BackendResponse(raw=raw, message=message, counters=Counters(prompt_tokens=prompt_tokens, completion_tokens=completion_tokens))


Script = BackendResponse | BackendError | Callable[[ChatRequest], BackendResponse]


@dataclass
class ScriptedBackend:
    """TEST DOUBLE ChatBackend: answers each chat with the next scripted item."""

    script: list[Script]
    kind: str = "scripted"
    requests: list[ChatRequest] = field(default_factory=list)

    async def chat(self, request: ChatRequest) -> BackendResponse:
        self.requests.append(request)
        if not self.script:
            raise AssertionError("ScriptedBackend: asked more often than scripted")
        item = self.script.pop(0)
        if isinstance(item, BackendError):
            raise item
        if callable(item) and not isinstance(item, BackendResponse):
            return item(request)
        return item

    async def stream_chat(self, request: ChatRequest):  # pragma: no cover - the loop uses chat()
        response = await self.chat(request)
        yield response.raw

    async def show(self, model: str) -> ModelInfo:
        return ModelInfo(name=model)

    async def version(self) -> str:
        return "scripted"

    async def list_models(self) -> list[str]:
        return ["scripted"]

    async def aclose(self) -> None:
        return None


class LineJsonParser:
    """TEST DOUBLE parser: native tool_calls, plus content lines that are JSON calls.

    A content line starting with ``CALL`` but not valid JSON after it becomes an
    UNPARSEABLE diagnostic (family ``json``), like a real family reports broken markup.
    """

    def __init__(self, tools: Sequence[Tool]):
        self.names = {t.name for t in tools}

    def can_parse(self, response: Any) -> bool:
        return True

    def parse(self, response: Any) -> ParsedResponse:
        message = response.get("message", {})
        calls = [
            ToolCall(c["function"]["name"], dict(c["function"].get("arguments") or {}), format="native",
                     known=c["function"]["name"] in self.names)
            for c in message.get("tool_calls") or []
        ]
        kept, diagnostics = [], []
        for line in (message.get("content") or "").splitlines():
            if line.startswith("CALL "):
                try:
                    data = json.loads(line[5:])
                    calls.append(ToolCall(data["name"], data.get("arguments", {}), format="json",
                                          known=data["name"] in self.names))
                except (ValueError, KeyError, TypeError):
                    diagnostics.append(Diagnostic(DiagnosticKind.UNPARSEABLE, "invalid JSON in call", raw=line, format="json"))
                continue
            kept.append(line)
        return ParsedResponse(content="\n".join(kept), tool_calls=calls, raw_response=response, diagnostics=diagnostics)


class NamesDefinitionAdapter:
    """TEST DOUBLE definition adapter: native tools list plus a system prompt naming them."""

    def format_tools(self, tools: Sequence[Tool]) -> Any:
        return [{"type": "function", "function": {"name": t.name, "parameters": t.parameters}} for t in tools]

    def format_system_prompt(self, base_prompt: str, tools: Sequence[Tool]) -> str:
        return f"{base_prompt}\nTools: {', '.join(t.name for t in tools)}".strip()


class ToolMessageResultAdapter:
    """TEST DOUBLE result adapter: Ollama-style assistant + role=tool messages."""

    def format_assistant(self, parsed: ParsedResponse) -> dict[str, Any]:
        return {"role": "assistant", "content": parsed.content,
                "tool_calls": [{"function": {"name": c.name, "arguments": c.arguments}} for c in parsed.tool_calls]}

    def format_results(self, calls: Sequence[ToolCall], results: Sequence[ToolResult]) -> list[dict[str, Any]]:
        return [{"role": "tool", "tool_name": c.name, "content": r.content_text()} for c, r in zip(calls, results)]


@dataclass
class FakeNegotiated:
    """TEST DOUBLE of the negotiator's result (same attributes as utp.negotiator.Negotiated)."""

    bundle: FormatBundle = field(default_factory=FormatBundle)
    definition_adapter: Any = field(default_factory=NamesDefinitionAdapter)
    result_adapter: Any = field(default_factory=ToolMessageResultAdapter)
    parser_factory: Callable[[Sequence[Tool]], Any] = LineJsonParser
    fallbacks: list[FormatBundle] = field(default_factory=list)
    source: str = "explicit"


def double_format(bundle: FormatBundle) -> LoopFormat:
    """Format builder for fallbacks that keeps using the doubles (labels still name the bundle)."""
    return LoopFormat(bundle, NamesDefinitionAdapter(), ToolMessageResultAdapter(), LineJsonParser,
                      f"{bundle.definition_format}/{bundle.prompt_family}")


class Recorder:
    """A tool handler that records every call it receives (to prove refusals never run)."""

    def __init__(self, result: Any = "ok", name: str = "handler"):
        self.calls: list[dict[str, Any]] = []
        self.result = result
        self.__name__ = name

    def __call__(self, **arguments: Any) -> Any:
        self.calls.append(arguments)
        return self.result
