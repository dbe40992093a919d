"""The multi-round tool loop: ask, parse, check, run, feed back, until the model is done.

A round sends the conversation with the tools the session's tier allows,
parses whatever format the answer came in, runs each call through the
registry's checks, and appends the assistant turn and the results in the
wire shape the format uses. The loop always ends with a typed
:class:`Termination` and never with an exception for something a model or a
server did: a model that loops on one call, rambles past a token budget,
writes calls nobody can read, or a server that fails, each has its own end.

Two things are tolerated once before giving up, because small models
recover from them when told: a response with call-shaped text that cannot
be read (the model is told what was wrong and the exact syntax, then gets
``parse_failure_retries`` more tries), and, with ``fallback_after``, a
format the model keeps failing at (the loop switches to the next bundle in
``negotiated.fallbacks`` and says so in the transcript).
"""

from __future__ import annotations

import enum
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx

from utp.backends.base import BackendError, BackendErrorKind, BackendResponse, ChatBackend, ChatRequest
from utp.constrained import unenforced_reply
from utp.formats import FormatBundle
from utp.intent import matching_rules
from utp.protocols import ToolCallParser, ToolDefinitionAdapter, ToolResultAdapter
from utp.registry import CheckDecision, ToolRegistry
from utp.transcript import DUPLICATE_STOPPED, EXECUTED, CallRecord, RoundRecord, Transcript
from utp.types import Decision, DiagnosticKind, ErrorKind, ParsedResponse, Tool, ToolResult, ToolTier

#: diagnostics that mean "the model tried to call something and we could not read it"
_FAILED_CALL_KINDS = (DiagnosticKind.UNPARSEABLE, DiagnosticKind.TRUNCATED)


class Termination(str, enum.Enum):
    FINAL_ANSWER = "final_answer"
    MAX_ROUNDS = "max_rounds"
    REPEATED_CALL = "repeated_call"
    TOKEN_BUDGET = "token_budget"
    COMPLETION_MARKER = "completion_marker"
    BACKEND_ERROR = "backend_error"
    PARSE_FAILURE = "parse_failure"


@dataclass(frozen=True)
class LoopLimits:
    """When a run stops.

    ``max_repeats``: an identical call (name and canonical arguments) runs at
    most this many times in one run; the next occurrence is not executed
    (decision ``duplicate_stopped``) and the run ends with ``repeated_call``.
    ``token_budget``: no further request is sent once the server-reported
    prompt+completion tokens of this run exceed it. ``completion_marker``:
    text (case-insensitive) that ends the run when the model writes it.
    ``parse_failure_retries``: consecutive unreadable rounds told what went
    wrong before the run ends with ``parse_failure``. ``fallback_after``:
    consecutive unreadable rounds after which the next fallback format is
    tried (``None``: never switch).
    """

    max_rounds: int = 8
    max_repeats: int = 3
    token_budget: int | None = None
    completion_marker: str | None = None
    call_timeout_s: float | None = 30.0
    parse_failure_retries: int = 1
    fallback_after: int | None = None

    def __post_init__(self) -> None:
        problems = []
        if self.max_rounds < 1:
            problems.append(f"max_rounds must be at least 1 (got {self.max_rounds})")
        if self.max_repeats < 1:
            problems.append(f"max_repeats must be at least 1 (got {self.max_repeats})")
        if self.token_budget is not None and self.token_budget < 1:
            problems.append(f"token_budget must be positive or None (got {self.token_budget})")
        if self.call_timeout_s is not None and self.call_timeout_s <= 0:
            problems.append(f"call_timeout_s must be positive or None (got {self.call_timeout_s})")
        if self.parse_failure_retries < 0:
            problems.append(f"parse_failure_retries must be >= 0 (got {self.parse_failure_retries})")
        if self.fallback_after is not None and self.fallback_after < 1:
            problems.append(f"fallback_after must be at least 1 or None (got {self.fallback_after})")
        if self.completion_marker is not None and not self.completion_marker.strip():
            problems.append("completion_marker must not be blank")
        if problems:
            raise ValueError("LoopLimits: " + "; ".join(problems))


