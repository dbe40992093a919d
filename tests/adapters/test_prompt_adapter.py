"""The prompt adapter teaches a call family through the system prompt and demonstrations.

The properties that matter: the prompt shows the family's own rendering of a
call for the offered tools, and everything it shows parses back, with that
family's parser, into exactly the calls it meant.
"""

from __future__ import annotations

import pytest

from utp.adapters import PromptDefinitionAdapter, get_definition_adapter
from utp.formats import PRESETS
from utp.parsers import family_names, get_family, parse_response
from utp.types import Tool

WEATHER = Tool(
    name="get_weather",
    description="Get the current weather for a city. Uses live data.",
    parameters={
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "City name"},
            "units": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        },
        "required": ["city"],
    },
)
READ_FILE = Tool(
    name="read_file",
    description="Read a text file.",
    parameters={
        "type": "object",
        "properties": {"path": {"type": "string"}, "max_lines": {"type": "integer", "minimum": 1}},
        "required": ["path", "max_lines"],
    },
)
LIST_DIR = Tool(name="list_dir", description="List a directory.", parameters={"type": "object", "properties": {}})
TOOLS = [WEATHER, READ_FILE, LIST_DIR]

PRESET_FAMILIES = sorted({b.prompt_family for b in PRESETS.values() if b.prompt_family})
ALL_FAMILIES = family_names()


def test_every_preset_family_is_registered():
    assert set(PRESET_FAMILIES) <= set(ALL_FAMILIES)


def _adapter(family: str, few_shot: bool = False) -> PromptDefinitionAdapter:
    adapter = get_definition_adapter("prompt", family=family, few_shot=few_shot)
    assert isinstance(adapter, PromptDefinitionAdapter)
    return adapter


def _pairs(parsed):
    return [(c.name, c.arguments) for c in parsed.tool_calls]


@pytest.mark.parametrize("family", PRESET_FAMILIES)
def test_prompt_sends_no_native_tools(family):
    assert _adapter(family).format_tools(TOOLS) is None


@pytest.mark.parametrize("family", PRESET_FAMILIES)
def test_system_prompt_lists_every_tool_and_shows_the_rendered_example(family):
    adapter = _adapter(family)
    prompt = adapter.format_system_prompt("You are a helpful assistant.", TOOLS)
    assert prompt.startswith("You are a helpful assistant.\n\n")
    for tool in TOOLS:
        assert tool.name in prompt
    example = get_family(family).render(adapter.example_calls(TOOLS)[:1])
    assert example in prompt
    assert "ONLY" in prompt
    assert "If no tool fits" in prompt
    assert "plain text" in prompt


@pytest.mark.parametrize("family", PRESET_FAMILIES)
def test_examples_in_the_prompt_parse_back_with_the_family_parser(family):
    adapter = _adapter(family)
    calls = adapter.example_calls(TOOLS)
    assert [c.name for c in calls] == ["get_weather", "read_file"]
    assert calls[0].arguments == {"city": "Paris"}
    assert calls[1].arguments == {"path": "README.md", "max_lines": 1}
    parsed = parse_response(get_family(family).render(calls), tools=TOOLS, format=family)
    assert _pairs(parsed) == [(c.name, c.arguments) for c in calls]


@pytest.mark.parametrize("family", PRESET_FAMILIES)
def test_demonstrations_parse_back_into_the_demonstrated_calls(family):
    demos = _adapter(family, few_shot=True).demonstrations(TOOLS)
    roles = [m["role"] for m in demos]
    # a greeting answered without a tool, then two call exchanges
    # (user, assistant call, user results, assistant answer)
    assert roles == ["user", "assistant"] + ["user", "assistant", "user", "assistant"] * 2
    call_turns = [demos[3], demos[7]]
    assert _pairs(parse_response(call_turns[0]["content"], tools=TOOLS, format=family)) == [
        ("get_weather", {"city": "Paris"})
    ]
    assert _pairs(parse_response(call_turns[1]["content"], tools=TOOLS, format=family)) == [
        ("read_file", {"path": "README.md", "max_lines": 1})
    ]
    for answer in (demos[1], demos[5], demos[9]):
        assert parse_response(answer["content"], tools=TOOLS).tool_calls == []
    assert demos[0]["content"] == "Hi there!"


@pytest.mark.parametrize("family", ALL_FAMILIES)
def test_every_registered_family_can_be_taught_and_read_back(family):
    adapter = _adapter(family, few_shot=True)
    prompt = adapter.format_system_prompt("", TOOLS)
    assert get_family(family).render(adapter.example_calls(TOOLS)[:1]) in prompt
    demos = adapter.demonstrations(TOOLS)
    parsed = parse_response(demos[3]["content"], tools=TOOLS, format=family)
    assert _pairs(parsed) == [("get_weather", {"city": "Paris"})]


