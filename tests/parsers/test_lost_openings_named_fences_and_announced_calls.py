"""A call object that lost its opening, a fence labelled with its tool, and calls announced before prose.

Sources (transcribed outside the repository, see docs/accuracy.md):

* Kaden-Schutt/hipfire's parser tests: a Qwen ``<tool_call>`` body whose leading ``{"`` was lost;
* CodeinScrubs/coderAI's ```` ```tool_call:tool_write_file ```` fence holding the arguments;
* n4dlr/vibe-studio's ``execute_command({...})`` line between "I will run the command:" and "Done.";
* a list of calls after a special token whose first item names no tool (the readable ones kept);
* gompa/Gogen's ``{"results": [calls]}``: calls that came back, not a plan to run;
* willaaam/gemma-4-E2B-webgpu-vision's ``<tool>`` blocks, the call written as YAML (``name: read_file``);
* RajSaha25/ToolCallRefusal's "I will do this: {…} Done." on one line;
* hanief-fawzan/qoder-bridge's ``[assistant called tool: NAME with arguments: {…}]``, a proxy's record of
  past calls that models imitate;
* an agent's ``{"assistant_message": "…", "tool_calls": […]}`` (a Python test file of six small projects);
* gauravvij/localite's call lists whose items are keyed by the tool's name (``[{"grep_search": {…}}]``);
* Oct4Pie/toolbridge's element values among blank lines and quoted as CDATA, and agent-tool-parser's
  DSML parameter holding a CDATA section of XML.
"""

from __future__ import annotations

import pytest

from utp.parsers import parse_response
from utp.types import Tool

from .conftest import assert_every_cut_matches

READ = Tool("read", parameters={"type": "object", "properties": {"path": {"type": "string"}}})
WRITE = Tool("write_file", parameters={"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}}})
RUN = Tool("execute_command", parameters={"type": "object", "properties": {"command": {"type": "string"}}})
SEARCH = Tool("glob_search", parameters={"type": "object", "properties": {"pattern": {"type": "string"}}})
LIST = Tool("list_files", parameters={"type": "object", "properties": {"path": {"type": "string"}}})
RUN_WEB = Tool("run_web", parameters={"type": "object", "properties": {"entry": {"type": "string"}}})
TOOLS = [READ, WRITE, RUN, SEARCH, LIST, RUN_WEB]


def _calls(text: str, tools: list[Tool] | None = TOOLS) -> list[tuple[str, dict]]:
    return [(c.name, c.arguments) for c in parse_response(text, tools=tools).tool_calls]


# --- a call object that lost its opening ----------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        '<tool_call>\nname": "read", "arguments": {"path": "/tmp/x"}\n</tool_call>',  # ``{"`` lost, its closer too
        '<tool_call>\n"name": "read", "arguments": {"path": "/tmp/x"}}\n</tool_call>',  # only ``{`` lost
        '<tool_call>name": "read", "arguments": {"path": "/tmp/x"}}</tool_call> Reading it.',
    ],
)
def test_a_call_tag_whose_object_lost_its_opening_is_read_with_it_put_back(text: str) -> None:
    """The body began with a name key's word and its quote, so the tag was read as holding no call."""
    result = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments) for c in result.tool_calls] == [("read", {"path": "/tmp/x"})]
    assert any("opening" in d.reason and "lost" in d.reason for d in result.diagnostics)
    assert_every_cut_matches(text, TOOLS, step=3)


@pytest.mark.parametrize(
    "text",
    [
        '<tool_call>"hello"</tool_call>',  # a quoted string, no name key
        '<tool_call>name": is the key to use</tool_call>',  # no object follows
        '<tools>name": "read", "arguments": {"path": "/tmp/x"}}</tools>',  # a weak tag: prompt echoes use it
        '<tool_call>\nname": "read", "arguments": {"path": "/tmp/x"}',  # never closed: still arriving, or cut off
    ],
)
def test_a_body_that_only_starts_like_a_key_stays_unread(text: str) -> None:
    assert _calls(text) == []
    assert_every_cut_matches(text, TOOLS, step=2)


