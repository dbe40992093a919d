"""Unified Tool Protocol: one internal ToolCall for every way a model writes one.

>>> import utp
>>> parsed = utp.parse_response('<tools>\\n{"name": "search_code", "arguments": {"query": "auth"}}\\n</tools>')
>>> parsed.tool_calls[0].name, parsed.tool_calls[0].arguments
('search_code', {'query': 'auth'})

The heavier parts (parser registry, loop, backends) are imported on first use,
so ``import utp`` stays cheap for callers that only need the types.
"""

from __future__ import annotations

import importlib
from typing import Any

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

__version__ = "0.1.0"

# public name -> module that defines it
_LAZY: dict[str, str] = {
    "parse_response": "utp.parsers",
    "get_parser": "utp.parsers",
    "family_names": "utp.parsers",
    "StreamParser": "utp.parsers.streaming",
    "normalize_tools": "utp.tooldefs",
    "FormatBundle": "utp.formats",
    "PRESETS": "utp.formats",
    "FormatNegotiator": "utp.negotiator",
    "load_config": "utp.config",
    "get_definition_adapter": "utp.adapters",
    "get_result_adapter": "utp.adapters",
    "ToolRegistry": "utp.registry",
    "PathGuard": "utp.pathguard",
    "FunctionToolProvider": "utp.providers",
    "IntentRule": "utp.intent",
    "ToolLoop": "utp.loop",
    "LoopLimits": "utp.loop",
    "LoopResult": "utp.loop",
    "Termination": "utp.loop",
    "make_backend": "utp.backends",
    "ChatRequest": "utp.backends.base",
    "BackendError": "utp.backends.base",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'utp' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])


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
    *_LAZY,
]
