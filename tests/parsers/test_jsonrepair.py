"""Lenient JSON: each repair is exact, named, and linear; unreadable input is a clear ValueError."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from utp.parsers import jsonrepair as jr
from utp.parsers.jsonrepair import decode_json_at, loads_lenient, parse_arguments, scan_json_value
from utp.parsers.jsonrepairnames import CUT_MID_VALUE, TYPOGRAPHIC_QUOTES

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)


def test_valid_json_has_no_repairs() -> None:
    assert loads_lenient('{"a": [1, 2.5, "x"], "b": null}') == ({"a": [1, 2.5, "x"], "b": None}, [])


@pytest.mark.parametrize(
    ("text", "expected", "repair"),
    [
        ('{"a": 1,}', {"a": 1}, jr.TRAILING_COMMA),
        ("[1, 2, ]", [1, 2], jr.TRAILING_COMMA),
        ("{'city': 'Paris'}", {"city": "Paris"}, jr.SINGLE_QUOTES),
        ('{"on": True, "off": False, "x": None}', {"on": True, "off": False, "x": None}, jr.PYTHON_LITERALS),
        ('{city: "Oslo"}', {"city": "Oslo"}, jr.UNQUOTED_KEYS),
        ('{order_id=1, name="Ann"}', {"order_id": 1, "name": "Ann"}, jr.KEY_EQUALS),
        ('{"name","x","arguments":{}}', {"name": "x", "arguments": {}}, jr.COMMA_FOR_COLON),
        ('{"vertices": [(0, 0), (2, 3)], "at": (1, "a")}', {"vertices": [[0, 0], [2, 3]], "at": [1, "a"]}, jr.PYTHON_TUPLE),
        ('{"function=webfetch", "arguments": {"url": "x"}}', {"function": "webfetch", "arguments": {"url": "x"}}, jr.PAIR_IN_ONE_STRING),
        ('{"a": {"b": [1, 2', {"a": {"b": [1, 2]}}, jr.CLOSED_TRUNCATED),
        ('{"a": 1} trailing words', {"a": 1}, jr.TRAILING_GARBAGE),
        ('{"a": 1 "b": 2}', {"a": 1, "b": 2}, jr.MISSING_COMMA),
        ("{'q': 'say \"hi\"'}", {"q": 'say "hi"'}, jr.SINGLE_QUOTES),
        ('{"text": "line1\nline2"}', {"text": "line1\nline2"}, jr.CONTROL_CHARS),
        ('{"html": "<a href="x">y</a>", "n": 1}', {"html": '<a href="x">y</a>', "n": 1}, jr.INNER_QUOTES),
        ('["say "hi" now", "b"]', ['say "hi" now', "b"], jr.INNER_QUOTES),
        ('{"city": "Paris", // the city\n "days": 2}', {"city": "Paris", "days": 2}, jr.COMMENTS),
        ('{/* where */ "city": "Paris" /* done */}', {"city": "Paris"}, jr.COMMENTS),
        ('[{"name": "f", "arguments": {"a": 1}]', [{"name": "f", "arguments": {"a": 1}}], jr.MISSING_CLOSER),
        ('{"paths": ["a", "b"}', {"paths": ["a", "b"]}, jr.MISSING_CLOSER),
        ("[{'name': 'f', 'args': {'a': [1, 2}]", [{"name": "f", "args": {"a": [1, 2]}}], jr.MISSING_CLOSER),
        # a list item's closer left out before the next item (netdata's recorded agent__batch reply)
        ('{"calls": [{"id": "1", "p": {"q": "a"}, {"id": "2", "p": {"q": "b"}}]}', {"calls": [{"id": "1", "p": {"q": "a"}}, {"id": "2", "p": {"q": "b"}}]}, jr.MISSING_CLOSER),
        ('[{"a": 1, {"b": 2}]', [{"a": 1}, {"b": 2}], jr.MISSING_CLOSER),
    ],
)
def test_each_repair_is_named(text: str, expected: object, repair: str) -> None:
    value, repairs = loads_lenient(text)
    assert value == expected
    assert repair in repairs


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"url": "http://example.com/a"}', {"url": "http://example.com/a"}),  # '//' inside a string
        ('{"glob": "src/*.py", "n": 1}', {"glob": "src/*.py", "n": 1}),
    ],
)
def test_comment_markers_inside_strings_are_text(text: str, expected: object) -> None:
    assert loads_lenient(text) == (expected, [])


def test_an_object_opening_where_a_key_belongs_outside_a_list_is_not_read() -> None:
    """Only a list has a next item for the object to have ended before."""
    with pytest.raises(ValueError):
        loads_lenient('{"a": {"b": 1, {"c": 2}}}')


def test_a_block_comment_that_never_closes_is_no_comment() -> None:
    with pytest.raises(ValueError):
        loads_lenient('{"a": 1, /* never closed "b": 2}')


def test_unescaped_quotes_in_written_html_are_kept() -> None:
    """Gitlawb/openclaude#287 (qwen2.5-coder on Ollama): a file's HTML written into a JSON string unescaped."""
    text = (
        '{"name": "Write", "arguments": {"file_path": "/path/to/index.html", "content": "\\n<html lang="en">\\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1.0">\\n Document\\n"}}'
    )
    value, repairs = loads_lenient(text)
    assert value["arguments"]["content"] == '\n<html lang="en">\n<meta name="viewport" content="width=device-width, initial-scale=1.0">\n Document\n'
    assert repairs == [jr.INNER_QUOTES]