# --- a fence labelled with its tool ---------------------------------------------------------------


@pytest.mark.parametrize("label", ["tool_call:write_file", "tool_call: write_file", "function:write_file", "tool write_file"])
def test_a_fence_labelled_with_a_call_word_and_the_tool_holds_its_arguments(label: str) -> None:
    """Only ``tool NAME`` (a blank between) named the tool; a colon left the fence mislabelled and unread."""
    text = f'I will now create the file:\n```{label}\n{{\n  "path": "test.txt",\n  "content": "Hello World"\n}}\n```\nDone!'
    assert _calls(text) == [("write_file", {"path": "test.txt", "content": "Hello World"})]
    assert_every_cut_matches(text, TOOLS, step=3)


@pytest.mark.parametrize(
    "text",
    [
        '```tool_call:delete_everything\n{"path": "/"}\n```',  # a tool nobody offered
        '```tool_call:write_file\n{"mode": "fast"}\n```',  # keys the tool does not declare
        '```tool_call:write_file\n{"path": "a"}\nmore text\n```',  # more than the arguments in the fence
    ],
)
def test_a_named_fence_that_is_not_that_tool_s_call(text: str) -> None:
    assert _calls(text) == []


def test_a_call_label_followed_by_a_word_that_names_no_tool_is_still_a_call_label() -> None:
    """``tool_call json`` read as a fence naming a tool "json", so its call JSON was lost."""
    text = '```tool_call json\n{"name": "read", "arguments": {"path": "a"}}\n```'
    assert _calls(text) == [("read", {"path": "a"})]


# --- a call announced by the model, then prose ----------------------------------------------------


@pytest.mark.parametrize(
    "call, arguments",
    [
        ('execute_command({"command": "echo hi"})', {"command": "echo hi"}),
        ('execute_command(command="echo hi")', {"command": "echo hi"}),
    ],
)
def test_a_call_line_after_the_model_says_it_acts_may_be_followed_by_prose(call: str, arguments: dict) -> None:
    """A call line after a lead-in had to end the answer; JSON after the same lead-in did not."""
    text = f"I will run the command:\n{call}\nDone."
    result = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments) for c in result.tool_calls] == [("execute_command", arguments)]
    assert "Done." in result.content
    assert_every_cut_matches(text, TOOLS, step=3)


@pytest.mark.parametrize(
    "text",
    [
        'Example usage:\nexecute_command(command="echo hi")\nThis prints hi.',  # a sample shown
        'The function works like this:\nexecute_command(command="echo hi")\nThis prints hi.',  # nobody acts
        'I will run the command:\nexecute_command(command="echo hi").stdout\nDone.',  # more code after the call
        'I will run the command:\nnobody_offered(command="echo hi")\nDone.',
    ],
)
def test_a_call_line_between_prose_that_is_not_announced_as_made(text: str) -> None:
    assert _calls(text) == []
    assert_every_cut_matches(text, TOOLS, step=3)


# --- a list of calls with one unreadable item, where calls stand ----------------------------------


@pytest.mark.parametrize(
    "text",
    [
        'I will search:\n[{"name": 5, "arguments": {}}, {"name": "glob_search", "arguments": {"pattern": "*"}}]',
        'Searching now.\n[{"name": {"x": 1}, "parameters": {}}, {"name": "glob_search", "parameters": {"pattern": "*"}}]',
    ],
)
def test_a_call_list_after_prose_keeps_its_readable_calls(text: str) -> None:
    """Only a list opening the answer kept its readable siblings; after a lead-in the whole list was lost."""
    result = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments) for c in result.tool_calls] == [("glob_search", {"pattern": "*"})]
    assert any("item 1" in d.reason for d in result.diagnostics)
    assert_every_cut_matches(text, TOOLS, step=4)


