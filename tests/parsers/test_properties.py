"""Properties every registered call family must have (new families are covered automatically).

(a) ``parse(render(calls))`` gives back the calls; (b) no input crashes a
parser; (c) hostile inputs (thousands of unclosed openers, deep nesting,
megabytes of braces) cost time linear in their size.

Where a family's *wire syntax* cannot carry some JSON value, the round-trip
strategy is narrowed for that family only, and :data:`WIRE_LIMITS` says why.
Those are limits of the format models are trained on, not of the parser.
"""

from __future__ import annotations

import keyword
import os
import re
import time
import unicodedata
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.sweeps import full_sweeps, sweep_size
from utp.parsers import family_names, get_family, parse_response
from utp.parsers.base import ParseContext
from utp.parsers.reasoning import REASONING_TAGS
from utp.types import ParsedResponse, Tool, ToolCall, json_type_name
from utp.validation import validate_arguments

FAMILIES = family_names()
#: examples per family for the round trip (sized down by `make test`); raise it for a deeper one-off run (300 passes)
ROUND_TRIP_EXAMPLES = int(os.environ.get("UTP_ROUND_TRIP_EXAMPLES", sweep_size(30)))

#: Reasoning tags are cut out of content before any family runs, for every
#: family: a string argument containing one cannot survive the composite.
REASONING_MARKERS = ("<think", "</think", "<seed:think", "</seed:think", "<longcat_think", "</longcat_think", "<ifm|think", "</ifm|think", "[THINK]", "[/THINK]", "<|channel>thought", "<channel|>")


def _forbid(*needles: str) -> Callable[[str], bool]:
    return lambda s: not any(n in s for n in needles)


def _identifier_keys(key: str) -> bool:
    # Python NFKC-normalises identifiers ("º" reads as "o"), so only normal-form names survive
    return key.isidentifier() and not keyword.iskeyword(key) and unicodedata.normalize("NFKC", key) == key


def _identifier_name(name: str) -> bool:
    """A name the families that write it bare (a header, an attribute, before a parenthesis) can carry."""
    return re.fullmatch(r"[A-Za-z_][\w.\-]{0,127}", name) is not None


