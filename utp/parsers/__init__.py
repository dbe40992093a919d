"""The parser registry and the one entry point every caller uses.

>>> from utp import parse_response
>>> parse_response('<tools>\\n{"name": "search_code", "arguments": {"query": "auth"}}\\n</tools>').tool_calls[0].name
'search_code'

Families live one per module in :mod:`utp.parsers.families` and register
themselves on import; this module imports them all, so a new module is a new
format with no other edit.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

from utp.parsers.base import CallFamily, ParseContext, registered_families
from utp.protocols import ToolCallParser
from utp.types import ParsedResponse


class UnknownFormatError(ValueError):
    """A format name that no parser is registered under."""


#: parse native ``tool_calls`` only; no content scanning
NATIVE = "native"
#: native first, then every auto-enabled family over the content (the HLD hierarchy)
AUTO = "auto"


def _import_families() -> None:
    from utp.parsers import families

    for info in pkgutil.iter_modules(families.__path__):
        importlib.import_module(f"{families.__name__}.{info.name}")


_import_families()


def family_names(include_opt_in: bool = True) -> list[str]:
    """Registered family names (with ``include_opt_in=False``: only those auto mode runs)."""
    return [n for n, f in registered_families().items() if include_opt_in or f.in_auto]


def parser_names() -> list[str]:
    """Every name :func:`get_parser` accepts."""
    return [AUTO, NATIVE, *family_names()]


def get_family(name: str) -> CallFamily:
    families = registered_families()
    if name in families:
        return families[name]
    for family in families.values():
        if name in family.aliases:
            return family
    raise UnknownFormatError(f"unknown call format {name!r}; known: {', '.join(parser_names())}")


def resolve_families(format: str | list[str] | tuple[str, ...]) -> list[CallFamily]:
    """The content families a format name (or list of names) stands for."""
    names = [format] if isinstance(format, str) else list(format)
    chosen: list[CallFamily] = []
    for name in names:
        if name == AUTO:
            chosen.extend(f for f in registered_families().values() if f.in_auto)
        elif name in (NATIVE, "openai", "ollama"):
            continue
        else:
            chosen.append(get_family(name))
    unique: dict[str, CallFamily] = {f.name: f for f in chosen}
    return list(unique.values())


def get_parser(format: str | list[str] = AUTO, tools: Any = None, **options: Any) -> ToolCallParser:
    """A parser for ``format`` that reads native calls and the named content families."""
    from utp.parsers.composite import CompositeParser
    from utp.tooldefs import normalize_tools

    return CompositeParser(resolve_families(format), ParseContext(normalize_tools(tools), dict(options)))


def parse_response(response: Any, tools: Any = None, format: str | list[str] = AUTO, **options: Any) -> ParsedResponse:
    """Parse any response shape into a :class:`ParsedResponse`; never raises on model output.

    ``response`` is a string, an Ollama or OpenAI-shaped dict, or an object with
    the same attributes. ``tools`` are the offered definitions in any accepted
    shape; given, they decide which JSON is a call and flag unknown names.
    """
    return get_parser(format, tools, **options).parse(response)


__all__ = [
    "AUTO",
    "NATIVE",
    "CallFamily",
    "ParseContext",
    "UnknownFormatError",
    "family_names",
    "get_family",
    "get_parser",
    "parse_response",
    "parser_names",
    "resolve_families",
]