@pytest.mark.parametrize(
    "text",
    [
        'The list is [{"name": 5, "arguments": {}}, {"name": "glob_search", "arguments": {"pattern": "*"}}] as shown.',  # mid-sentence
        'I will search:\n[{"name": 5, "arguments": {}}, {"name": "nobody", "arguments": {"pattern": "*"}}]',  # no offered tool
        'I will search:\n[{"title": "a"}, {"name": "glob_search", "arguments": {"pattern": "*"}}]',  # a record among calls: data
    ],
)
def test_a_broken_call_list_that_is_not_salvaged(text: str) -> None:
    assert _calls(text) == []


# --- a plan's key that says the calls came back ---------------------------------------------------


@pytest.mark.parametrize("key", ["results", "history", "examples", "Output"])
def test_calls_listed_as_results_history_or_examples_are_no_plan(key: str) -> None:
    """``{"results": [calls]}`` was read as a plan of calls to make."""
    text = f'{{"{key}": [{{"name": "list_files", "arguments": {{"path": "/tmp"}}}}]}}'
    assert _calls(text) == []


def test_a_plan_of_calls_is_still_read() -> None:
    text = '{"steps": [{"name": "list_files", "arguments": {"path": "/tmp"}}, {"name": "read", "arguments": {"path": "/tmp/a"}}]}'
    assert _calls(text) == [("list_files", {"path": "/tmp"}), ("read", {"path": "/tmp/a"})]


# --- a call written as YAML inside a call tag ------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ("<tool>\nname: run_web\nentry: counter.html\n</tool>", ("run_web", {"entry": "counter.html"})),
        ("I will inspect.\n<tool>\nname: list_files\n</tool>", ("list_files", {})),
        ("<tool_call>\nname: read\narguments:\n  path: src/a.js\n</tool_call>", ("read", {"path": "src/a.js"})),
        ("<tool>\nname: read\npath: src/a.js\n</tool> trailing", ("read", {"path": "src/a.js"})),
    ],
)
def test_a_call_tag_holding_the_call_as_yaml_lines(text: str, expected: tuple[str, dict]) -> None:
    """A body of ``name: TOOL`` and ``key: value`` lines was no body any reader knew."""
    assert _calls(text) == [expected]
    assert_every_cut_matches(text, TOOLS, step=3)


@pytest.mark.parametrize(
    "text",
    [
        "<tool>\nname: read\nmode: fast\n</tool>",  # a key the tool does not declare
        "<tool>\nname: nobody_offered\npath: a\n</tool>",
        "<tool>\nname: read\npath: src/a.js\n",  # never closed
        "<tool>\nname: read\npath: [unclosed\n</tool>",  # no YAML mapping
        "<tools>\nname: list_files\n</tools>",  # a tool's name alone where prompts list tools
    ],
)
def test_yaml_lines_in_a_tag_that_are_not_a_call(text: str) -> None:
    assert _calls(text) == []
    assert_every_cut_matches(text, TOOLS, step=3)


# --- call JSON after an acting lead-in, then a new sentence on its line ----------------------------


@pytest.mark.parametrize(
    "text",
    [
        'I will do this: {"name": "read", "arguments": {"path": "a"}} Done.',  # a new sentence after it
        # the sentence going on after it, as a call in the middle of a sentence may (codii's test)
        'I will do this: {"name": "read", "arguments": {"path": "a"}} and then more.',
        'Let me call this: {"name": "read", "arguments": {"path": "a"}} now.',
    ],
)
def test_call_json_after_an_acting_lead_in_may_be_followed_by_more_text(text: str) -> None:
    """The object had to end its line; "Done." after it on the same line left it unread, and so did
    the sentence going on, though a call in the middle of a sentence without the lead-in was read."""
    assert _calls(text) == [("read", {"path": "a"})]
    assert_every_cut_matches(text, TOOLS, step=3)


