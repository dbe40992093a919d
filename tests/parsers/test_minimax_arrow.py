"""MiniMax's text calls: ``[TOOL_CALL]{tool => "NAME", args => {--key "value"}}[/TOOL_CALL]``.

The shape, as MiniMax models write it when their template's XML is not applied
(quoted in NousResearch/hermes-agent#35935, MiniMax M2.7; the JSON body in
lmstudio-ai/lmstudio-bug-tracker#1177, MiniMax-M2 MLX) and as agents that
handle it read it (zeroclaw's ``parse_perl_style_tool_calls`` tests: ``--key
"value"`` pairs one per line or inline, a stray third ``}``; openclaw's
stripping tests: ``args => {"query": ...}`` JSON arguments, a dangling block)::

    [TOOL_CALL]
    {tool => "terminal", args => {
      --command "echo test"
    }}
    [/TOOL_CALL]
"""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from utp.parsers import parse_response
from utp.parsers.base import ParseContext, registered_families
from utp.parsers.families import minimax_arrow
from utp.types import DiagnosticKind, Tool

from .conftest import assert_stream_matches
from .test_heads_deepseek_kimi_granite_jamba_internlm import _same_scans

FAMILY = registered_families()["minimax_arrow"]
OPEN, CLOSE = minimax_arrow.OPEN, minimax_arrow.CLOSE


def _calls(text: str, **kw: object) -> list[tuple]:
    return [(c.name, c.arguments) for c in parse_response(text, **kw).tool_calls]


def test_real_minimax_block_from_hermes_agent_35935() -> None:
    text = '[TOOL_CALL]\n{tool => "terminal", args => {\n  --command "echo test"\n}}\n[/TOOL_CALL]'
    parsed = parse_response(text)
    assert [(c.name, c.arguments, c.format) for c in parsed.tool_calls] == [("terminal", {"command": "echo test"}, "minimax_arrow")]
    assert parsed.content == ""
    assert_stream_matches(text)


def test_real_json_body_from_lmstudio_1177() -> None:
    text = '[TOOL_CALL] { "tool": "write", "args": { "filePath": "test.html", "content": "<html>...</html>" } } [/TOOL_CALL]'
    assert _calls(text) == [("write", {"filePath": "test.html", "content": "<html>...</html>"})]
    assert_stream_matches(text)


def test_several_blocks_after_prose_are_parallel_calls_with_escapes_decoded() -> None:
    text = (
        "Now I'll create the folder and the summary:\n"
        '[TOOL_CALL]\n{tool => "file_toolkit", args => {\n  --operation "create_directory"\n  --path "/kb/NLP"\n}}\n[/TOOL_CALL]\n'
        '[TOOL_CALL]\n{tool => "file_toolkit", args => {\n  --operation "write_file"\n  --content "# Title\\n\\n**ArXiv**: 2602.23329"\n}}\n[/TOOL_CALL]'
    )
    parsed = parse_response(text)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [
        ("file_toolkit", {"operation": "create_directory", "path": "/kb/NLP"}),
        ("file_toolkit", {"operation": "write_file", "content": "# Title\n\n**ArXiv**: 2602.23329"}),
    ]
    assert parsed.content == "Now I'll create the folder and the summary:"
    assert_stream_matches(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # inline, one line (zeroclaw's square-bracket test)
        ('[TOOL_CALL]{tool => "shell", args => {--command "echo hello"}}[/TOOL_CALL]', ("shell", {"command": "echo hello"})),
        # JSON object as the arguments (openclaw's test)
        ('[TOOL_CALL]{tool => "web_search", args => {"query":"NET stock price"}}[/TOOL_CALL]', ("web_search", {"query": "NET stock price"})),
        # --key: "value", no comma after the name, no closing tag at the end
        ('[TOOL_CALL]{tool => "searchFiles" args => { --pattern: "**/*.ts" }}', ("searchFiles", {"pattern": "**/*.ts"})),
        # key => value pairs, a bare number read as JSON
        ('[TOOL_CALL]{tool => "recall", args => {query => "topic", k => 3}}[/TOOL_CALL]', ("recall", {"query": "topic", "k": 3})),
        # no arguments at all
        ('[TOOL_CALL]\n{tool => "status", args => {}}\n[/TOOL_CALL]', ("status", {})),
        ('[TOOL_CALL]{tool => "status"}}[/TOOL_CALL]', ("status", {})),
        # arrays, objects, booleans and null as values
        ('[TOOL_CALL]{tool => "f", args => {--ids [1, 2] --opts {"a": "}"} --dry true --tag null}}', ("f", {"ids": [1, 2], "opts": {"a": "}"}, "dry": True, "tag": None})),
    ],
)
def test_variants_of_the_block(text: str, expected: tuple) -> None:
    assert _calls(text) == [expected]
    assert_stream_matches(text)


def test_a_bare_value_is_typed_by_the_tool_schema() -> None:
    tool = Tool("orders", parameters={"type": "object", "properties": {"limit": {"type": "integer"}, "code": {"type": "string"}}})
    text = '[TOOL_CALL]{tool => "orders", args => {\n  --limit 5\n  --code 0042\n}}[/TOOL_CALL]'
    assert _calls(text, tools=[tool]) == [("orders", {"limit": 5, "code": "0042"})]


