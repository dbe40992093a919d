"""Arguments written as YAML's ``key: value`` lines instead of JSON, for a tool whose parameters the keys are.

Agents that describe tools in YAML (Orchestrator-style prompts, the yaml-xml
protocol of AI SDK middlewares) and ReAct prompts that show inputs as
``key: value`` get arguments back in that shape: ``location: Paris`` inside a
tool's element, ``Action Input: namespace: prod`` after a ReAct action, or a
one-line list of pairs, ``namespace: prod, status: all``. Only keys that are the
tool's parameters make arguments (any identifiers when its schema lists
none); anything else is text, and the caller keeps it as such.
"""

from __future__ import annotations

import datetime
import json
import re
from typing import Any

import yaml

from utp.parsers.typedvalues import property_schema, schema_types, typed_value

#: libyaml's reader when PyYAML was built with it (ten times the pure-Python reader's speed)
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
#: a YAML mapping's first key (scan lookahead and streaming: what a YAML body opens with)
YAML_KEY = r"[A-Za-z_][\w\-]{0,100}+[ \t]*+:(?:[ \t]|\r?\n)"
YAML_START = re.compile(r"\s*+" + YAML_KEY)
#: a key name any tool's parameter could have (used when the tool declares none)
_KEY_NAME = re.compile(r"[A-Za-z_][\w.\-]{0,100}")
#: one ``key: value`` pair of a one-line list (the value runs to the next ``, key:``)
_PAIR = re.compile(r"[ \t]*+([A-Za-z_][\w.\-]{0,100}+)[ \t]*+:[ \t]*+([^,\n]*?)[ \t]*+(?:,(?=[ \t]*+[A-Za-z_][\w.\-]{0,100}+[ \t]*+:)|\Z)")


def load_yaml(text: str) -> Any:
    """``text`` read by YAML's safe loader (libyaml's when built in); raises ``yaml.YAMLError``,
    also for nesting deeper than Python's recursion allows (hostile input, never arguments)."""
    try:
        return yaml.load(text, Loader=_LOADER)  # noqa: S506 (a safe loader)
    except RecursionError:
        raise yaml.YAMLError("YAML nested too deeply") from None


def yaml_arguments(body: str, tool: Any) -> dict[str, Any] | None:
    """A YAML mapping body's arguments: keys the tool's parameters (identifiers when it lists none).

    Values keep YAML's types unless the schema says string: then the text as
    written (``zip: 02134``, ``answer: yes``, which YAML 1.1 reads as true);
    dates and other non-JSON scalars become their text. Keys are as written too
    (YAML 1.1 reads a key ``on`` as true).
    """
    if not YAML_START.match(body):
        return None
    try:
        value = load_yaml(body)
        node = yaml.compose(body, Loader=_LOADER)
    except (yaml.YAMLError, RecursionError):
        return None
    if not isinstance(value, dict) or not value or not isinstance(node, yaml.MappingNode) or len(node.value) != len(value):
        return None  # not one mapping, or a key written twice
    # keys as written (YAML 1.1 reads a key ``on`` as true), in the order the values were read
    keys = [key.value if isinstance(key, yaml.ScalarNode) else None for key, _ in node.value]
    if None in keys or len(set(keys)) != len(keys) or not _parameters(dict.fromkeys(keys), tool):
        return None
    written = [item.value if isinstance(item, yaml.ScalarNode) else None for _, item in node.value]
    try:
        return {
            key: _schema_typed(_jsonable(item), property_schema(tool, key), as_written)
            for key, item, as_written in zip(keys, value.values(), written)
        }
    except RecursionError:
        return None


def keyed_arguments(text: str, tool: Any) -> dict[str, Any] | None:
    """``text`` as YAML's ``key: value`` lines, else its first line as a list of pairs or as keyword arguments."""
    line = text.split("\n", 1)[0].strip()
    return yaml_arguments(text, tool) or pair_list_arguments(line, tool) or keyword_arguments(line, tool)


def keyword_arguments(line: str, tool: Any) -> dict[str, Any] | None:
    """``query="test search", limit=5``: Python's keyword arguments (a LangChain ReAct sample's input),
    read as a call's are (literals only, nothing evaluated); every key a parameter of the tool."""
    from utp.parsers.pyliteral import LiteralError, parse_calls

    try:
        calls, _ = parse_calls(f"_({line})")
    except (LiteralError, RecursionError):
        return None
    if len(calls) != 1 or calls[0].positional or not calls[0].keywords or not _parameters(calls[0].keywords, tool):
        return None
    return dict(calls[0].keywords)


def pair_list_arguments(line: str, tool: Any) -> dict[str, Any] | None:
    """``namespace: prod, status: all`` on one line: each pair an argument, typed by the schema.

    YAML refuses the line (a plain value cannot hold ``: ``), so the pairs are
    split at each comma the next ``key:`` follows; every key must be a parameter.
    """
    pairs: dict[str, str] = {}
    at = 0
    while at < len(line):
        pair = _PAIR.match(line, at)
        if pair is None or pair.end() == at or pair.group(1) in pairs:
            return None
        pairs[pair.group(1)] = pair.group(2)
        at = pair.end()
    if len(pairs) < 2 or not _parameters(pairs, tool):
        return None
    return {key: typed_value(raw, property_schema(tool, key), untyped="json") for key, raw in pairs.items()}


def _parameters(value: dict[str, Any], tool: Any) -> bool:
    """Are the keys the tool's parameters (identifiers, when it declares none)?"""
    known = tool.properties if tool is not None else {}
    if known:
        return all(key in known for key in value)
    return all(_KEY_NAME.fullmatch(key) for key in value)


def _jsonable(value: Any) -> Any:
    """YAML's non-JSON scalars (dates, times) as their text."""
    if isinstance(value, (datetime.date, datetime.datetime, datetime.time)):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    return value


def _schema_typed(value: Any, schema: Any, written: str | None = None) -> Any:
    """A scalar YAML typed otherwise than the parameter wants: for a string, the text as written
    (``yes`` stays ``yes``); for other types, its text typed by the schema."""
    if isinstance(value, (dict, list, str)) or value is None:
        return value
    if "string" in schema_types(schema):
        return written if written is not None else json.dumps(value)
    return typed_value(json.dumps(value), schema, untyped="json")