@dataclass
class LoopResult:
    """How a run ended. ``messages`` is the conversation without the system prompt or
    demonstrations: pass it as ``history`` to continue in the next user turn."""

    final_answer: str | None
    termination: Termination
    transcript: Transcript
    messages: list[dict[str, Any]]
    error: str | None = None
    tier_start: ToolTier = ToolTier.CRAWL
    tier_after_intent: ToolTier = ToolTier.CRAWL
    format_switches: list[str] = field(default_factory=list)

    @property
    def tokens(self) -> int:
        return self.transcript.tokens

    def to_dict(self) -> dict[str, Any]:
        return {
            "final_answer": self.final_answer,
            "termination": self.termination.value,
            "error": self.error,
            "tier_start": self.tier_start.name.lower(),
            "tier_after_intent": self.tier_after_intent.name.lower(),
            "format_switches": list(self.format_switches),
            "rounds": self.transcript.to_dict(),
            "messages": self.messages,
        }


@dataclass
class LoopFormat:
    """The adapters and parser for one bundle, as the loop uses them (what a fallback switches)."""

    bundle: FormatBundle | None
    definition: ToolDefinitionAdapter
    results: ToolResultAdapter
    parser_factory: Callable[[Sequence[Tool]], ToolCallParser]
    label: str

    def describe(self) -> dict[str, Any]:
        data = self.bundle.to_dict() if self.bundle is not None else {}
        data["label"] = self.label
        return data


def _bundle_label(bundle: FormatBundle | None) -> str:
    if bundle is None:
        return "custom"
    from utp.formats import preset_name

    name = preset_name(bundle)
    if name:
        return name
    family = f"/{bundle.prompt_family}" if bundle.prompt_family else ""
    return f"{bundle.definition_format}{family}->{bundle.result_format}"


def format_for_bundle(bundle: FormatBundle) -> LoopFormat:
    """Fresh adapters and a parser factory for ``bundle`` (used when falling back)."""
    from utp.adapters import adapters_for
    from utp.parsers import get_parser

    definition, results = adapters_for(bundle)
    return LoopFormat(bundle, definition, results, lambda tools: get_parser(bundle.call_parser, tools), _bundle_label(bundle))


class ToolLoop:
    """Drive one conversation through rounds of model output and tool execution."""

    def __init__(
        self,
        backend: ChatBackend,
        registry: ToolRegistry,
        negotiated: Any,
        model: str,
        options: dict[str, Any] | None = None,
        limits: LoopLimits | None = None,
        system_prompt: str = "",
        stream: bool = False,
        *,
        think: bool | str | None = None,
        keep_alive: str | int | None = None,
        format_builder: Callable[[FormatBundle], LoopFormat] = format_for_bundle,
    ):
        self.backend = backend
        self.registry = registry
        self.negotiated = negotiated
        self.model = model
        self.options = dict(options or {})
        self.limits = limits or LoopLimits()
        self.system_prompt = system_prompt
        self.stream = stream
        self.think = think
        self.keep_alive = keep_alive
        self.format_builder = format_builder
        bundle = getattr(negotiated, "bundle", None)
        self._initial = LoopFormat(
            bundle,
            negotiated.definition_adapter,
            negotiated.result_adapter,
            negotiated.parser_factory,
            _bundle_label(bundle),
        )
        self._fallbacks: list[FormatBundle] = list(getattr(negotiated, "fallbacks", None) or [])

    async def run(self, user_message: str, history: Sequence[dict[str, Any]] | None = None) -> LoopResult:
        return await _Run(self, user_message, list(history or [])).execute()


