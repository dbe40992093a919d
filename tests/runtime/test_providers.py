import asyncio
import enum
from pathlib import Path
from typing import Literal, Optional

import pytest

from utp.providers import FunctionToolProvider, ProviderAdapter, to_tool_result, tool_from_function
from utp.types import ErrorKind, ToolResult, ToolTier


class Units(enum.Enum):
    C = "celsius"
    F = "fahrenheit"


def forecast(city: str, days: int = 3, units: Units = Units.C, tags: list[str] | None = None,
             mode: Literal["fast", "full"] = "fast", ratio: Optional[float] = None, out: Path = Path("x")) -> dict:
    """Weather forecast for a city.

    Longer explanation that is not part of the summary.

    Args:
        city: Name of the city,
            as the user wrote it.
        days (int): How many days.

    Returns:
        The forecast.
    """
    return {}


def test_schema_from_signature_and_docstring():
    tool = tool_from_function(forecast, tier="walk")
    props = tool.parameters["properties"]
    assert tool.description == "Weather forecast for a city."
    assert tool.tier is ToolTier.WALK
    assert tool.required == ["city"]
    assert props["city"] == {"type": "string", "description": "Name of the city, as the user wrote it."}
    assert props["days"] == {"type": "integer", "description": "How many days.", "default": 3}
    assert props["units"] == {"enum": ["celsius", "fahrenheit"]}
    assert props["tags"]["anyOf"][0] == {"type": "array", "items": {"type": "string"}}
    assert props["mode"] == {"enum": ["fast", "full"], "default": "fast"}
    assert props["ratio"]["type"] == ["number", "null"]
    assert props["out"]["format"] == "path"
    assert tool.parameters["additionalProperties"] is False


def test_kwargs_allow_extra_properties_and_explicit_schema_wins():
    def anything(**kwargs):
        return kwargs

    assert "additionalProperties" not in tool_from_function(anything).parameters
    explicit = {"type": "object", "properties": {"q": {"type": "string"}}}
    assert tool_from_function(forecast, parameters=explicit).parameters == explicit


def test_lambda_needs_a_name():
    with pytest.raises(ValueError, match="pass name="):
        tool_from_function(lambda: 1)
    assert tool_from_function(lambda: 1, name="one").name == "one"


def test_function_provider_executes_and_reports_unknown_names():
    provider = FunctionToolProvider([forecast])
    assert asyncio.run(provider.execute_tool("forecast", {"city": "Oslo"})).result == {}
    missing = asyncio.run(provider.execute_tool("nope", {}))
    assert missing.error_kind is ErrorKind.UNKNOWN_TOOL and "forecast" in missing.error
    with pytest.raises(ValueError, match="added twice"):
        provider.add(forecast)


def test_to_tool_result_shapes():
    plain = to_tool_result({"a": 1}, call_id="1", tool_name="t")
    assert plain.result == {"a": 1} and plain.executed and plain.call_id == "1"
    ours = to_tool_result(ToolResult(None, "", error="bad"), call_id="2", tool_name="t")
    assert ours.error_kind is ErrorKind.EXECUTION_ERROR and ours.tool_name == "t" and ours.call_id == "2"

    class Foreign:
        success = False
        error = None
        result = None

    assert "without a message" in to_tool_result(Foreign(), call_id=None, tool_name="t").error


def test_provider_adapter_overrides_tier_and_confirmation():
    class Sync:  # sync methods work too
        def list_tools(self):
            return [{"name": "rm", "parameters": {"path": {"type": "string", "required": True}}}]

        def execute_tool(self, name, params):
            return f"removed {params['path']}"

    adapter = ProviderAdapter(Sync(), tier="run", requires_confirmation=True)
    tools = asyncio.run(adapter.list_tools())
    assert tools[0].tier is ToolTier.RUN and tools[0].requires_confirmation and tools[0].required == ["path"]
    assert asyncio.run(adapter.execute_tool("rm", {"path": "x"})).result == "removed x"