def test_hermes_lists_tools_inside_tools_tags_like_qwen_templates():
    prompt = _adapter("hermes").format_system_prompt("", [WEATHER])
    assert '<tools>\n{"type": "function", "function": {"name": "get_weather"' in prompt
    assert "<tool_call>" in prompt


def test_pythonic_lists_python_signatures():
    prompt = _adapter("pythonic").format_system_prompt("", [WEATHER])
    assert 'get_weather(city: str, units: Literal["celsius", "fahrenheit"] | None = None)' in prompt


def test_other_families_list_compact_json_definitions():
    prompt = _adapter("json").format_system_prompt("", [WEATHER])
    assert '{"name": "get_weather", "description": "Get the current weather for a city. Uses live data."' in prompt


def test_one_tool_shows_no_parallel_example_two_tools_do():
    assert "several tools" not in _adapter("hermes").format_system_prompt("", [WEATHER])
    assert "several tools" in _adapter("hermes").format_system_prompt("", [WEATHER, READ_FILE])


def test_no_tools_leaves_the_prompt_alone_and_demonstrates_nothing():
    adapter = _adapter("hermes", few_shot=True)
    assert adapter.format_system_prompt("Base.", []) == "Base."
    assert adapter.demonstrations([]) == []


def test_empty_base_prompt_gives_just_the_instructions():
    assert _adapter("hermes").format_system_prompt("", [WEATHER]).startswith("# Tools")


def test_demonstrations_only_with_few_shot():
    assert _adapter("hermes", few_shot=False).demonstrations(TOOLS) == []


def test_lookup_tools_are_demonstrated_with_a_question_naming_the_value():
    demos = _adapter("hermes", few_shot=True).demonstrations([WEATHER])
    assert demos[2]["content"] == "What is the weather for Paris?"


def test_other_tools_are_requested_with_the_description_and_the_values_in_place():
    send = Tool(
        name="send_email",
        description="Send an email to a recipient. Uses SMTP.",
        parameters={
            "type": "object",
            "properties": {"recipient": {"type": "string", "format": "email"}, "subject": {"type": "string"}},
            "required": ["recipient", "subject"],
        },
    )
    demos = _adapter("json", few_shot=True).demonstrations([send])
    assert demos[2]["content"] == "Send an email to alice@example.com (subject: example subject)."


def test_value_replaces_no_phrase_across_a_preposition():
    find = Tool(
        name="locate_customer",
        description="Find a customer by email address.",
        parameters={"type": "object", "properties": {"email": {"type": "string"}}, "required": ["email"]},
    )
    demos = _adapter("json", few_shot=True).demonstrations([find])
    assert demos[2]["content"] == "Find a customer by email address (email: alice@example.com)."


def test_demonstrated_results_use_the_family_result_wrapping():
    demos = _adapter("hermes", few_shot=True).demonstrations([WEATHER])
    assert demos[4]["role"] == "user"
    assert demos[4]["content"].startswith("<tool_response>")


def test_demonstrated_result_is_realistic_and_the_answer_quotes_it():
    demos = _adapter("json", few_shot=True).demonstrations([WEATHER])
    assert demos[4]["content"] == 'Tool results:\n[get_weather] {"weather": 18}'
    assert "status" not in demos[4]["content"]
    assert demos[5]["content"] == "The weather for Paris is 18."


def test_demonstrations_open_with_a_greeting_answered_without_a_tool():
    demos = _adapter("pythonic", few_shot=True).demonstrations([WEATHER])
    assert [m["content"] for m in demos[:2]] == ["Hi there!", "Hello! How can I help you?"]
    assert parse_response(demos[1]["content"], tools=[WEATHER]).tool_calls == []


def test_restraint_example_avoids_questions_a_tool_could_answer():
    geo = Tool(name="country_facts", description="Look up the capital of a country.")
    prompt = _adapter("hermes").format_system_prompt("", [geo])
    assert "What is the capital of France?" not in prompt
    assert "If no tool fits the request (like \"Say hello in Spanish.\")" in prompt
    assert "What is the capital of France?" in _adapter("hermes").format_system_prompt("", [WEATHER])


def test_prompt_accepts_definitions_in_any_shape():
    raw = [{"type": "function", "function": {"name": "get_weather", "parameters": WEATHER.parameters}}]
    assert "get_weather" in _adapter("hermes").format_system_prompt("", raw)


@pytest.mark.parametrize("family", ALL_FAMILIES)
def test_prompt_adapter_resolves_family_aliases_to_the_family(family):
    for alias in get_family(family).aliases:
        if get_family(alias).name == family:  # an alias two families claim resolves to the first
            assert PromptDefinitionAdapter(alias).family_name == family