@pytest.mark.parametrize(
    ("text", "expected", "repair"),
    [
        ('{"a": "x" "b": 1}', {"a": "x", "b": 1}, jr.MISSING_COMMA),  # a quote after a quote: a missing comma
        ('{"a": "x"\n}', {"a": "x"}, None),  # valid: the quote ends the value
    ],
)
def test_a_quote_that_can_end_the_value_ends_it(text: str, expected: object, repair: str | None) -> None:
    value, repairs = loads_lenient(text)
    assert value == expected
    assert jr.INNER_QUOTES not in repairs
    assert repair is None or repair in repairs


def test_a_quote_before_a_comma_inside_a_string_is_still_unreadable() -> None:
    """``"He said "hi", then"``: the quote before the comma could end the value, so nothing is guessed."""
    with pytest.raises(ValueError):
        loads_lenient('{"text": "He said "hi", then left"}')


@pytest.mark.parametrize(
    "text",
    [
        '{"name":"get_time","parameters>{"timezone":"UTC"}}',
        '{"name":"get_time","parameters={"timezone":"UTC"}}',
        '{"name":"get_time","parameters({"timezone":"UTC"}}',
        '{"name":"get_time","parameters\':{\'timezone\':\'UTC\'}}',
        '{"name":"get_time","parameters\\":{\\"timezone\\":\\"UTC\\"}}',
    ],
)
def test_garbled_separator_after_a_key(text: str) -> None:
    """Real llama3.2 outputs: the key's quote never closes and the value opens inside it."""
    value, repairs = loads_lenient(text)
    assert value == {"name": "get_time", "parameters": {"timezone": "UTC"}}
    assert jr.BAD_SEPARATOR in repairs


def test_space_quote_instead_of_colon() -> None:
    value, repairs = loads_lenient('{"name":"web_search","parameters "{"query": "q"}}')
    assert value["parameters "] == {"query": "q"}  # key whitespace is the call reader's business
    assert jr.MISSING_COLON in repairs


def test_stray_quote_after_complete_object() -> None:
    value, repairs = loads_lenient('{"name":"complex","parameters":{}"}}')
    assert value == {"name": "complex", "parameters": {}}
    assert repairs


def test_truncated_object_with_trailing_quote() -> None:
    value, _ = loads_lenient('{"name":"f","parameters({"a":"b","c":false}"')
    assert value == {"name": "f", "parameters": {"a": "b", "c": False}}


