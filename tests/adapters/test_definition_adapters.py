"""Definition adapters: the request's ``tools`` value and the system prompt per wire format."""

from __future__ import annotations

import pytest

from utp.adapters import (
    AnthropicDefinitionAdapter,
    OllamaDefinitionAdapter,
    OpenAIDefinitionAdapter,
    UnknownAdapterError,
    definition_adapter_names,
    get_definition_adapter,
    result_adapter_names,
)
from utp.protocols import ToolDefinitionAdapter
from utp.types import Tool, ToolFormat

SEARCH = Tool(
    name="search",
    description="Search code",
    parameters={
        "type": "object",
        "properties": {"query": {"type": "string", "minLength": 1}, "limit": {"type": "integer", "default": 10}},
        "required": ["query"],
        "additionalProperties": False,
    },
)


def test_openai_definition_adapter_formats_type_function():
    formatted = OpenAIDefinitionAdapter().format_tools([SEARCH])
    assert formatted[0]["type"] == "function"
    assert formatted[0]["function"]["name"] == "search"
    assert formatted[0]["function"]["description"] == "Search code"
    assert formatted[0]["function"]["parameters"] == SEARCH.parameters


def test_ollama_keeps_the_schema_as_written_including_keywords_it_may_drop():
    params = OllamaDefinitionAdapter().format_tools([SEARCH])[0]["function"]["parameters"]
    assert params["additionalProperties"] is False
    assert params["properties"]["query"]["minLength"] == 1


def test_parameters_always_have_type_and_properties():
    bare = Tool(name="ping", description="", parameters={"required": []})
    for name in ("openai", "ollama"):
        params = get_definition_adapter(name).format_tools([bare])[0]["function"]["parameters"]
        assert params["type"] == "object"
        assert params["properties"] == {}
    schema = AnthropicDefinitionAdapter().format_tools([bare])[0]["input_schema"]
    assert schema == {"required": [], "type": "object", "properties": {}}


def test_adapters_do_not_mutate_the_tool_schema():
    tool = Tool(name="ping", parameters={"required": []})
    OpenAIDefinitionAdapter().format_tools([tool])
    assert tool.parameters == {"required": []}


def test_anthropic_formats_input_schema():
    formatted = AnthropicDefinitionAdapter().format_tools([SEARCH])
    assert formatted == [{"name": "search", "description": "Search code", "input_schema": SEARCH.parameters}]


@pytest.mark.parametrize("name", ["openai", "ollama", "anthropic"])
def test_native_formats_accept_any_definition_shape(name):
    raw = [{"type": "function", "function": {"name": "search", "description": "Search code", "parameters": SEARCH.parameters}}]
    assert get_definition_adapter(name).format_tools(raw) == get_definition_adapter(name).format_tools([SEARCH])


@pytest.mark.parametrize("name", ["openai", "ollama", "anthropic", "none"])
def test_native_and_none_leave_the_system_prompt_unchanged(name):
    assert get_definition_adapter(name).format_system_prompt("Be brief.", [SEARCH]) == "Be brief."


@pytest.mark.parametrize("name", ["openai", "ollama", "anthropic", "none"])
def test_no_tools_means_no_tools_field(name):
    assert get_definition_adapter(name).format_tools([]) is None


def test_none_sends_no_tools_even_when_offered():
    assert get_definition_adapter("none").format_tools([SEARCH]) is None


def test_registry_names_match_the_format_bundle_vocabulary():
    from utp.formats import DEFINITION_FORMATS, RESULT_FORMATS

    assert set(definition_adapter_names()) == set(DEFINITION_FORMATS)
    assert set(result_adapter_names()) == set(RESULT_FORMATS)


def test_every_definition_adapter_satisfies_the_protocol():
    for name in definition_adapter_names():
        adapter = get_definition_adapter(name, family="hermes")
        assert isinstance(adapter, ToolDefinitionAdapter)


def test_registry_accepts_tool_format_members_and_case():
    assert isinstance(get_definition_adapter(ToolFormat.OPENAI), OpenAIDefinitionAdapter)
    assert isinstance(get_definition_adapter("Anthropic"), AnthropicDefinitionAdapter)


def test_unknown_names_are_errors_listing_the_known_ones():
    with pytest.raises(UnknownAdapterError, match="unknown definition format 'gemini'.*openai"):
        get_definition_adapter("gemini")
    with pytest.raises(UnknownAdapterError, match="unknown result format 'xml'.*text"):
        from utp.adapters import get_result_adapter

        get_result_adapter("xml")


def test_prompt_adapter_needs_a_family():
    with pytest.raises(UnknownAdapterError, match="family"):
        get_definition_adapter("prompt")


def test_prompt_adapter_rejects_unknown_family():
    from utp.parsers import UnknownFormatError

    with pytest.raises(UnknownFormatError, match="no_such_family"):
        get_definition_adapter("prompt", family="no_such_family")


def test_adapters_for_bundles():
    from utp.adapters import OpenAIResultAdapter, PromptDefinitionAdapter, TextResultAdapter, adapters_for
    from utp.formats import PRESETS

    definition, result = adapters_for(PRESETS["native-openai"])
    assert isinstance(definition, OpenAIDefinitionAdapter) and isinstance(result, OpenAIResultAdapter)
    definition, result = adapters_for(PRESETS["fewshot-json"])
    assert isinstance(definition, PromptDefinitionAdapter) and definition.few_shot
    assert isinstance(result, TextResultAdapter) and result.family == "json"


def test_native_definitions_can_also_teach_a_family_in_the_prompt():
    from utp.adapters import TaughtNativeDefinitionAdapter, adapters_for
    from utp.formats import FormatBundle

    definition, _ = adapters_for(FormatBundle("ollama", "auto", "ollama", "few_shot", "hermes"))
    assert isinstance(definition, TaughtNativeDefinitionAdapter)
    assert definition.format_tools([SEARCH])[0]["function"]["name"] == "search"
    prompt = definition.format_system_prompt("Base.", [SEARCH])
    assert prompt.startswith("Base.\n\n# Tools") and "<tool_call>" in prompt
    assert len(definition.demonstrations([SEARCH])) == 6
