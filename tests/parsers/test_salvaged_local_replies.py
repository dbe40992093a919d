"""Replies local models wrote around their calls, salvaged as gezel's parser salvages them.

Sources (transcribed outside the repository, see docs/accuracy.md): bendyline/gezel's
tests, whose strings are marked as caught from Gemma 4 E4B, Qwen 3.5/3.6 (some served by MLX)
and LFM2.5 runs:

* ``call:write_artifact{content:<|"|>…<|"|>}`` with the call tokens gone but the string tokens kept,
  the value over several lines;
* ```` ```javascript ```` around ``write_file({...})``, the value's quotes or line breaks unescaped;
* ``<list_projects />``, ``<tool_call>browser_snapshot`` (the name alone), ``invoke write_file {…}``;

and erfanzar/EasyDeL's parser tests: Kimi K2's id under a namespace of the model's own
(``ns.get_weather:0``), GigaChat 3's ``function call{…}`` with its special tokens stripped.
"""

from __future__ import annotations

import pytest

from utp.parsers import parse_response
from utp.types import Tool

from .conftest import assert_every_cut_matches

ARTIFACT = Tool("write_artifact", parameters={"type": "object", "properties": {"content": {"type": "string"}}})
WRITE = Tool("write_file", parameters={"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}}})
LIST = Tool("list_projects", parameters={"type": "object", "properties": {}})
CREATE = Tool("create_project", parameters={"type": "object", "properties": {"name": {"type": "string"}, "about": {"type": "string"}}})
SNAPSHOT = Tool("browser_snapshot", parameters={"type": "object", "properties": {}})
NAVIGATE = Tool("browser_navigate", parameters={"type": "object", "properties": {"url": {"type": "string"}}})
TOOLS = [ARTIFACT, WRITE, LIST, CREATE, SNAPSHOT, NAVIGATE]


def _calls(text: str, tools: list[Tool] | None = TOOLS) -> list[tuple[str, dict]]:
    return [(c.name, c.arguments) for c in parse_response(text, tools=tools).tool_calls]


# --- a bare Gemma call whose string tokens survived ----------------------------------------------


def test_a_bare_gemma_call_with_string_tokens_may_run_over_lines() -> None:
    """Only a one-line bare call was read: the value's line breaks left the call as text."""
    text = 'call:write_artifact{content:<|"|># Plan\n\n## 1. HTML\n- A single `index.html` file.<|"|>}\nSaved.'
    assert _calls(text) == [("write_artifact", {"content": "# Plan\n\n## 1. HTML\n- A single `index.html` file."})]
    assert parse_response(text, tools=TOOLS).content == "Saved."
    assert_every_cut_matches(text, TOOLS, step=3)


@pytest.mark.parametrize(
    "text",
    [
        'call:write_artifact{content:<|"|>a\nb<|"|>} and then more words',  # the line goes on after the call
        'Use call:write_artifact{content:<|"|>a\nb<|"|>}',  # mid-sentence
        'call:write_artifact{content:<|"|>a\nb',  # the value never closes: it may have been cut
        'call:nobody_offered{content:<|"|>a\nb<|"|>}',
    ],
)
def test_a_bare_gemma_call_over_lines_that_is_not_one(text: str) -> None:
    assert _calls(text) == []
    assert_every_cut_matches(text, TOOLS, step=2)


# --- calls in a JavaScript fence, and bent quoting in code fences ----------------------------------


@pytest.mark.parametrize("label", ["javascript", "js", "typescript", "ts"])
def test_a_javascript_fence_of_nothing_but_offered_calls(label: str) -> None:
    """Only Python's labels (or none) were read."""
    text = f'```{label}\nwrite_file({{"path": "index.html", "content": "<h1>Hi</h1>"}})\n```'
    assert _calls(text) == [("write_file", {"path": "index.html", "content": "<h1>Hi</h1>"})]
    assert_every_cut_matches(text, TOOLS, step=3)


def test_a_javascript_fence_of_code_stays_content() -> None:
    text = '```javascript\nconst x = write_file({"path": "a"});\nconsole.log(x);\n```'
    assert _calls(text) == []
    assert _calls('```javascript\nwrite_file({"path": "a", "content": "x"})\n```', None) == []  # no tools offered


def test_line_breaks_and_quotes_left_unescaped_in_a_fenced_call() -> None:
    """The strict reader refused them, and a fence had no lenient reading."""
    broken_lines = '```javascript\nwrite_file({"path": "index.html", "content": "<!DOCTYPE html>\n<html lang=\\"en\\">\n</html>"})\n```'
    assert _calls(broken_lines) == [("write_file", {"path": "index.html", "content": '<!DOCTYPE html>\n<html lang="en">\n</html>'})]
    bare_quotes = '```python\nwrite_file(path="game.html", content="<div class="board">Hi</div>")\n```'
    assert _calls(bare_quotes) == [("write_file", {"path": "game.html", "content": '<div class="board">Hi</div>'})]
    assert_every_cut_matches(broken_lines, TOOLS, step=5)


# --- a call tag with nothing but the tool's name ---------------------------------------------------


def test_a_self_closing_tool_element_with_a_blank_before_its_end() -> None:
    """``<list_projects/>`` was a call and ``<list_projects />`` was not."""
    text = '<list_projects />\nthen\n<create_project name="Atari Adventure" about="game" />'
    assert _calls(text) == [("list_projects", {}), ("create_project", {"name": "Atari Adventure", "about": "game"})]
    assert_every_cut_matches(text, TOOLS, step=3)


def test_a_call_tag_holding_only_an_offered_tool_s_name() -> None:
    text = '<tool_call>browser_navigate url="https://weather.com"\n<tool_call>browser_snapshot'
    assert _calls(text) == [("browser_navigate", {"url": "https://weather.com"}), ("browser_snapshot", {})]
    assert _calls("<tool_call>browser_snapshot />") == [("browser_snapshot", {})]
    assert_every_cut_matches(text, TOOLS, step=2)


@pytest.mark.parametrize(
    "text",
    [
        "<tool_call>browser_snapshot is what I would use",
        "<tool_call>browser_snapshot\nThen I will read the page.",
        "<tool_call>nobody_offered",
    ],
)
def test_a_call_tag_whose_name_is_followed_by_prose_or_names_no_tool(text: str) -> None:
    assert _calls(text) == []
    assert_every_cut_matches(text, TOOLS, step=2)


# --- a verb before NAME {json} ---------------------------------------------------------------------


def test_a_call_line_opened_by_a_verb_that_calls() -> None:
    text = 'invoke write_file {\n  "path": "preflight.txt",\n  "content": "FLIGHT OK"\n}'
    assert _calls(text) == [("write_file", {"path": "preflight.txt", "content": "FLIGHT OK"})]
    assert _calls('CALL write_file {"path": "a", "content": "b"}') == [("write_file", {"path": "a", "content": "b"})]
    assert_every_cut_matches(text, TOOLS, step=3)


@pytest.mark.parametrize(
    "text",
    [
        'Sure! invoke write_file {"path": "a.txt", "content": "hi"} done.',
        'invoke write_file {"path": "a.txt", "content": "hi"} to save it',
        'I will call write_file {"path": "a.txt", "content": "hi"}',
    ],
)
def test_a_verb_and_a_call_in_a_sentence_stay_prose(text: str) -> None:
    assert _calls(text) == []


# --- a namespace of the model's own; GigaChat's role with its tokens stripped ----------------------

WEATHER = Tool("get_weather", parameters={"type": "object", "properties": {"location": {"type": "string"}}})


def test_a_namespace_of_the_model_s_own_before_an_offered_tool_s_name() -> None:
    """``ns.get_weather`` named no tool: only ``functions.`` and a few other prefixes were known (EasyDeL's Kimi test)."""
    text = '<|tool_calls_section_begin|><|tool_call_begin|>ns.get_weather:0<|tool_call_argument_begin|>{"location":"Paris"}<|tool_call_end|><|tool_calls_section_end|>'
    assert _calls(text, [WEATHER]) == [("get_weather", {"location": "Paris"})]
    # the name after the namespace must be an offered tool's: ``ns.lookup`` is no get_weather call
    assert "get_weather" not in [name for name, _ in _calls(text.replace("ns.get_weather", "ns.lookup"), [WEATHER])]
    assert_every_cut_matches(text, [WEATHER], step=9)


def test_gigachat_s_role_with_its_special_tokens_stripped() -> None:
    text = 'hi\nfunction call{"name":"foo","arguments":{"x":1}}'
    assert _calls(text, None) == [("foo", {"x": 1})]
    assert parse_response(text).content == "hi"
    assert_every_cut_matches(text, None, step=1)


@pytest.mark.parametrize(
    "text",
    [
        'This function call{"name":"foo","arguments":{"x":1}}',  # in a sentence
        'function call{"x": 1}',  # not a call object
        'function call{"name":"foo"}',  # no arguments
        "function call{'name':'foo','arguments':{}}",  # not valid JSON: ordinary words need it
    ],
)
def test_gigachat_s_stripped_role_that_is_no_call(text: str) -> None:
    assert _calls(text, None) == []
    assert_every_cut_matches(text, None, step=1)


# --- a bare Gemma call whose first key opens with $ or @ ------------------------------------------

LOOKUP = Tool("lookup")


def test_a_bare_gemma_call_whose_first_key_opens_with_a_dollar() -> None:
    """``{$id:…}`` did not open a call's arguments (Mference's tests), though the reader takes such keys."""
    text = 'call:lookup{$id:<|"|>item<|"|>,file-path:<|"|>/tmp/x<|"|>,nested:{child-key:7}}'
    assert _calls(text, [LOOKUP]) == [("lookup", {"$id": "item", "file-path": "/tmp/x", "nested": {"child-key": 7}})]
    assert _calls('call:lookup{@type:<|"|>Place<|"|>}', [LOOKUP]) == [("lookup", {"@type": "Place"})]
    assert_every_cut_matches(text, [LOOKUP], step=1)


def test_a_dollar_after_call_in_prose_stays_prose() -> None:
    assert _calls("Then call:lookup{$id} is templated in the shell.", [LOOKUP]) == []


# --- an apostrophe inside a Gemma value in single quotes -------------------------------------------

NOTE = Tool("create_note")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<|tool_call>call:create_note(title='Bob's note', metadata={tags:['mlx','swift'], count:2})<tool_call|>",
         {"title": "Bob's note", "metadata": {"tags": ["mlx", "swift"], "count": 2}}),
        ("<|tool_call>call:create_note{title:'it's', body:'x'}<tool_call|>", {"title": "it's", "body": "x"}),
    ],
)
def test_an_apostrophe_inside_a_single_quoted_gemma_value(text: str, expected: dict) -> None:
    """The first ``'`` closed the value and the word after it made the call unreadable (MLXFoundationModel's tests)."""
    parsed = parse_response(text, tools=[NOTE])
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("create_note", expected)]
    assert any("apostrophe" in repair for repair in parsed.tool_calls[0].repairs)
    assert_every_cut_matches(text, [NOTE], step=3)


