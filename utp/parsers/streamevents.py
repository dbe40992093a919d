"""What a stream emits: content and thinking as they arrive, each call when it is ready, each report."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

from utp.types import Diagnostic, ToolCall


@dataclass(slots=True)
class ContentDelta:
    text: str


@dataclass(slots=True)
class ThinkingDelta:
    text: str


@dataclass(slots=True)
class CallReady:
    call: ToolCall


@dataclass(slots=True)
class DiagnosticEvent:
    diagnostic: Diagnostic


StreamEvent = Union[ContentDelta, ThinkingDelta, CallReady, DiagnosticEvent]