class _Run:
    """The state of one :meth:`ToolLoop.run` call (kept apart so a loop object is reusable)."""

    def __init__(self, loop: ToolLoop, user_message: str, history: list[dict[str, Any]]):
        self.loop = loop
        self.limits = loop.limits
        self.registry = loop.registry
        self.user_message = user_message
        self.conversation: list[dict[str, Any]] = [*history, {"role": "user", "content": user_message}]
        self.transcript = Transcript()
        self.format = loop._initial
        self.fallbacks = list(loop._fallbacks)
        self.format_switches: list[str] = []
        self.call_counts: Counter[tuple[str, str]] = Counter()
        self.failed_rounds = 0  # consecutive unreadable rounds (for parse_failure)
        self.failed_under_format = 0  # consecutive unreadable rounds under the current format
        self.tokens = 0
        self._parsers: dict[int, ToolCallParser] = {}

    async def execute(self) -> LoopResult:
        tier_start = self.registry.current_tier
        tier_after = self.registry.apply_intent(self.user_message)
        intent_note = self._intent_note(tier_start, tier_after)
        termination = Termination.MAX_ROUNDS
        final_answer: str | None = None
        error: str | None = None
        for _ in range(self.limits.max_rounds):
            if self.limits.token_budget is not None and self.tokens > self.limits.token_budget:
                termination = Termination.TOKEN_BUDGET
                self._last_note(f"token budget exceeded: {self.tokens} > {self.limits.token_budget}; no further request")
                break
            record = self.transcript.new_round()
            if intent_note:
                record.note(intent_note)
                intent_note = ""
            outcome = await self._round(record)
            if outcome is None:
                continue
            termination, final_answer, error = outcome
            break
        else:
            self._last_note(f"max_rounds ({self.limits.max_rounds}) reached without a final answer")
        return LoopResult(
            final_answer=final_answer,
            termination=termination,
            transcript=self.transcript,
            messages=self.conversation,
            error=error,
            tier_start=tier_start,
            tier_after_intent=tier_after,
            format_switches=self.format_switches,
        )

    # ------------------------------------------------------------------ one round

    async def _round(self, record: RoundRecord) -> tuple[Termination, str | None, str | None] | None:
        """Run one round; a tuple ends the run, ``None`` continues it."""
        available = self.registry.available_tools()
        request = self._build_request(available)
        record.record_request(request)
        record.format = self.format.describe()
        started = time.perf_counter()
        try:
            response = await self.loop.backend.chat(request)
        except BackendError as exc:
            return self._backend_failed(record, started, str(exc))
        except httpx.HTTPError as exc:  # a backend that let a transport error through
            return self._backend_failed(record, started, f"{type(exc).__name__}: {exc}")
        record.client_wall_s = time.perf_counter() - started
        self._record_response(record, response)
        unenforced = _unenforced_schema(request, response)
        if unenforced is not None:  # never read a reply the server let run free-form as if constrained
            return self._backend_failed(record, started, str(unenforced))
        parsed = self._read_answer(self._parser().parse(response.raw))
        record.content = parsed.content
        record.thinking = parsed.thinking
        record.diagnostics = list(parsed.diagnostics)
        marker_hit = self._has_marker(parsed)

        if parsed.tool_calls:
            self.failed_rounds = 0
            self.failed_under_format = 0
            unread = [d for d in parsed.diagnostics if d.kind in _FAILED_CALL_KINDS]
            if unread:
                record.note(f"{len(unread)} unreadable call-like block(s) beside {len(parsed.tool_calls)} call(s)")
            repeated = await self._run_calls(record, parsed)
            if repeated:
                return Termination.REPEATED_CALL, None, None
            if marker_hit:
                record.note(f"completion marker {self.limits.completion_marker!r} found")
                return Termination.COMPLETION_MARKER, parsed.content.strip(), None
            return None

        failed = [d for d in parsed.diagnostics if d.kind in _FAILED_CALL_KINDS]
        if failed and not marker_hit:
            return self._unreadable_round(record, parsed, failed)
        self.conversation.append(self.format.results.format_assistant(parsed))
        if marker_hit:
            record.note(f"completion marker {self.limits.completion_marker!r} found")
            return Termination.COMPLETION_MARKER, parsed.content.strip(), None
        return Termination.FINAL_ANSWER, parsed.content.strip(), None

    def _build_request(self, available: list[Tool]) -> ChatRequest:
        definition = self.format.definition
        messages: list[dict[str, Any]] = []
        system = definition.format_system_prompt(self.loop.system_prompt, available)
        if system:
            messages.append({"role": "system", "content": system})
        demonstrations = getattr(definition, "demonstrations", None)
        if callable(demonstrations) and available:
            messages.extend(demonstrations(available))
        messages.extend(self.conversation)
        tools = definition.format_tools(available) if available else None
        schema_for = getattr(definition, "response_schema", None)  # constrained formats: rebuilt per round
        return ChatRequest(
            model=self.loop.model,
            messages=messages,
            tools=tools or None,
            options=dict(self.loop.options),
            stream=self.loop.stream,
            think=self.loop.think,
            keep_alive=self.loop.keep_alive,
            response_schema=schema_for(available) if callable(schema_for) else None,
        )

    def _read_answer(self, parsed: ParsedResponse) -> ParsedResponse:
        """The format's reading of a text answer (a constrained ``{"answer": ...}`` becomes prose)."""
        read_answer = getattr(self.format.results, "read_answer", None)
        return read_answer(parsed) if callable(read_answer) else parsed

    def _parser(self) -> ToolCallParser:
        # All registered tools, not just available ones: a locked tool's name must be
        # recognised (and then refused as a tier violation), not treated as prose.
        key = id(self.format)
        if key not in self._parsers:
            self._parsers[key] = self.format.parser_factory(self.registry.all_tools())
        return self._parsers[key]

    def _record_response(self, record: RoundRecord, response: BackendResponse) -> None:
        record.raw_response = response.raw
        message = response.message or {}
        record.raw_text = message.get("content") or ""
        counters = response.counters.to_dict() if response.counters is not None else None
        record.counters = counters
        self.tokens += record.tokens

    def _backend_failed(self, record: RoundRecord, started: float, message: str) -> tuple[Termination, None, str]:
        record.client_wall_s = time.perf_counter() - started
        record.error = message
        record.note(f"backend error: {message}")
        return Termination.BACKEND_ERROR, None, message

    def _has_marker(self, parsed: ParsedResponse) -> bool:
        marker = self.limits.completion_marker
        return bool(marker) and marker.casefold() in parsed.content.casefold()

    # ------------------------------------------------------------------ calls

    async def _run_calls(self, record: RoundRecord, parsed: ParsedResponse) -> bool:
        """Check and run every call; True when a repeated call stopped the run."""
        self.conversation.append(self.format.results.format_assistant(parsed))
        results: list[ToolResult] = []
        repeated = False
        for call in parsed.tool_calls:
            key = call.canonical_key()
            self.call_counts[key] += 1
            if self.call_counts[key] > self.limits.max_repeats:
                repeated = True
                result = ToolResult(
                    call.id,
                    call.name,
                    error=(
                        f"'{call.name}' was already called {self.limits.max_repeats} times with these arguments; "
                        "it was not run again."
                    ),
                    executed=False,
                )
                record.calls.append(CallRecord(call, DUPLICATE_STOPPED, result.error or "", [], result))
                record.note(f"repeated call stopped: {call.name} (occurrence {self.call_counts[key]})")
                results.append(result)
                continue
            decision = self.registry.check(call)
            result = await self.registry.execute_checked(call, decision, self.limits.call_timeout_s)
            record.calls.append(
                CallRecord(call, _decision_name(decision, result), decision.message or result.error or "",
                           list(decision.coercions), result)
            )
            results.append(result)
        self.conversation.extend(self.format.results.format_results(parsed.tool_calls, results))
        return repeated

    # ------------------------------------------------------------------ unreadable output

    def _unreadable_round(
        self, record: RoundRecord, parsed: ParsedResponse, failed: list[Any]
    ) -> tuple[Termination, str | None, str | None] | None:
        self.failed_rounds += 1
        self.failed_under_format += 1
        reasons = "; ".join(f"{d.reason}" + (f" [{d.format}]" if d.format else "") for d in failed[:3])
        record.note(f"unreadable call-like output ({self.failed_rounds} in a row): {reasons}")
        self.conversation.append(self.format.results.format_assistant(parsed))
        switched = self._maybe_fall_back(record, failed)
        if not switched and self.failed_rounds > self.limits.parse_failure_retries:
            record.note(f"parse failure: {self.failed_rounds} unreadable rounds in a row; stopping")
            return Termination.PARSE_FAILURE, None, f"unreadable tool call: {reasons}"
        if switched:
            self.failed_rounds = 0
        self.conversation.extend(self._parse_error_messages(failed))
        record.note("told the model what was wrong and the expected call syntax")
        return None

    def _maybe_fall_back(self, record: RoundRecord, failed: list[Any]) -> bool:
        after = self.limits.fallback_after
        if after is None or self.failed_under_format < after:
            return False
        if not self.fallbacks:
            record.note("format fallback wanted but no fallback format is left")
            return False
        previous = self.format.label
        taught = self.format.bundle.prompt_family if self.format.bundle else None
        foreign = sorted({d.format for d in failed if d.format and d.format != taught})
        nxt = self.fallbacks.pop(0)
        self.format = self.loop.format_builder(nxt)
        self.failed_under_format = 0
        why = f"{after} unreadable round(s) in a row"
        if foreign:
            why += f"; model wrote {', '.join(foreign)}"
        switch = f"format switch: {previous} -> {self.format.label} ({why})"
        record.note(switch)
        self.format_switches.append(switch)
        return True

    def _parse_error_messages(self, failed: list[Any]) -> list[dict[str, Any]]:
        for adapter in (self.format.results, self.format.definition):
            hook = getattr(adapter, "format_parse_error", None)
            if callable(hook):
                produced = hook(failed)
                if isinstance(produced, dict):
                    return [produced]
                if produced:
                    return list(produced)
        problems = "\n".join(f"- {d.reason}" + (f" (near: {d.raw[:120]!r})" if d.raw else "") for d in failed[:3])
        text = f"Your last message contained a tool call that could not be read:\n{problems}\n"
        example = self._example_syntax()
        if example:
            text += f"Write the call again, exactly in this form:\n{example}"
        else:
            text += "Call the tool again using the function-calling interface, with arguments as a JSON object."
        return [{"role": "user", "content": text}]

    def _example_syntax(self) -> str:
        definition = self.format.definition
        family = getattr(definition, "family", None)
        example_calls = getattr(definition, "example_calls", None)
        available = self.registry.available_tools()
        if family is None or not callable(example_calls) or not available:
            return ""
        try:
            return family.render(example_calls(available)[:1])
        except Exception:  # an example is a courtesy; never let it end the run
            return ""

    # ------------------------------------------------------------------ notes

    def _intent_note(self, before: ToolTier, after: ToolTier) -> str:
        hits = matching_rules(self.user_message, self.registry.intent_rules)
        words = ", ".join(repr(word) for _, word in hits)
        if after > before:
            return f"intent: tier {before.name} -> {after.name} (matched {words})"
        return f"intent: tier stays {after.name}" + (f" (matched {words})" if words else "")

    def _last_note(self, text: str) -> None:
        if self.transcript.rounds:
            self.transcript.rounds[-1].note(text)


def _unenforced_schema(request: ChatRequest, response: BackendResponse) -> BackendError | None:
    """A structured-output refusal for a reply that ignored the request's schema (a cut-off reply cannot tell)."""
    if request.response_schema is None or response.done_reason == "length":
        return None
    why = unenforced_reply(request.response_schema, (response.message or {}).get("content") or "")
    return None if why is None else BackendError(BackendErrorKind.STRUCTURED_OUTPUT_UNSUPPORTED, why)


def _decision_name(decision: CheckDecision, result: ToolResult) -> Decision | str:
    if not decision.allowed:
        return decision.decision
    if result.error_kind in (ErrorKind.TIMEOUT, ErrorKind.EXECUTION_ERROR, ErrorKind.CONFIRMATION_REQUIRED):
        return Decision(result.error_kind.value)
    return EXECUTED