def test_a_single_quoted_value_no_later_quote_closes_stays_unreadable() -> None:
    parsed = parse_response("<|tool_call>call:create_note{title:'a'b}<tool_call|>", tools=[NOTE])
    assert parsed.tool_calls == []


# --- LFM2's list with its opening stripped; quotes left unescaped in a glued or tagged call ----------

READ = Tool("Read", parameters={"type": "object", "properties": {"path": {"type": "string"}}})
BASH = Tool("Bash", parameters={"type": "object", "properties": {"command": {"type": "string"}, "description": {"type": "string"}}})


def test_an_lfm2_call_list_whose_opening_the_server_stripped() -> None:
    """``f(…)]<|tool_call_end|>``: the ``]`` and the end token made the answer no bare call (liquid-text's issue #42)."""
    text = "Read(path='/home/user/foo.c')]<|tool_call_end|><|im_end|>"
    parsed = parse_response(text, tools=[READ])
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("Read", {"path": "/home/user/foo.c"})]
    assert parsed.content == ""
    assert _calls("Read(path='/home/user/foo.c')]<|tool_call_end|>", None) == []  # only for an offered tool
    assert_every_cut_matches(text, [READ], step=3)


def test_a_value_s_inner_quotes_closed_right_before_its_own() -> None:
    """``"ls -la "/c/x"",``: the quote after the inner one was read as a missing comma."""
    tagged = '<tool_call>{"name":"Bash","arguments":{"command":"ls -la "/c/x"","description":"List"}}</tool_call>'
    assert _calls(tagged, [BASH]) == [("Bash", {"command": 'ls -la "/c/x"', "description": "List"})]
    glued = 'Bash{"command":"ls -la "/c/Users/lk"","description":"List working directory contents"}'
    assert _calls(glued, [BASH]) == [("Bash", {"command": 'ls -la "/c/Users/lk"', "description": "List working directory contents"})]
    assert_every_cut_matches(glued, [BASH], step=3)


def test_a_glued_call_that_needs_a_repair_in_a_sentence_stays_prose() -> None:
    assert _calls('Try Bash{"command":"ls -la "/c/x"","description":"List"} next time.', [BASH]) == []


def test_a_glued_call_the_output_stopped_inside_is_not_read() -> None:
    """rvllm's policy, and UTP's for unmarked text: ``foo{"a":{"b":1}`` may have been cut."""
    assert _calls('call:foo{"a":{"b":1}', [Tool("foo", parameters={"type": "object", "properties": {"a": {"type": "object"}}})]) == []
    assert _calls('Bash{"command":"ls -la "/c/x"","description":"Li', [BASH]) == []