@pytest.mark.parametrize(
    "text",
    [
        'The API response looks like this: {"name": "read", "arguments": {"path": "a"}} Done.',  # a sample
        'Example: {"name": "read", "arguments": {"path": "a"}} is how a call looks.',  # a sample, the sentence going on
        'I will do this: {"name": "read"} and then more.',  # no arguments key: not written as a call is
        'I will do this:\n{"name": "read", "arguments": {"path": "a"}} and then more.',  # the lead-in on a line before
        'I will do this: {"name": "read", "arguments": {"path": "a",}} and then more.',  # repaired: not as written
    ],
)
def test_call_json_in_a_sentence_that_goes_on_or_shows_a_sample(text: str) -> None:
    assert _calls(text) == []


# --- a past call's record imitated, and the words to the user beside a call list -----------------


@pytest.mark.parametrize("opener", ["[assistant called tool:", "[Called tool:"])
def test_a_call_record_in_the_past_tense_is_a_call(opener: str) -> None:
    """Only ``[Calling tool: …]`` and ``[Tool call: …]`` were read as the display of a call."""
    text = f'Oke, saya mulai.\n\n{opener} read with arguments: {{"path": "/tmp/x.go"}}]\n{opener} list_files with arguments: {{"path": "/tmp"}}]'
    assert _calls(text) == [("read", {"path": "/tmp/x.go"}), ("list_files", {"path": "/tmp"})]
    assert_every_cut_matches(text, TOOLS, step=5)


@pytest.mark.parametrize(
    "text",
    [
        '[assistant called tool: read with arguments: {"path": "/tmp/x.go"} and then it stopped',  # no closing bracket
        "The log has [assistant called tool: read] lines.",  # no arguments
    ],
)
def test_a_past_call_record_that_is_not_whole(text: str) -> None:
    assert _calls(text) == []


@pytest.mark.parametrize("key", ["assistant_message", "reply", "message"])
def test_the_words_to_the_user_beside_a_call_list(key: str) -> None:
    """``assistant_message`` beside ``tool_calls`` made the object something other than calls."""
    text = f'{{"{key}": "Hello", "tool_calls": [{{"name": "read", "arguments": {{"path": "test.py"}}}}]}}'
    assert _calls(text) == [("read", {"path": "test.py"})]
    assert_every_cut_matches(text, TOOLS, step=5)


def test_a_reply_object_without_calls_is_data() -> None:
    assert _calls('{"assistant_message": "Hello", "items": [{"name": "read", "path": "a"}]}') == []


# --- call list items keyed by the tool's name -----------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        '{"tool_calls": [{"read": {"path": "a"}}, {"list_files": {"path": "/tmp"}}]}',
        '{"tools": [{"read": {"path": "a"}}, {"list_files": {"path": "/tmp"}}]}',  # a plan's key
    ],
)
def test_call_list_items_keyed_by_the_tool_s_name(text: str) -> None:
    """An item ``{"NAME": {…}}`` was no call shape, so the list was data."""
    assert _calls(text) == [("read", {"path": "a"}), ("list_files", {"path": "/tmp"})]
    assert_every_cut_matches(text, TOOLS, step=5)


@pytest.mark.parametrize(
    "text",
    [
        '{"tools": [{"read": {"type": "object", "properties": {"path": {"type": "string"}}}}]}',  # definitions
        '{"tool_calls": [{"nobody_offered": {"path": "a"}}]}',
        '{"tool_calls": [{"read": {"path": "a"}}, {"note": "x"}]}',  # one item is something else
        '{"tool_calls": [{"read": {"path": "a"}, "list_files": {"path": "b"}}]}',  # two names in one item
    ],
)
def test_name_keyed_items_that_are_not_calls(text: str) -> None:
    assert _calls(text) == []


# --- one line of text among blank lines, and a value quoted as CDATA ------------------------------

SEARCH = Tool("search", parameters={"type": "object", "properties": {"query": {"type": "string"}}})


