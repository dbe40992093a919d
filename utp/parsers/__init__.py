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
from collections import OrderedDict
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

    # by module name: families of equal priority on a shared trigger are tried in this declared order
    for info in sorted(pkgutil.iter_modules(families.__path__), key=lambda info: info.name):
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
    """A parser for ``format`` that reads native calls and the named content families.

    ``allow_bash=True`` adds the opt-in command-line family to ``"auto"``.
    Parsers are cached for the same format, options and tools *object* (an
    agent loop parses every round against one tools list), so tool
    normalisation and scanner setup are paid once, not per response.
    """
    key = _parser_key(format, tools, options)
    if key is not None:
        hit = _PARSER_CACHE.get(key)
        if hit is not None and hit[0] is tools:
            _PARSER_CACHE.move_to_end(key)
            return hit[1]
    parser = _build_parser(format, tools, options)
    if key is not None:
        _PARSER_CACHE[key] = (tools, parser)
        if len(_PARSER_CACHE) > _PARSER_CACHE_SIZE:
            _PARSER_CACHE.popitem(last=False)
    return parser


_PARSER_CACHE: "OrderedDict[tuple[Any, ...], tuple[Any, ToolCallParser]]" = OrderedDict()
_PARSER_CACHE_SIZE = 64


def _parser_key(format: Any, tools: Any, options: dict[str, Any]) -> tuple[Any, ...] | None:
    """A cache key, or None when the arguments are not cheaply hashable (then: no caching).

    The tools part is the identity of the container *and* of each item, so a
    list edited in place (append, replace) misses the cache; the entry keeps a
    reference to ``tools``, so its id cannot be reused by another object.
    """
    try:
        fmt = format if isinstance(format, str) else tuple(format)
        if tools is None:
            tools_key: tuple[Any, ...] = ()
        elif isinstance(tools, (list, tuple)):
            tools_key = (id(tools), tuple(map(id, tools)))
        else:
            tools_key = (id(tools),)
        opts = tuple(sorted(options.items()))
        key = (fmt, tools_key, opts)
        hash(key)
        return key
    except TypeError:
        return None


def _build_parser(format: Any, tools: Any, options: dict[str, Any]) -> ToolCallParser:
    from utp.parsers.composite import CompositeParser
    from utp.tooldefs import normalize_tools

    families = resolve_families(format)
    names = [format] if isinstance(format, str) else list(format)
    if options.get("allow_bash") and AUTO in names:
        for family in registered_families().values():
            if not family.in_auto and family.name == "bash" and family not in families:
                families.append(family)
    return CompositeParser(families, ParseContext(normalize_tools(tools), dict(options)))


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