def test_a_stray_closing_brace_is_a_recorded_repair() -> None:
    parsed = parse_response('[TOOL_CALL]\n{tool => "shell", args => { --command "uname -a" }}}\n[/TOOL_CALL]')
    [call] = parsed.tool_calls
    assert (call.name, call.arguments) == ("shell", {"command": "uname -a"})
    assert call.repairs == ["ignored 1 extra '}' after the call"]
    assert any(d.kind == DiagnosticKind.REPAIRED for d in parsed.diagnostics)


def test_a_string_may_quote_the_closing_tag() -> None:
    text = '[TOOL_CALL]{tool => "note", args => {--text "write [/TOOL_CALL] after each block"}}[/TOOL_CALL] Done.'
    parsed = parse_response(text)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("note", {"text": "write [/TOOL_CALL] after each block"})]
    assert parsed.content == "Done."


def test_a_block_the_output_ends_inside_is_reported_truncated_not_run() -> None:
    parsed = parse_response('Before\n[TOOL_CALL]{tool => "web_search", args => {"query":"NET stock price"}')
    assert parsed.tool_calls == []
    assert parsed.content == "Before"
    assert [d.kind for d in parsed.diagnostics] == [DiagnosticKind.TRUNCATED]


def test_an_unreadable_block_is_reported_and_the_next_one_still_read() -> None:
    text = '[TOOL_CALL]{tool => "a", args => {--x [1, 2}}[/TOOL_CALL]\n[TOOL_CALL]{tool => "b", args => {--y 1}}[/TOOL_CALL] ok'
    parsed = parse_response(text)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("b", {"y": 1})]
    assert [d.kind for d in parsed.diagnostics] == [DiagnosticKind.UNPARSEABLE]
    assert "'x'" in parsed.diagnostics[0].reason and parsed.content == "ok"
    assert_stream_matches(text)


def test_a_block_without_its_closing_tag_is_cut_at_the_next_block() -> None:
    text = '[TOOL_CALL]{tool => "a", args => {--x "1"\n[TOOL_CALL]{tool => "b", args => {--y "2"}}[/TOOL_CALL]'
    parsed = parse_response(text)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("b", {"y": "2"})]
    assert [d.kind for d in parsed.diagnostics] == [DiagnosticKind.UNPARSEABLE]


@pytest.mark.parametrize(
    "text",
    [
        "The model emits [TOOL_CALL] blocks instead of native calls.",
        "Use `[TOOL_CALL]{tool => \"x\"}}` to see the syntax.",
        "[TOOL_CALL] is MiniMax's marker; [/TOOL_CALL] closes it.",
        "[TOOL_CALL]{not a call} and more",
        '[TOOL_CALLS][{"name": "f", "arguments": {}}]',  # Mistral's marker is another family's
    ],
)
def test_prose_and_other_markers_are_not_this_family(text: str) -> None:
    parsed = parse_response(text)
    assert all(c.format != "minimax_arrow" for c in parsed.tool_calls)
    assert not [d for d in parsed.diagnostics if d.family == "minimax_arrow"]
    assert_stream_matches(text)


def test_the_mistral_marker_still_parses_as_mistral() -> None:
    parsed = parse_response('[TOOL_CALLS][{"name": "f", "arguments": {"a": 1}}]')
    assert [(c.name, c.arguments, c.format) for c in parsed.tool_calls] == [("f", {"a": 1}, "mistral")]


# ------------------------------------------------------------------------ the scan head

_BODY = [
    "{", "}", "}}", " ", "\n", "tool", " => ", "=>", '"f"', "f", ", ", "args", '{"query": "x"}', "--a ", '"x"', "[1", "]",
    '"', "'", "tool =", OPEN, CLOSE, "[TOOL_CALLS]", "`", "\u00a0",
]


@settings(max_examples=800, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(prefix=st.sampled_from(["", "x ", "`"]), body=st.lists(st.sampled_from(_BODY), max_size=7))
def test_extract_declines_wherever_the_head_fails(prefix: str, body: list[str]) -> None:
    text = prefix + OPEN + "".join(body)
    pos = len(prefix)
    if re.match(FAMILY.trigger_heads[OPEN], text[pos + len(OPEN) :]):
        return
    for ctx in (ParseContext(), ParseContext([Tool("f")])):
        assert FAMILY.extract(text, pos, OPEN, ctx) is None, text


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(parts=st.lists(st.sampled_from([OPEN, *_BODY, "ok "]), min_size=1, max_size=10))
def test_filtered_scan_equals_literal_scan(parts: list[str]) -> None:
    _same_scans("".join(parts))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(parts=st.lists(st.sampled_from([OPEN, *_BODY, "ok "]), min_size=1, max_size=10))
def test_streaming_matches_one_shot_on_pieces_of_blocks(parts: list[str]) -> None:
    assert_stream_matches("".join(parts))