#: family -> (why, string predicate (all strings, keys included), top-level key predicate, name predicate)
WIRE_LIMITS: dict[str, tuple[str, Callable[[str], bool], Callable[[str], bool], Callable[[str], bool]]] = {
    "continue_tool": (
        "values are the trimmed lines between BEGIN_ARG and END_ARG; keys and names are one word on their marker's line",
        lambda s: s == s.strip() and "\n" not in s and "`" not in s,
        lambda k: re.fullmatch(r"[^\s`]{1,128}", k) is not None,
        lambda n: re.fullmatch(r"[^\s`]{1,128}", n) is not None,
    ),
    "history_display": (
        "the name is an identifier written before its parenthesis",
        lambda s: True,
        lambda k: True,
        _identifier_name,
    ),
    "functionary_legacy": (
        "the recipient is an identifier on its header line; 'all' is the user, not a tool",
        lambda s: True,
        lambda k: True,
        lambda n: _identifier_name(n) and n != "all",
    ),
    "qwen3_coder": (
        "values are raw text up to </parameter>; keys are raw text up to '>' on one line; "
        "</tool_call> is a special token in Qwen tokenizers",
        _forbid("</parameter>", "<parameter=", "</function>", "</tool_call>"),
        lambda k: k == k.strip() and k != "" and not set(k) & set("<>\n"),
        lambda n: True,
    ),
    "anthropic_xml": (
        "values are raw text up to </parameter>; keys sit in a quoted attribute",
        _forbid("</parameter>", "</invoke>"),
        lambda k: 0 < len(k) <= 256 and not set(k) & set("\"'<>\n"),
        lambda n: True,
    ),
    "deepseek_dsml": (
        "values are raw text up to </｜DSML｜parameter>; keys sit in a quoted attribute (either quote, not both)",
        _forbid("</\uff5cDSML\uff5cparameter>", "</\uff5cDSML\uff5cinvoke>"),
        lambda k: 0 < len(k) <= 256 and not set(k) & set("<>\n") and not ('"' in k and "'" in k),
        lambda n: True,
    ),
    "collapsed_invoke": (
        "values are raw text up to a parameter closer in any DSML spelling; keys sit in a quoted attribute (either "
        "quote, not both); the name is an identifier in the opener's quoted attribute",
        _forbid("parameter>", "invoke>"),
        lambda k: 0 < len(k) <= 256 and not set(k) & set("<>\n") and not ('"' in k and "'" in k),
        _identifier_name,
    ),
    "tool_header": (
        "the name is an identifier in the bracketed header",
        lambda s: True,
        lambda k: True,
        _identifier_name,
    ),
    "k2_v3": (
        "values are raw text up to </ifm|arg_value> holding no <ifm|arg_key>; keys are trimmed raw text up to </ifm|arg_key>",
        _forbid("</ifm|arg_value>", "</ifm|arg_key>", "<ifm|arg_key>"),
        lambda k: k == k.strip(),
        lambda n: True,
    ),
    "minicpm4": (
        "values are trimmed raw text up to </param>, or one CDATA section (which cannot hold ]]>); keys sit in a quoted attribute",
        _forbid("]]>"),
        lambda k: 0 < len(k) <= 256 and not set(k) & set("\"'<>\n"),
        lambda n: True,
    ),
    "glm": (
        "values are raw text up to </arg_value> holding no <arg_key> (a value whose closer was left out ends there), "
        "a one-line value without the blanks around it (GLM's parsers strip them); keys are trimmed raw text up to </arg_key>",
        lambda s: _forbid("</arg_value>", "</arg_key>", "<arg_key>")(s) and (s == s.strip() or not s.strip() or "\n" in s.strip() or "\r" in s.strip()),
        lambda k: k == k.strip(),
        lambda n: True,
    ),
    "longcat": (
        "values are raw text up to </longcat_arg_value> holding no <longcat_arg_key> (a value whose closer was left out ends there); keys are trimmed raw text up to </longcat_arg_key>",
        _forbid("</longcat_arg_value>", "</longcat_arg_key>", "<longcat_arg_key>"),
        lambda k: k == k.strip(),
        lambda n: True,
    ),
    "hunyuan": (
        "values are raw text up to </arg_value:opensource> holding no <arg_key:opensource>; keys are trimmed raw text up to </arg_key:opensource>",
        _forbid("</arg_value:opensource>", "</arg_key:opensource>", "<arg_key:opensource>"),
        lambda k: k == k.strip(),
        lambda n: True,
    ),
    "telechat": (
        "values are trimmed raw text up to </param_value> holding no <param_key>; keys are trimmed raw text up to </param_key>",
        lambda s: s == s.strip() and _forbid("</param_value>", "</param_key>", "<param_key>")(s),
        lambda k: k == k.strip(),
        lambda n: True,
    ),
    "iquest_coder": (
        "values are raw text up to </arg_value> holding no <arg_key> (a value whose closer was left out ends there); keys are trimmed raw text up to </arg_key>",
        _forbid("</arg_value>", "</arg_key>", "<arg_key>"),
        lambda k: k == k.strip(),
        lambda n: True,
    ),
    "solar_open": (
        "the tags are special tokens: no key or value holds one; keys are trimmed",
        _forbid("<|tool_arg:end|>", "<|tool_arg:value|>", "<|tool_arg:start|>", "<|tool_call:start|>", "<|tool_call:end|>"),
        lambda k: k == k.strip() and _forbid("<|tool_arg:end|>", "<|tool_arg:value|>", "<|tool_arg:start|>", "<|tool_call:start|>", "<|tool_call:end|>")(k),
        lambda n: True,
    ),
    "plamo": (
        "the tool's name is trimmed raw text up to <|plamo:end_tool_name:plamo|>, a special token",
        lambda s: True,
        lambda k: True,
        lambda n: n == n.strip() and "<|plamo:" not in n,
    ),
    "minimax_m3": (
        "keys are element names; values are trimmed raw text up to the ]<]minimax[>[ marker token, which no value holds",
        lambda s: s == s.strip() and "]<]minimax[>[" not in s,
        lambda k: re.fullmatch(r"[A-Za-z_][\w.\-]{0,255}", k) is not None,
        lambda n: True,
    ),
    "functiongemma": (
        "strings are delimited by the <escape> token, which therefore cannot occur inside one",
        _forbid("<escape>"),
        lambda k: True,
        lambda n: True,
    ),
    "pythonic": (
        "argument names are Python keyword arguments (NFKC identifiers); function names cannot be Python keywords",
        lambda s: True,
        _identifier_keys,
        lambda n: not keyword.iskeyword(n),
    ),
    "llama": (
        "the message body ends at the <|eom_id|>/<|eot_id|> special tokens, which a model cannot emit inside a string",
        _forbid("<|eom_id|>", "<|eot_id|>"),
        lambda k: True,
        lambda n: True,
    ),
    # hermes has no wire limit: valid JSON is read whole, so a </tool_call> or <tool_call>
    # inside a string argument stays the argument's text (see HermesFamily._json_body)
    "cwm": (
        "a tool tag ends at the first </tool>, whatever quotes come before it (the reference reads it so)",
        _forbid("</tool>"),
        lambda k: "</tool>" not in k,
        lambda n: True,
    ),
    "cline_xml": (
        "values are raw text trimmed as Cline trims them and end at the first closing tag; keys and the "
        "tool's name are element names; a reasoning tag's name always opens reasoning",
        lambda s: s == s.strip() and "</" not in s,
        lambda k: re.fullmatch(r"[A-Za-z_][\w.\-]*", k) is not None,
        lambda n: f"<{n}>" not in {opener for opener, _ in REASONING_TAGS},
    ),
    "named_tool_element": (
        "values are raw text trimmed and typed by the schema, ending at the first closing tag of their element or "
        "of the tool element; keys are element names; the name is an attribute value (no quotes or angle brackets)",
        lambda s: s == s.strip() and "</" not in s and "<" not in s,
        lambda k: re.fullmatch(r"[A-Za-z_][\w.\-]*", k) is not None,
        lambda n: n == n.strip() and not any(c in n for c in "\"'<>\n"),
    ),
    "kimi_k3": (
        "its closing markers are special tokens: emitting one (the argument's, or the call's, section's, "
        "response's or message's around it) ends the value even mid-string",
        _forbid(*(f"<|close|>{marker}<|sep|>" for marker in ("argument", "call", "tools", "response", "message"))),
        lambda k: True,
        lambda n: True,
    ),
    "kimi_k2": (
        "<|tool_call_end|> and the section tokens are special tokens: emitting one ends the call even mid-string",
        _forbid("<|tool_call_end|>", "<|tool_calls_section_end|>", "<|tool_call_begin|>"),
        lambda k: True,
        lambda n: True,
    ),
    "deepseek": (
        "the tool-call end tokens (either spelling) are special tokens: emitting one ends the call even mid-string",
        _forbid("<|tool_call_end|>", "<|tool_calls_end|>", "<\uff5ctool\u2581call\u2581end\uff5c>", "<\uff5ctool\u2581calls\u2581end\uff5c>"),
        lambda k: True,
        lambda n: True,
    ),
    "bash": (
        "the fence ends at ```; option names are written --key (no '=', no leading '-', not empty)",
        _forbid("```"),
        lambda k: k != "" and not k.startswith("-") and "=" not in k,
        lambda n: True,
    ),
    "keyword_command": (
        "values are quoted with \" escaping only the quote, so a string cannot end in a backslash; keys are "
        "parameter names written key=",
        lambda s: not s.endswith("\\"),
        lambda k: re.fullmatch(r"[A-Za-z_][\w.\-]{0,127}", k) is not None,
        lambda n: True,
    ),
    "minimax_stripped": (
        "values are raw text up to parameter> (the closing tag's '</' lost); keys sit in a quoted attribute",
        _forbid("parameter>", "invoke>"),
        lambda k: 0 < len(k) <= 256 and not set(k) & set("\"'<>\n"),
        lambda n: True,
    ),
    "gemini_cli": (
        "a call is one line, its keys parameter names written before their values",
        lambda s: True,
        lambda k: re.fullmatch(r"[A-Za-z_]\w{0,127}", k) is not None,
        lambda n: True,
    ),
}
#: families that cannot write a call without arguments, and why
NEEDS_AN_ARGUMENT = {
    "keyword_command": "a tool's name alone is a word, not a command line",
    "gemini_cli": "the notation writes the arguments after 'for': without them the line describes a call",
}

