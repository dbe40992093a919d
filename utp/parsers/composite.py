"""The parser every caller uses: native calls, reasoning, and every text family in one pass.

Order of work for one response (the HLD's hierarchy, with its mixed case):

1. :func:`~utp.response.view_response` finds content, thinking and native
   ``tool_calls`` in whatever shape arrived.
2. Native calls are read first (:mod:`utp.parsers.native`).
3. Reasoning (``<think>…</think>``) is cut out of the content; call-like text
   in it is reported (``IN_REASONING``), never run.
4. One left-to-right scan (:mod:`utp.parsers.scanloop`) finds every family's
   triggers at once (one compiled pattern per family set, built and cached by
   :mod:`utp.parsers.triggerscan`). At each trigger the families owning it are
   tried by priority; the first that returns an Extraction consumes its span
   and the scan resumes after it.
5. The finishing steps (:mod:`utp.parsers.finishing`), shared with streams:
   native and content calls merged (a content call identical to a native one
   is dropped with a ``DUPLICATE`` diagnostic, as is one restating an earlier
   content call in another notation), names checked against the
   offered tools, wrapped arguments unwrapped.

Nothing here raises on model output: a family that raises is reported as an
``UNPARSEABLE`` diagnostic and the scan goes on.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from utp.numbers import safe_repr
from utp.parsers.base import CallFamily, ParseContext
from utp.parsers.finishing import check_names, merge_native_and_content, without_restatements
from utp.parsers.native import parse_native_calls
from utp.parsers.reasoning import join_around_spans, prefilled_reasoning, template_opener
from utp.parsers.scanloop import _anchor, anchored_candidates, scan_text, withhold_call_cut_by_limit
from utp.parsers.triggerscan import TriggerScanner, scanner_for
from utp.parsers.turnframe import role_header_end, turn_end_at
from utp.response import view_response
from utp.types import Diagnostic, DiagnosticKind, ParsedResponse, ToolCall


class CompositeParser:
    """Native calls plus the given content families, in one pass (implements ToolCallParser)."""

    def __init__(self, families: Sequence[CallFamily], ctx: ParseContext | None = None) -> None:
        self.families = list(families)
        self.ctx = ctx if ctx is not None else ParseContext()
        self.scanner = scanner_for(self.families, self.ctx)
        #: the offered tools' triggers, tried only at the answer's start (see ``scan_text``)
        self.anchored = anchored_candidates(self.families, self.ctx)
        self._stream_scanner: TriggerScanner | None = None

    @property
    def stream_scanner(self) -> TriggerScanner:
        """The scanner a stream watches with: the families' triggers plus the offered tools'."""
        if self._stream_scanner is None:
            scanner = scanner_for(self.families, self.ctx, anchored=True)
            assert isinstance(scanner, TriggerScanner)
            self._stream_scanner = scanner
        return self._stream_scanner

    def can_parse(self, response: Any) -> bool:
        """Native calls present, or a trigger of one of the families in the content."""
        view = view_response(response)
        if view.native_calls:
            return True
        if not view.content:
            return False
        return self.scanner.search(view.content, 0) is not None or (bool(self.anchored) and _anchor(view.content, 0, self.anchored)[0] >= 0)

    def parse(self, response: Any) -> ParsedResponse:
        try:
            return self._parse(response)
        except Exception as exc:  # last line of defence: parse never raises
            return ParsedResponse(
                content=_safe_content(response),
                raw_response=response,
                diagnostics=[Diagnostic(DiagnosticKind.UNPARSEABLE, f"parser error {type(exc).__name__}: {exc}")],
            )

    def _parse(self, response: Any) -> ParsedResponse:
        if type(response) is str:  # the common case, without building a view
            content, thinking, finish = response, "", None
            native, diagnostics = [], []
        else:
            view = view_response(response)
            content, thinking, finish = view.content, view.thinking, view.finish_reason
            if view.native_calls:
                native, diagnostics = parse_native_calls(view.native_calls)
            else:
                native, diagnostics = [], []
        header_end = role_header_end(content)
        if header_end:  # the template's role header: no part of the answer
            content = content[header_end:]
        opener = template_opener(self.ctx.options)
        if opener:  # the template wrote it: the output is read as following it
            content = opener + content
        thoughts = [thinking.strip()] if thinking and not thinking.isspace() else []
        start, prefilled = prefilled_reasoning(content)
        if prefilled.strip():
            thoughts.append(prefilled.strip())
        answer_end = max(start, turn_end_at(content))
        if answer_end < len(content):  # the template's end-of-turn tokens: no part of the answer
            content = content[:answer_end]
        found = scan_text(content, self.scanner, self.ctx, start, reasoning=True, anchored=self.anchored)
        if found.diagnostics:
            diagnostics.extend(found.diagnostics)
        if finish == "length" and found.calls:
            found.calls = withhold_call_cut_by_limit(found.calls, content, diagnostics)
        for extra in found.thinking:
            if extra.strip():
                thoughts.append(extra.strip())
        if start or found.spans:
            content = join_around_spans(content, ([(0, start)] if start else []) + found.spans)
        for thought in thoughts:
            diagnostics.extend(self._calls_in_reasoning(thought))
        content_calls = without_restatements(found.calls, diagnostics)
        calls = self._merge(native, content_calls, diagnostics) if native else content_calls
        if calls and self.ctx.has_tools:
            self.check_names(calls, diagnostics)
        return ParsedResponse(
            content,
            calls,
            "tool_calls" if calls else (finish or "stop"),
            response,
            "\n\n".join(thoughts) if thoughts else "",
            diagnostics,
        )

    def _calls_in_reasoning(self, thought: str) -> list[Diagnostic]:
        found = scan_text(thought, self.scanner, self.ctx)
        return [
            Diagnostic(
                DiagnosticKind.IN_REASONING,
                f"call to {call.name!r} written inside reasoning; not executed",
                call.raw if isinstance(call.raw, str) else safe_repr(call.raw),
                call.format,
            )
            for call in found.calls
        ]

    @staticmethod
    def _merge(native: list[ToolCall], content: list[ToolCall], diagnostics: list[Diagnostic]) -> list[ToolCall]:
        return merge_native_and_content(native, content, diagnostics)

    def check_names(self, calls: list[ToolCall], diagnostics: list[Diagnostic]) -> None:
        """Resolve each call's name against the offered tools (in place); no tools, no check."""
        check_names(calls, self.ctx, diagnostics)


def _safe_content(response: Any) -> str:
    try:
        return view_response(response).content
    except Exception:
        return ""