@pytest.mark.parametrize("text", ["", "   ", "not json at all", '{"a": 1, b c d}', "{]", "@@@", '[{"a": 1}}, {"b": 2}]'])
def test_unreadable_text_is_a_value_error_naming_the_place(text: str) -> None:
    with pytest.raises(ValueError) as info:
        loads_lenient(text)
    assert str(info.value)


def test_error_names_the_offset() -> None:
    with pytest.raises(ValueError, match="offset"):
        loads_lenient('{"a": 1, "b": ]')


def test_deep_nesting_is_a_value_error_not_a_crash() -> None:
    with pytest.raises(ValueError):
        loads_lenient("[" * 100_000 + "x")


@given(json_values)
@settings(max_examples=200, deadline=None)
def test_valid_json_round_trips_exactly(value: object) -> None:
    assert loads_lenient(json.dumps(value)) == (value, [])


@given(json_values)
@settings(max_examples=200, deadline=None)
def test_scan_finds_the_end_of_any_serialised_value(value: object) -> None:
    text = json.dumps(value)
    padded = "xx " + text + " trailing } ] \" text"
    assert scan_json_value(padded, 3) == 3 + len(text)


@given(st.text(max_size=200))
@settings(max_examples=300, deadline=None)
def test_lenient_reader_only_raises_value_error(text: str) -> None:
    try:
        loads_lenient(text)
    except ValueError:
        pass


def test_scan_skips_braces_in_strings_and_escapes() -> None:
    text = '{"t": "Hello {name}! \\" }", \'u\': \'}\'} tail'
    assert text[: scan_json_value(text, 0)].endswith("'}'}")


def test_scan_reports_incomplete_values() -> None:
    assert scan_json_value('{"a": [1, 2', 0) == -1
    assert scan_json_value('"open string', 0) == -1
    assert scan_json_value("", 0) == -1


def test_scan_ignores_apostrophes_in_words() -> None:
    assert scan_json_value("{don't stop}", 0) == len("{don't stop}")


def test_scan_is_linear_on_hostile_input() -> None:
    text = '{"a": "' + "\\\"" * 200_000
    assert scan_json_value(text, 0) == -1
    assert scan_json_value("[" * 300_000, 0) == -1


def test_decode_json_at_uses_the_fast_path_then_repairs() -> None:
    assert decode_json_at('xx {"a":1} yy', 3) == ({"a": 1}, 10, [])
    value, end, repairs = decode_json_at("call: {'a': True} rest", 6)
    assert value == {"a": True} and end == 17 and repairs


def test_decode_json_at_respects_an_end_limit() -> None:
    text = '{"a": 1</tool_call>'
    value, end, repairs = decode_json_at(text, 0, text.index("<"))
    assert value == {"a": 1} and end == text.index("<") and jr.CLOSED_TRUNCATED in repairs


@pytest.mark.parametrize(
    ("value", "expected", "repair"),
    [
        ({"a": 1}, {"a": 1}, None),
        ('{"a": 1}', {"a": 1}, None),
        ('"{\\"a\\": 1}"', {"a": 1}, jr.DOUBLE_ENCODED),
        (json.dumps(json.dumps(json.dumps({"a": 1}))), {"a": 1}, jr.DOUBLE_ENCODED),
        ([{"city": "Tokyo"}], {"city": "Tokyo"}, jr.LIST_WRAPPED),
        (None, {}, None),
        ("", {}, None),
        ([], {}, None),
        ("{'a': True}", {"a": True}, jr.PYTHON_LITERALS),
    ],
)
def test_parse_arguments_accepts_every_shape(value: object, expected: dict, repair: str | None) -> None:
    arguments, repairs = parse_arguments(value)
    assert arguments == expected
    if repair is None:
        assert repairs == []
    else:
        assert repair in repairs


@pytest.mark.parametrize("value", ['"just a string"', "[1, 2]", 42, [{"a": 1}, {"b": 2}], "nonsense {"])
def test_parse_arguments_refuses_non_objects(value: object) -> None:
    with pytest.raises(ValueError):
        parse_arguments(value)