_NO_LIMITS = ("no wire limits", lambda s: True, lambda k: True, lambda n: True)

#: every family's markup, mixed into generated strings: a call's text must survive carrying any of it
MARKUP = sorted({t for name in FAMILIES for t in get_family(name).triggers} | {
    "</tool_call>", "</function>", "</parameter>", "</invoke>", "</arg_value>", "<|call|>", "<|end|>",
    "<end_function_call>", "<tool_call|>", "<|tool_call_end|>", "</function_calls>", "[TOOL_CALLS]", "```", "]", ")", "}",
})

NAMES = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,30}", fullmatch=True)


def json_values(text: st.SearchStrategy[str]) -> st.SearchStrategy[Any]:
    scalars = st.none() | st.booleans() | st.integers(-(10**12), 10**12) | st.floats(allow_nan=False, allow_infinity=False) | text
    return st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
        max_leaves=8,
    )


def _strings_ok(value: Any, ok: Callable[[str], bool]) -> bool:
    if isinstance(value, str):
        return ok(value)
    if isinstance(value, list):
        return all(_strings_ok(v, ok) for v in value)
    if isinstance(value, dict):
        return all(ok(k) and _strings_ok(v, ok) for k, v in value.items())
    return True


@st.composite
def calls_for(draw: st.DrawFn, family: str) -> list[ToolCall]:
    _, string_ok, key_ok, name_ok = WIRE_LIMITS.get(family, _NO_LIMITS)
    pieces = st.text(max_size=8) | st.sampled_from(MARKUP)
    text = st.lists(pieces, max_size=3).map("".join).filter(lambda s: string_ok(s) and _forbid(*REASONING_MARKERS)(s))
    names = draw(st.lists(NAMES.filter(name_ok), min_size=1, max_size=3, unique=True))
    calls = []
    for name in names:
        # keys a family takes only as names are drawn as names: filtering random text for them is slow
        keys = NAMES.filter(key_ok) if family in NEEDS_AN_ARGUMENT else text.filter(key_ok)
        arguments = draw(st.dictionaries(keys, json_values(text), min_size=int(family in NEEDS_AN_ARGUMENT), max_size=4))
        calls.append(ToolCall(name, arguments))
    return calls


