"""Accept tool definitions in every shape callers already have.

OpenAI/Ollama (``{"type": "function", "function": {...}}``), its flattened form
(``{"name", "description", "parameters"}``), Anthropic (``input_schema``), MCP
(``inputSchema``) and seed 002's parameter dict (``{"city": ToolParameter(...)}``
or the same as plain dicts) all become one :class:`~utp.types.Tool`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from utp.types import Tool, ToolTier


class ToolDefinitionError(ValueError):
    """A tool definition that cannot be read; the message says which and why."""


_JSON_SCHEMA_TYPES = {"string", "number", "integer", "boolean", "object", "array", "null"}


def normalize_tools(tools: Any) -> list[Tool]:
    """Normalise ``tools`` (one definition, a list, or ``None``) to ``Tool`` objects."""
    if tools is None:
        return []
    if isinstance(tools, (Tool, Mapping)) or hasattr(tools, "name"):
        tools = [tools]
    out: list[Tool] = []
    seen: set[str] = set()
    for index, item in enumerate(tools):
        tool = normalize_tool(item, where=f"tools[{index}]")
        if tool.name in seen:
            raise ToolDefinitionError(f"tools[{index}]: duplicate tool name {tool.name!r}")
        seen.add(tool.name)
        out.append(tool)
    return out


def normalize_tool(item: Any, where: str = "tool") -> Tool:
    if isinstance(item, Tool):
        return item
    if not isinstance(item, Mapping):
        item = _object_to_mapping(item, where)
    data: Mapping[str, Any] = item
    if isinstance(data.get("function"), Mapping) and (data.get("type") == "function" or "name" not in data):
        data = {**data["function"], **{k: v for k, v in data.items() if k in ("tier", "requires_confirmation")}}
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ToolDefinitionError(f"{where}: missing or empty 'name'")
    description = data.get("description") or ""
    if not isinstance(description, str):
        raise ToolDefinitionError(f"{where} ({name}): 'description' must be a string")
    schema_source = _first_present(data, ("parameters", "input_schema", "inputSchema"))
    parameters = _to_json_schema(schema_source, f"{where} ({name})")
    try:
        tier = ToolTier.parse(data.get("tier", ToolTier.CRAWL))
    except ValueError as exc:
        raise ToolDefinitionError(f"{where} ({name}): {exc}") from None
    return Tool(
        name=name,
        description=description,
        parameters=parameters,
        tier=tier,
        requires_confirmation=bool(data.get("requires_confirmation", False)),
    )


def _first_present(data: Mapping[str, Any], keys: Iterable[str]) -> Any:
    for key in keys:
        if key in data and data[key] is not None:
            return data[key]
    return None


def _object_to_mapping(obj: Any, where: str) -> dict[str, Any]:
    if not hasattr(obj, "name"):
        raise ToolDefinitionError(f"{where}: expected a tool definition, got {type(obj).__name__}")
    keys = ("name", "description", "parameters", "input_schema", "inputSchema", "tier", "requires_confirmation")
    return {k: getattr(obj, k) for k in keys if getattr(obj, k, None) is not None}


def _to_json_schema(source: Any, where: str) -> dict[str, Any]:
    """A JSON Schema object for the parameters, converting seed 002's shape."""
    if source is None:
        return {"type": "object", "properties": {}}
    if not isinstance(source, Mapping):
        raise ToolDefinitionError(f"{where}: parameters must be an object, got {type(source).__name__}")
    if isinstance(source.get("type"), str) and source["type"] != "object":
        raise ToolDefinitionError(f"{where}: parameters must be an object schema, got type {source['type']!r}")
    if _looks_like_json_schema(source):
        schema = dict(source)
        schema.setdefault("type", "object")
        schema.setdefault("properties", {})
        return schema
    return _parameter_dict_to_schema(source, where)


def _looks_like_json_schema(source: Mapping[str, Any]) -> bool:
    if source.get("type") == "object":
        return True
    props = source.get("properties")
    # A seed-002 dict may have a *parameter* named "properties"; its spec has a
    # string "type", where a JSON Schema's properties map holds schemas.
    if isinstance(props, Mapping) and not isinstance(props.get("type"), str):
        return True
    return not source  # {} is an empty schema


def _parameter_dict_to_schema(params: Mapping[str, Any], where: str) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    required: list[str] = []
    for pname, spec in params.items():
        if not isinstance(spec, Mapping):
            if not hasattr(spec, "type"):
                raise ToolDefinitionError(f"{where}: parameter {pname!r} has no 'type'")
            spec = {k: getattr(spec, k) for k in ("type", "description", "required", "default", "enum") if hasattr(spec, k)}
        ptype = spec.get("type")
        if ptype not in _JSON_SCHEMA_TYPES:
            raise ToolDefinitionError(
                f"{where}: parameter {pname!r} has type {ptype!r}; expected one of {sorted(_JSON_SCHEMA_TYPES)}"
            )
        # Keep any other JSON Schema keywords (items, minimum...) the caller wrote;
        # only the boolean "required" is seed 002's own and moves to the object.
        prop: dict[str, Any] = {k: v for k, v in spec.items() if k != "required" and v is not None}
        if not prop.get("description"):
            prop.pop("description", None)
        if "enum" in prop:
            if not prop["enum"]:
                del prop["enum"]
            else:
                prop["enum"] = list(prop["enum"])
        properties[str(pname)] = prop
        if spec.get("required"):
            required.append(str(pname))
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema
