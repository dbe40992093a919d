"""A fenced call a lead-in line introduces, with prose after it.

Small models narrate the call they make: "I can use the `get_weather` tool.
Here's how:", then call JSON in a ```` ```json ```` fence, then "This will
call the API." Documentation introduces the same JSON as a sample ("Example
output:", "The API takes:"). With tools offered, a fence so introduced is a
call when every name in it is an offered tool and someone is said to act: the
model ("I", "let me", a step of its plan) or the user it tells how to run the
call it means ("you can use the write_file function. Here's how you can do
it:"); a lead-in presenting a sample or a result keeps it a sample, and so
does one where nobody acts ("Here's how to call the tool:"). Without tools it
stays a sample. Call JSON lines inside a
sample fence are the fence's, never calls of their own lines. A fence under
another label left open to the end of the answer ends it, as a closed one
would.
"""

from __future__ import annotations

import pytest

from utp.parsers import parse_response
from utp.types import Tool

from .conftest import assert_every_cut_matches, streamed_at_cuts

PARAMETERS = {"type": "object", "properties": {"city": {"type": "string"}, "path": {"type": "string"}, "command": {"type": "string"}}}
TOOLS = [Tool(name, parameters=PARAMETERS) for name in ("get_weather", "read_file", "run_command", "light.turn_off")]

CALL = '{"name": "get_weather", "arguments": {"city": "New York"}}'


def _calls(text: str, tools: list[Tool] | None = TOOLS) -> list[tuple]:
    return [(c.name, c.arguments) for c in parse_response(text, tools=tools).tool_calls]


@pytest.mark.parametrize(
    "lead_in",
    [
        "Sure! I can use the `get_weather` tool. Here's how:",
        "Let me check the weather:",
        "I'm calling the tool now:",
        "First, look it up:",
        "Now the forecast:",
        # real (qwen2.5-coder-1.5b through llama-server; an issue report's Qwen model): the model tells the
        # user how to run the call it means to make, and the user wanted it made
        "To modify the default port, you can use the `get_weather` function. Here's how you can do it:",
    ],
)
def test_an_introduced_fence_of_an_offered_tool_is_a_call(lead_in: str) -> None:
    text = f"{lead_in}\n\n```json\n{CALL}\n```\n\nThis will return the forecast for New York."
    parsed = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("get_weather", {"city": "New York"})]
    assert "```" not in parsed.content
    assert parsed.content.startswith(lead_in) and parsed.content.endswith("New York.")


def test_each_introduced_fence_is_a_call_in_order() -> None:
    text = (
        'First, read the file:\n\n```json\n{"name": "read_file", "arguments": {"path": "test.py"}}\n```\n\n'
        'Then run the tests:\n\n```json\n{"name": "run_command", "arguments": {"command": "pytest"}}\n```'
    )
    assert _calls(text) == [("read_file", {"path": "test.py"}), ("run_command", {"command": "pytest"})]


def test_several_calls_in_one_introduced_fence() -> None:
    text = (
        "I'll use both tools. Here's how:\n\n```json\n"
        '{"name": "read_file", "arguments": {"path": "a.py"}}\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n'
        "```\n\nAfter these run I will summarise."
    )
    assert _calls(text) == [("read_file", {"path": "a.py"}), ("get_weather", {"city": "Paris"})]


@pytest.mark.parametrize(
    "lead_in",
    [
        "Example output:",
        "The API takes:",
        "The response looks like this:",
        "For instance, the model might write:",
        "A call is formatted as:",
        "Such a request:",
        "The function returns:",
        "Here is the schema:",
        # real (smollm2-135m): an earlier call echoed as what came back
        "The tool returned an error message, and the error message is:",
        # nobody is acting
        "Here's how to call the tool:",
    ],
)
def test_a_fence_introduced_as_a_sample_is_not_a_call(lead_in: str) -> None:
    text = f"{lead_in}\n```json\n{CALL}\n```\nThe model then waits for the result."
    parsed = parse_response(text, tools=TOOLS)
    assert parsed.tool_calls == []
    assert parsed.content == text


@pytest.mark.parametrize(
    "text",
    [
        # no tools offered: a sample
        f"Here's how:\n\n```json\n{CALL}\n```\n\nThis will call the API.",
    ],
)
def test_without_tools_an_introduced_fence_is_a_sample(text: str) -> None:
    assert _calls(text, tools=None) == []


def test_a_name_no_tool_has_keeps_the_fence_a_sample() -> None:
    text = 'Here\'s how:\n\n```json\n{"name": "send_email", "arguments": {"to": "a@b.c"}}\n```\n\nThis will send it.'
    assert _calls(text) == []


@pytest.mark.parametrize("with_tools", [False, True])
def test_call_lines_inside_a_sample_fence_are_not_calls_of_their_own_lines(with_tools: bool) -> None:
    """The second call object of a sample fence was read as a call on its own line."""
    text = (
        "Example output:\n\n```json\n"
        '{"name": "read_file", "arguments": {"path": "a.py"}}\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n'
        "```\n\nThe model then waits."
    )
    for fence in ("```json", "```"):
        assert _calls(text.replace("```json", fence), tools=TOOLS if with_tools else None) == []


def test_a_call_line_after_a_closed_sample_fence_is_still_placed_on_its_own() -> None:
    text = 'The API takes:\n```text\nsome sample\n```\n{"name": "get_weather", "arguments": {"city": "Paris"}}'
    assert _calls(text) == [("get_weather", {"city": "Paris"})]


def test_an_unclosed_fence_under_another_label_ending_the_answer_is_a_call() -> None:
    text = '```homeassistant\n{"name": "light.turn_off", "parameters": {"city": "bedroom"}}'
    assert _calls(text) == [("light.turn_off", {"city": "bedroom"})]
    assert _calls(text, tools=None) == []
    assert _calls(text + "\n```\nDone, the light is off.") == []  # closed, with prose after: a sample


@pytest.mark.parametrize(
    "text",
    [
        f"Sure! Here's how:\n\n```json\n{CALL}\n```\n\nThis will return the forecast.",
        f"Example output:\n```json\n{CALL}\n```\nThe model then waits.",
        '```homeassistant\n{"name": "light.turn_off", "parameters": {"city": "bedroom"}}',
    ],
)
def test_streaming_any_cut_matches_one_shot(text: str) -> None:
    assert_every_cut_matches(text, TOOLS, step=9)
    parsed = parse_response(text, tools=TOOLS)
    assert streamed_at_cuts(text, list(range(0, len(text), 5)), TOOLS) == (parsed.content, [(c.name, c.arguments) for c in parsed.tool_calls])


# --- the same lead-ins before call JSON without a fence -------------------------------------------

#: real (AutoGen's manual tool-calling example with Ollama), prose added after it
TWO_CALLS = 'I will call two functions, get_weather and read_file:\n[{"name": "get_weather", "arguments": {"city": "New York"}}, {"name": "read_file", "arguments": {"path": "a.txt"}}]'


def test_call_json_after_a_lead_in_where_someone_acts_is_a_call_with_prose_after_it() -> None:
    """It was read only when it ended the answer; on a line of its own without the colon it was read anyway."""
    text = TWO_CALLS + "\n\nI will report back once both return."
    parsed = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("get_weather", {"city": "New York"}), ("read_file", {"path": "a.txt"})]
    assert parsed.content == "I will call two functions, get_weather and read_file:\nI will report back once both return."


@pytest.mark.parametrize(
    "text",
    [
        f"Example output:\n{CALL}\nThe model then waits for the result.",
        f"Here's how to call the tool:\n{CALL}\nThen the server runs it.",
        # real (gemma3-270m echoing its prompt's tool list): a listing, not a call
        f"# Tools\n\nYou can call these tools:\n\n{CALL}\n\nTo call a tool, reply with only the call.",
        TWO_CALLS.replace("get_weather", "send_email") + "\nMore.",  # a name no tool has
    ],
)
def test_call_json_after_a_sample_lead_in_with_prose_after_it_stays_prose(text: str) -> None:
    parsed = parse_response(text, tools=TOOLS)
    assert parsed.tool_calls == [] and parsed.content == text


def test_without_tools_call_json_after_a_lead_in_must_end_the_answer() -> None:
    assert _calls(TWO_CALLS + "\nMore.", tools=None) == []
    assert len(_calls(TWO_CALLS, tools=None)) == 2


# --- a fence labelled with the tool it calls ---------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "calls", "content"),
    [
        # the shape zeroclaw's parser reads for xAI's Grok models (its issue #1420)
        ('I\'ll read it.\n```tool read_file\n{"path": "/home/user/test.txt"}\n```\nDone.', [("read_file", {"path": "/home/user/test.txt"})], "I'll read it.\nDone."),
        (
            'First, the file.\n```tool read_file\n{"path": "/tmp/a.txt"}\n```\nThen the tests.\n```TOOL run_command\n{"command": "pytest"}\n```',
            [("read_file", {"path": "/tmp/a.txt"}), ("run_command", {"command": "pytest"})],
            "First, the file.\nThen the tests.",
        ),
    ],
)
def test_a_fence_labelled_tool_name_is_that_tools_call(text: str, calls: list, content: str) -> None:
    """The two-word label made the fence a mislabelled one, read only as the whole answer's call JSON."""
    parsed = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == calls
    assert parsed.content == content
    assert_every_cut_matches(text, TOOLS, step=9)


@pytest.mark.parametrize(
    "text",
    [
        '```tool send_email\n{"to": "a@b.c"}\n```',  # no such tool
        '```tool read_file\n{"file": "a.txt"}\n```',  # a key the tool does not take
        '```tool read_file\n{"path": "a.txt"}\nand some notes\n```',  # more than the object
    ],
)
def test_other_tool_labelled_fences_are_not_calls(text: str) -> None:
    assert _calls(text) == []


def test_a_tool_labelled_fence_the_output_ends_inside_is_read() -> None:
    assert _calls('Reading.\n```tool read_file\n{"path": "a.txt"}\n') == [("read_file", {"path": "a.txt"})]


def test_without_tools_a_tool_labelled_fence_is_a_sample() -> None:
    assert _calls('```tool read_file\n{"path": "a.txt"}\n```\nDone.', tools=None) == []