def tools_typing(calls: list[ToolCall]) -> list[Tool]:
    """One tool per call whose schema types each argument, so raw-text formats convert exactly."""
    return [
        Tool(
            call.name,
            parameters={"type": "object", "properties": {k: {"type": json_type_name(v)} for k, v in call.arguments.items()}},
        )
        for call in calls
    ]


def same_json(a: Any, b: Any) -> bool:
    """Equality that also tells 1 from 1.0 from True (round-trips must keep JSON types)."""
    if type(a) is not type(b) and not (isinstance(a, float) and isinstance(b, float)):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b))
    return a == b


def _no_parser_errors(parsed: ParsedResponse) -> None:
    crashes = [d.reason for d in parsed.diagnostics if "parser error" in d.reason]
    assert not crashes, crashes
    for call in parsed.tool_calls:  # what a parser read can be keyed and checked without raising
        call.canonical_key()
        validate_arguments(FUZZ_TOOLS[0].parameters, call.arguments)


# --- (a) round trip ------------------------------------------------------------------


@pytest.mark.parametrize("family", FAMILIES)
def test_render_then_parse_gives_back_the_calls(family: str) -> None:
    @settings(max_examples=ROUND_TRIP_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
    @given(calls_for(family))
    def round_trip(calls: list[ToolCall]) -> None:
        text = get_family(family).render(calls)
        parsed = parse_response(text, tools=tools_typing(calls), format=family)
        _no_parser_errors(parsed)
        assert [c.name for c in parsed.tool_calls] == [c.name for c in calls], text
        for got, want in zip(parsed.tool_calls, calls):
            assert same_json(got.arguments, want.arguments), (text, got.arguments, want.arguments)
            assert got.format == family

    round_trip()


@pytest.mark.parametrize("family", FAMILIES)
def test_auto_mode_reads_every_family_render(family: str) -> None:
    """What a family renders is also read in auto mode (bash: when allowed), whoever claims it."""
    calls = [ToolCall("get_weather", {"city": "Paris", "days": 3}), ToolCall("ping", {"host": "a"} if family in NEEDS_AN_ARGUMENT else {})]
    text = get_family(family).render(calls)
    parsed = parse_response(text, tools=tools_typing(calls), allow_bash=True)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [(c.name, c.arguments) for c in calls], text
    assert parsed.content == ""


# --- (b) nothing crashes ----------------------------------------------------------------

#: numbers past Python's int/str digit limit (4,300), each a way a model writes one
HUGE_NUMBERS = ["1" * 4301, "-" + "9" * 5000, "1" * 4400 + ".5", "0x" + "f" * 3600, "0b" + "1" * 14400, "0o" + "7" * 4800]
ALL_TRIGGERS = sorted({t for name in FAMILIES for t in get_family(name).triggers})
FRAGMENTS = ALL_TRIGGERS + [t[: len(t) // 2] for t in ALL_TRIGGERS] + [
    "{", "}", "[", "]", "(", ")", '"', "'", ":", ",", "=", ">", "<", "\n", " ", "\\",
    "f", "name", "arguments", "</tool_call>", "</function>", "</parameter>", "<|call|>", "<|message|>",
    "<escape>", "```", "<think>", "</think>", "true", "null", "1e999", "-0", "call:", "to=functions.f",
    *HUGE_NUMBERS,
]
MIXED_TEXT = st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=6), max_size=40).map("".join)
FUZZ_TOOLS = [Tool("f", parameters={"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}}})]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(MIXED_TEXT)
def test_no_text_crashes_any_family(text: str) -> None:
    ctx = ParseContext(FUZZ_TOOLS, {"allow_bash": True})
    for name in FAMILIES:
        family = get_family(name)
        for trigger in family.triggers:
            at = text.find(trigger)
            while at != -1:
                found = family.extract(text, at, trigger, ctx)
                if found is not None:
                    assert at < found.end <= len(text), (name, trigger, at, found.end)
                at = text.find(trigger, at + 1)
    for tools in (None, FUZZ_TOOLS):
        parsed = parse_response(text, tools=tools, allow_bash=True)
        _no_parser_errors(parsed)
        assert isinstance(parsed.content, str)


JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.integers(4301, 5000).map(lambda digits: -(10**digits)) | st.floats() | st.text(max_size=20) | st.sampled_from(FRAGMENTS),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(["content", "tool_calls", "message", "function", "name", "arguments", "role", "thinking", "choices", "delta", "x"]) | st.text(max_size=8), inner, max_size=5),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(JSONISH)
def test_no_response_object_crashes_the_parser(response: Any) -> None:
    for tools in (None, FUZZ_TOOLS):
        parsed = parse_response(response, tools=tools, allow_bash=True)
        _no_parser_errors(parsed)


# --- (c) linear time ------------------------------------------------------------------

#: base size of hostile inputs; the test compares SIZE with 4 * SIZE
SIZE = 16_000
#: a linear parser grows ~4x from n to 4n, a quadratic one ~16x; this bound sits between with slack for noise
MAX_RATIO = 12.0
HOSTILE_TOOLS = [Tool("f", parameters={"type": "object", "properties": {"a": {"type": "string"}}})]


def _hostile_builders() -> list[tuple[str, str, Callable[[int], str]]]:
    cases: list[tuple[str, str, Callable[[int], str]]] = []
    for name in FAMILIES:
        family = get_family(name)
        for trigger in (*family.triggers, *family.offered_triggers, *family.tool_triggers(ParseContext(HOSTILE_TOOLS))):
            cases.append((name, f"{trigger!r}*n", lambda n, t=trigger: t * (n // len(t))))
            unit = trigger + 'f{"a":['
            cases.append((name, f"({trigger!r}+'f{{\"a\":[')*n", lambda n, u=unit: u * (n // len(u))))
            # strings that never close inside JSON bodies: a lenient read from each opener must
            # not run to the end of the text (it once did, at every opener: seconds for 40 KB)
            unit = trigger + '["'
            cases.append((name, f"({trigger!r}+'[\"')*n", lambda n, u=unit: u * (n // len(u))))
            unit = trigger + '{"a": "'
            cases.append((name, f"({trigger!r}+'{{\"a\": \"')*n+closers", lambda n, u=unit: u * (n // len(u)) + '"}]'))
    shared = {
        "{*n": lambda n: "{" * n,
        "[*n": lambda n: "[" * n,
        "[f(*n": lambda n: "[f(" * (n // 3),
        "<function=f>*n": lambda n: "<function=f>" * (n // 12),
        "nested [..]": lambda n: "[" * (n // 2) + "]" * (n // 2),
        'nested {"a":..}': lambda n: '{"a":' * (n // 5) + "}" * (n // 5),
        "open quote after trigger": lambda n: '<tool_call>{"name": "f", "arguments": {"a": "' + "x" * n,
        "weak tags around plain JSON": lambda n: '<tools>{"a": "' * (n // 14),
        "call-shaped hermes heads": lambda n: '<tool_call>{"name": ' * (n // 20),
        "blocks with a broken second value": lambda n: '<tool_call>{"name": "f", "arguments": {}}\n{bad: [}</tool_call>\n' * (n // 60),
        "harmony call heads": lambda n: '<|channel|>commentary to=functions.f <|message|>{"a": ' * (n // 55),
        "qwen3 JSON bodies cut short": lambda n: '<tool_call><function=f>{"a": </function></tool_call>' * (n // 50),
        "functionary bodies cut short": lambda n: '<function=f>{"a": </function>' * (n // 29),
        "functionary recipients": lambda n: '>>>f\n{"a": ' * (n // 11),
        "unescaped quotes in call arguments": lambda n: '<tool_call>{"name": "f", "arguments": {"a": "x" y' * (n // 50),
        "unescaped quotes in bare JSON": lambda n: '{"a": "x" y' * (n // 11),
        "bare call lines with an open string": lambda n: '<function\n{"name": "f", "arguments": "' * (n // 38) + ")",
        # JSON that is no call after each tag, one closer far away: no read may span to it
        # (four times the base size: the quadratic cost of a read at each tag shows from ~50 KB)
        "non-call JSON before one far closer": lambda n: "<tool_calls>{}" * (4 * n // 14) + "</tool_calls>",
        "granite non-calls before one far closer": lambda n: '<|tool_call|>{"a": 1}' * (4 * n // 21) + "<|/tool_call|>",
        "python_tag non-calls before one trailer": lambda n: '<|python_tag|>{"a": 1}' * (4 * n // 22) + "<|eom_id|>",
        "many calls before one closer": lambda n: "<|python_tag|>" + '{"name": "f", "parameters": {}}; ' * (n // 33) + "<|eom_id|>",
        # the families whose markers come from the offered tool `f`
        "tool element heads": lambda n: "<f>\n<a>" * (n // 7),
        "tool elements, valid calls": lambda n: "<f>\n<a>x</a>\n</f>\n" * (n // 18),
        "tool elements in hermes tags": lambda n: "<tool_call><f><a>x</a>" * (n // 22),
        "python fences of calls": lambda n: "```py\nf()\n" * (n // 10),
        # Gemini CLI's notation mid-line: each one once looked back over the whole line for its start
        "gemini notation mid-line": lambda n: "x [tool_call: f for a 'b' " * (n // 26),
        # call tags holding attributes, never closed: each body once searched to the end of the text
        "attribute bodies never closed": lambda n: '<tool_call>f a="x" ' * (n // 19),
        "python fences of printed calls": lambda n: "```\nprint(f(a='x'))\n```\n" * (n // 24),
        "react steps": lambda n: "Action: f\nAction Input: x\n" * (n // 27),
        # a tool's name then an object, line after line (named_json): each read stops at the next such
        # line, and only the last line opening an object can be the answer's arguments
        "name lines with objects of undeclared keys": lambda n: 'f {"a": 1}\n' * (n // 11),
        "name lines with a string never closed": lambda n: 'f {"a": "' * (n // 9),
        "name lines with braces only": lambda n: "f{\n" * (n // 3),
        "labelled name lines": lambda n: 'Action: f {"a": 1}\n' * (n // 19),
        "object lines never closed, one closer": lambda n: '\n{"a": 1' * (n // 8) + "}",
        # group openers each followed by a call opener, and bare calls after reasoning closers:
        # each once made a read that sliced or scanned to the end of the text
        "GLM group and call openers": lambda n: "<tool_calls><tool_call>" * (n // 23),
        "Gemma bare calls after reasoning closers": lambda n: "<channel|>call:f{a:" * (n // 19),
        "key/value values never closed": lambda n: "<tool_call>f<arg_key>a</arg_key><arg_value>x" * (n // 44),
        "Solar values never closed": lambda n: "<|tool_call:start|>f\n<|tool_arg:start|>a<|tool_arg:value|>" * (n // 57),
        "PLaMo requests cut in their arguments": lambda n: (
            '<|plamo:begin_tool_request:plamo|><|plamo:begin_tool_name:plamo|>f<|plamo:end_tool_name:plamo|><|plamo:begin_tool_arguments:plamo|>{"a": "'
        ) * (n // 140),
        "JSON blocks with a second value cut short": lambda n: '<tool_call>{"name": "f", "arguments": {}}, {"name": ' * (n // 52),
        # a name glued to an object never closed inside an unclosed call tag: each read once ran to the end
        "names glued to objects in unclosed call tags": lambda n: "<tool_call>f{" * (n // 13),
        # a JSON object as an attribute, never closed: each decode once copied the text up to it
        "attribute objects never closed": lambda n: '<tool_invocation name="f" arguments={' * (n // 38),
        "bent elements never closed": lambda n: '<tool_call>f<a="x"' * (n // 18),
        "sentences before calls never closed": lambda n: "Ok. f(" * (n // 6),
    }
    # openers of the newer families followed by the start of a body that never completes
    openers = ["<|tools_prefix|>", "<|function_call|>", "<|message_sep|>", "<seed:think>", "<longcat_tool_call>",
               '<function name="x">', "<function ", "<ifm|tool_call>", "<ifm|tool_calls>", "<ifm|tool_call>x",
               '<\uff5ctool_call_begin\uff5c><steptml:invoke name="x">']
    for opener in openers:
        for tail in ("{", "[{", "<"):
            shared[f"({opener!r}+{tail!r})*n"] = lambda n, u=opener + tail: u * (n // len(u))
    for label, build in shared.items():
        cases.append(("auto", label, build))
    return cases


#: timed runs per size: the fastest counts (``make test`` times fewer)
TIMING_REPEATS = 5 if full_sweeps() else 3


def _best_time(fn: Callable[[], object], repeats: int = TIMING_REPEATS) -> float:
    """CPU time of the fastest of a few runs: other load on a shared machine only ever adds time."""
    times = []
    for _ in range(repeats):
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return min(times)


def _growth(fmt: str, build: Callable[[int], str]) -> tuple[float, float]:
    """CPU time at n and 4n (caches already warm: the caller parsed the input at n first)."""
    small, large = build(SIZE), build(4 * SIZE)

    def run(text: str) -> Callable[[], object]:
        return lambda: parse_response(text, tools=HOSTILE_TOOLS, format=fmt, allow_bash=True)

    return _best_time(run(small)), _best_time(run(large))


def _sampled(cases: list) -> list:
    """Every case under ``make test-full``; under ``make test`` an even sample of an eighth (a sweep)."""
    step = max(1, len(cases) // sweep_size(len(cases)))
    return cases[::step]


@pytest.mark.parametrize(("fmt", "label", "build"), _sampled(_hostile_builders()), ids=lambda v: v if isinstance(v, str) else "")
def test_hostile_input_costs_linear_time(fmt: str, label: str, build: Callable[[int], str]) -> None:
    parsed = parse_response(build(SIZE), tools=HOSTILE_TOOLS, format=fmt, allow_bash=True)  # also warms the caches
    _no_parser_errors(parsed)
    small, large = _growth(fmt, build)
    if large / max(small, 1e-4) >= MAX_RATIO:  # one re-measure: the machine is shared
        small, large = _growth(fmt, build)
    assert large / max(small, 1e-4) < MAX_RATIO, f"{fmt} {label}: {small * 1e3:.2f} ms -> {large * 1e3:.2f} ms for 4x input"


def test_a_megabyte_of_braces_is_read_in_linear_time() -> None:
    quarter, full = "{" * (256 * 1024), "{" * (1024 * 1024)
    parse_response(quarter)
    small = _best_time(lambda: parse_response(quarter))
    large = _best_time(lambda: parse_response(full))
    assert large / max(small, 1e-4) < MAX_RATIO, f"{small * 1e3:.1f} ms -> {large * 1e3:.1f} ms"


def test_reasoning_markers_are_the_only_global_exclusion() -> None:
    """Guard for the strategy above: the exclusion list stays what the docstring claims."""
    assert REASONING_MARKERS == ("<think", "</think", "<seed:think", "</seed:think", "<longcat_think", "</longcat_think", "<ifm|think", "</ifm|think", "[THINK]", "[/THINK]", "<|channel>thought", "<channel|>")
    assert all(re.fullmatch(r"[a-z0-9_]+", name) for name in WIRE_LIMITS)
    assert set(WIRE_LIMITS) <= set(FAMILIES)
