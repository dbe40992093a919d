"""Unified Tool Protocol: one internal ToolCall for every way a model writes one."""

from utp.types import (
    Diagnostic,
    DiagnosticKind,
    ErrorKind,
    ParsedResponse,
    Tool,
    ToolCall,
    ToolFormat,
    ToolResult,
    ToolTier,
)

__all__ = [
    "Diagnostic",
    "DiagnosticKind",
    "ErrorKind",
    "ParsedResponse",
    "Tool",
    "ToolCall",
    "ToolFormat",
    "ToolResult",
    "ToolTier",
]

__version__ = "0.1.0"