@pytest.mark.parametrize(
    "text",
    [
        "<search>\n        <query>\n          \n          lots of whitespace\n          \n        </query>\n      </search>",
        "<function=search>\n<parameter=query>\n\n      lots of whitespace\n\n    </parameter>\n</function>",
    ],
)
def test_one_line_of_text_among_blank_lines_is_that_line(text: str) -> None:
    """The blank lines a pretty-printer put around the value were kept as part of it."""
    assert _calls(text, [SEARCH]) == [("search", {"query": "lots of whitespace"})]
    assert_every_cut_matches(text, [SEARCH], step=5)


def test_several_lines_of_text_keep_their_layout() -> None:
    text = "<search>\n<query>\nfirst line\n\nsecond line\n</query>\n</search>"
    assert _calls(text, [SEARCH]) == [("search", {"query": "first line\n\nsecond line"})]


@pytest.mark.parametrize(
    "text",
    [
        'Text <search><query><![CDATA[<value> & "unescaped" content]]></query></search> After',
        '<｜DSML｜invoke name="search">\n<｜DSML｜parameter name="query"><![CDATA[\n<value> & "unescaped" content\n]]></｜DSML｜parameter>\n</｜DSML｜invoke>',
        '<invoke name="search"><parameter name="query"><![CDATA[<value> & "unescaped" content]]></parameter></invoke>',
    ],
)
def test_a_value_quoted_as_one_cdata_section_is_its_text(text: str) -> None:
    """The CDATA markers were kept in the value (a Cline-style element, DSML and Claude-style parameters)."""
    assert _calls(text, [SEARCH]) == [("search", {"query": '<value> & "unescaped" content'})]
    assert_every_cut_matches(text, [SEARCH], step=5)


@pytest.mark.parametrize(
    "value",
    [
        "<![CDATA[a]]>b<![CDATA[c]]>",  # two sections and text between: not one quoted value
        "see <![CDATA[a]]>",  # text before the section
    ],
)
def test_cdata_that_is_not_the_whole_value_stays_as_written(value: str) -> None:
    text = f'<invoke name="search"><parameter name="query">{value}</parameter></invoke>'
    assert _calls(text, [SEARCH]) == [("search", {"query": value})]


# --- a call written on the Action line ------------------------------------------------------------

FILE_READ = Tool("file-read", parameters={"type": "object", "properties": {"path": {"type": "string"}}})
FILE_WRITE = Tool("file_write", parameters={"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}}})


@pytest.mark.parametrize(
    "text, expected",
    [
        ('Thought: I need the file.\nAction: file-read({"path": "./a.txt"})\nObservation: done', ("file-read", {"path": "./a.txt"})),
        ('I need to write a file.\nAction: file_write(path="b.txt", content="Hello (world) and (others)")', ("file_write", {"path": "b.txt", "content": "Hello (world) and (others)"})),
        ('Action: file_write({\n  "path": "c.md",\n  "content": "# Title"\n})', ("file_write", {"path": "c.md", "content": "# Title"})),
    ],
)
def test_a_call_written_on_the_action_line(text: str, expected: tuple[str, dict]) -> None:
    """``Action: f({…})`` read the parentheses as the tool's description and waited for an Action Input."""
    assert _calls(text, [FILE_READ, FILE_WRITE]) == [expected]
    assert_every_cut_matches(text, [FILE_READ, FILE_WRITE], step=4)


@pytest.mark.parametrize(
    "text",
    [
        'Action: file_write({"path": "a"}) and then I will check it',  # the line goes on
        'Action: nobody_offered({"path": "a"})\nObservation: x',
    ],
)
def test_an_action_line_call_that_is_not_one(text: str) -> None:
    assert _calls(text, [FILE_READ, FILE_WRITE]) == []
    assert_every_cut_matches(text, [FILE_READ, FILE_WRITE], step=4)


def test_parentheses_before_an_action_input_still_describe_the_tool() -> None:
    text = 'Action: file_write (writes a file)\nAction Input: {"path": "a", "content": "x"}'
    assert _calls(text, [FILE_READ, FILE_WRITE]) == [("file_write", {"path": "a", "content": "x"})]
    assert_every_cut_matches(text, [FILE_READ, FILE_WRITE], step=4)