def _walk_reference(text: str, pos: int) -> int:
    """The plain character walk the scanner must agree with (brackets, strings, apostrophes)."""
    depth, i, n = 0, pos, len(text)
    while i < n:
        ch = text[i]
        if ch == "'" and 0 < i < n - 1 and text[i - 1].isalnum() and text[i + 1].isalnum():
            i += 1
            continue
        if ch in "\"'":
            j = i + 1
            while j < n and text[j] != ch:
                j += 2 if text[j] == "\\" else 1
            if j >= n:
                return -1
            i = j + 1
            continue
        step = _DEPTH_STEP.get(ch, 0)
        depth += step
        if step < 0 and depth == 0:
            return i + 1
        i += 1
    return -1


_DEPTH_STEP = {"{": 1, "[": 1, "}": -1, "]": -1}


@settings(max_examples=1500, deadline=None)
@given(st.text(alphabet="{}[]\"'\\ab1 é_\n", max_size=40))
def test_container_scan_agrees_with_a_plain_walk(body: str) -> None:
    for opener in "{[":
        text = opener + body
        assert scan_json_value(text, 0) == _walk_reference(text, 0), text


@pytest.mark.parametrize("pad", range(24))
def test_growing_strict_decode_reads_values_whatever_a_slice_cuts(pad: int) -> None:
    """The slices of ``strict_json_growing`` may end inside an escape, a literal or a number;
    such a cut must grow the slice, not reject valid JSON (hypothesis found ``\\u0003`` cut)."""
    from utp.parsers.jsonrepair import strict_json_growing

    value = {"k": "x" * pad, "items": [{"s": "é\u0003😀\"", "n": -13260128492, "t": True, "z": None} for _ in range(40)]}
    text = json.dumps(value) + "</tag>"
    got, ran_out = strict_json_growing(text, 0, len(text) - len("</tag>"))
    assert got == (value, len(text) - len("</tag>"))
    assert ran_out is False


def test_growing_strict_decode_reports_a_value_that_runs_past_its_limit() -> None:
    from utp.parsers.jsonrepair import strict_json_growing

    text = '{"q": "a </tag> b"}</tag>'
    assert strict_json_growing(text, 0, text.index("</tag>")) == (None, True)
    assert strict_json_growing('{"q": 1 x}', 0, 10) == (None, False)


@pytest.mark.parametrize("text", ['{"a": 1, "b"', "{unquoted_key", '{"a": 1, "b"  '])
def test_a_key_whose_value_never_came_is_half_written(text: str) -> None:
    """The text ended right after a key: no separator was seen (none is invented), and the
    object is marked cut mid-value, so a call holding it is reported, never run."""
    value, repairs = loads_lenient(text)
    assert "b" not in value and "unquoted_key" not in value
    assert CUT_MID_VALUE in repairs
    assert "malformed separator after key" not in repairs


def test_typographic_quotes_delimit_strings_and_inner_single_ones_are_text() -> None:
    value, repairs = loads_lenient("{\u201ccmd\u201d: \u201cecho \u2018x\u2019\u201d, \u201cn\u201d: 2}")
    assert value == {"cmd": "echo \u2018x\u2019", "n": 2}
    assert TYPOGRAPHIC_QUOTES in repairs


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a Qwen2.5-Coder reply under MLX (a Rust agent's adapter tests): Python's escape inside JSON
        (r'{"replace": "raise TypeError(\'Bag\')\nnext line"}', {"replace": "raise TypeError('Bag')\nnext line"}),
        (r'{"a": "it\'s", "b": "C:\Users\me"}', {"a": "it's", "b": "C:\\Users\\me"}),  # a Windows path keeps its backslashes
        (r'{"a": "x \\\'y"}', {"a": "x \\'y"}),  # an escaped backslash, then an escaped apostrophe
    ],
)
def test_an_escaped_apostrophe_in_a_json_string_is_the_apostrophe(text: str, expected: dict) -> None:
    value, repairs = loads_lenient(text)
    assert value == expected
    assert "read \\' as an apostrophe" in repairs
