"""Scan-lookahead heads of mistral, functools, functiongemma, anthropic_xml, bash and pythonic's wrappers.

A head is a *necessary* condition for ``extract`` to return anything after
its trigger; the composite compiles it into the one-shot scan so floods of a
bare opener never reach Python. These tests hold each head to that: directly
(head fails → ``extract`` is None, with and without tools, at the end of the
text too), through the whole scan (filtered == literal, as in
``test_scan_filter``), and check that the possessive spellings the heads (and
the rewritten mistral truncation check) use match exactly what the families'
own patterns match. The flood tests say what the heads are for.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from utp.parsers import get_parser
from utp.parsers.base import ParseContext, registered_families
from utp.parsers.scanloop import scan_text
from utp.parsers.families import anthropic_xml, mistral, pythonic

from .test_scan_filter import AFTER, CONTEXTS, SCANNER, TOOLS, _outcome, _same_scan

FAMILIES = registered_families()
NS = "antml" + ":"

#: (family name, trigger) for every trigger whose head these tests cover
HEADED = [
    ("mistral", "[TOOL_CALLS]"),
    ("functools", "functools["),
    ("functiongemma", "<start_function_call>"),
    ("functiongemma", "<|tool_call>"),
    ("anthropic_xml", "<function_calls>"),
    ("anthropic_xml", f"<{NS}function_calls>"),
    ("anthropic_xml", "<invoke "),
    ("anthropic_xml", f"<{NS}invoke "),
    ("bash", "```sh"),
    ("bash", "```bash"),
    ("bash", "```shell"),
    ("pythonic", "<|tool_call_start|>"),
    ("pythonic", "<function_calls>"),
]
TRIGGERS = sorted({trigger for _, trigger in HEADED})

#: the starts of every body these families read, truncated bodies and near misses (each once)
BODY_STARTS = list(dict.fromkeys([
    # mistral
    '[{"name": "f", "arguments": {}}]', '{"name": "f", "arguments": {"a": 1}}', "f[ARGS]{\"a\": 1}", "f[CALL_ID]ab12[ARGS]{}",
    "f{}", 'get_weather [ARGS] {"city": "x"}', "f[ARGS]", "f[AR", "f[CALL_ID]", "f[CALL_ID]x", "f[CALL_ID]x[ARGS]", "get_weather",
    "f.x-y", "[/TOOL_CALLS]", "9f{}", "-x", ".", "a" * 130 + "{}", "a" * 128 + "{}", "a" * 129 + "{}",
    "f[CALL_ID]" + "x" * 64 + "[ARGS]{}", "f[CALL_ID]" + "x" * 65 + "[ARGS]{}", "f [ x", "f[args]{}", "f[TOOL_CALLS]",
    # functools
    "]", " ]", "\u00a0]", "\n\t]", "]x", "1]", '"f"]',
    # functiongemma
    "call:f{a:<escape>x<escape>}", "call:f{}<end_function_call>", "call:", "call", "cal", " call:f{}", " " * 64 + "call:f{}",
    " " * 65 + "call:f{}", "<end_function_call>", "<tool_call|>", "call:f{a:1},call:g{}", "CALL:f{}", "call:f", "call:{}",
    # anthropic_xml
    '<invoke name="f">', "<invoke name='f'>", '<invoke  name = "f" >', f'<{NS}invoke name="f">', 'name="f">', "name='f'>",
    'name="f"', 'name="f', "name=\"f'>", ' \n name="f">', '<parameter name="a">1</parameter>', "</invoke>",
    "</function_calls>", " " * 256 + '<invoke name="f">', " " * 257 + '<invoke name="f">', 'name="">', 'name="' + "a" * 256 + '">',
    'name="' + "a" * 257 + '">', 'name="a\nb">', "<invoke\tname='f'>", "<invokename='f'>", '<INVOKE name="f">', 'NAME="f">',
    # bash
    "\n", "\nf x\n", " \n", "x\n", "\n\n", "\n   \n```", "\n# c\n", '\nf "unclosed\n', "\t\x0b\nf", "\x0b", "\n\x0bf",
    " " * 63 + "\nf", " " * 64 + "\nf", "\r\n", "\r\nsearch x", "rc\n", "-session\nf\n", "\nsearch -q x", "\n;\n", "\n;f",
    "\n\u00a0", "\n```", "\n \n\t```\nf",
    # pythonic wrappers
    "[f()]", "f(a=1)", "f (", " \n f(", "[", "  ", "f", " " * 64 + "f(", " " * 65 + "f(", " " * 65, "<|tool_call_end|>", "a.b(",
    "9(", "x" * 2301 + "(", "x" * 2302 + "(", "f" + " " * 16 + "(", "f" + " " * 17 + "(", "f()\ng()",
    # whatever comes next
    *AFTER, *TRIGGERS, "[", "{", "```", "\n```\n", "<|tool_call_end|>", "<end_function_call>", "<tool_call|>", "[/TOOL_CALLS]",
]))
PREFIXES = ["", " ", "\n", "x", ".", "_", "é", "Here:\n", "`", "mod."]
SEPARATORS = ["", "\n", " then ", "\n```\n", "]", "}", "</invoke>", "</function_calls>", "<|tool_call_end|>"]


def _head(family: str, trigger: str) -> re.Pattern[str]:
    return re.compile(FAMILIES[family].trigger_heads[trigger])


@st.composite
def trigger_texts(draw) -> str:
    """Prose, then these families' triggers, each followed by body starts: every head's edges."""
    parts = [draw(st.sampled_from(PREFIXES))]
    for _ in range(draw(st.integers(1, 4))):
        parts.append(draw(st.sampled_from(TRIGGERS)))
        parts.extend(draw(st.lists(st.sampled_from(BODY_STARTS) | st.text(max_size=3), min_size=0, max_size=3)))
        parts.append(draw(st.sampled_from(SEPARATORS)))
    return "".join(parts)


#: the auto parser's scanner without the opt-in bash family (SCANNER has every family)
WITHOUT_BASH = get_parser("auto", TOOLS).scanner


@settings(max_examples=2500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=trigger_texts(), with_tools=st.booleans())
def test_filtered_scan_equals_literal_scan(text: str, with_tools: bool) -> None:
    _same_scan(text, CONTEXTS[with_tools])
    ctx = CONTEXTS[with_tools]
    for reasoning in (False, True):
        filtered = scan_text(text, WITHOUT_BASH, ctx, reasoning=reasoning)
        literal = scan_text(text, WITHOUT_BASH, ctx, reasoning=reasoning, literal=True)
        assert _outcome(filtered) == _outcome(literal), (text, reasoning)


@settings(max_examples=2500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    which=st.sampled_from(HEADED),
    prefix=st.sampled_from(PREFIXES),
    after=st.lists(st.sampled_from(BODY_STARTS) | st.text(max_size=4), max_size=4),
)
def test_head_is_necessary_for_extract(which: tuple[str, str], prefix: str, after: list[str]) -> None:
    """Where the head fails, ``extract`` returns None, with tools or without."""
    family, trigger = which
    text = prefix + trigger + "".join(after)
    pos = len(prefix)
    if _head(family, trigger).match(text, pos + len(trigger)) is not None:
        return
    for ctx in CONTEXTS:
        assert FAMILIES[family].extract(text, pos, trigger, ctx) is None, (family, text)


@pytest.mark.parametrize("which", HEADED)
@pytest.mark.parametrize("body", BODY_STARTS)
def test_head_is_necessary_on_every_body_start(which: tuple[str, str], body: str) -> None:
    family, trigger = which
    for prefix in PREFIXES:
        text = prefix + trigger + body
        pos = len(prefix)
        if _head(family, trigger).match(text, pos + len(trigger)) is None:
            for ctx in CONTEXTS:
                assert FAMILIES[family].extract(text, pos, trigger, ctx) is None, (family, text)


@pytest.mark.parametrize(
    "text",
    [
        "[TOOL_CALLS]get_weather[ARGS]{\"city\": \"Paris\"}",
        "[TOOL_CALLS]get_wea",
        "[TOOL_CALLS]get_weather[AR",
        "[TOOL_CALLS]  ",
        "functools[{\"name\": \"f\", \"arguments\": {}}]",
        "<start_function_call>call:f{a:<escape>x<escape>}<end_function_call>",
        "<|tool_call>call:f{}<tool_call|>",
        '<function_calls>\n<invoke name="f">\n<parameter name="a">1</parameter>\n</invoke>\n</function_calls>',
        f'<{NS}function_calls><{NS}invoke name="f"></{NS}invoke></{NS}function_calls>',
        '<invoke name="f"><parameter name="a">1</parameter></invoke>',
        "```bash\nf --a 1\n```",
        "```sh  \nsearch x\n```",
        "```shell\nf",
        "<|tool_call_start|>[f(a=1)]<|tool_call_end|>",
        "<|tool_call_start|>  ",
        "<function_calls>\nf(a=1)\n</function_calls>",
    ],
)
def test_heads_let_real_calls_through(text: str) -> None:
    """The shapes each family reads (truncated ones included) still reach ``extract``."""
    for ctx in CONTEXTS:
        _same_scan(text, ctx)
    assert SCANNER.filtered_call_pattern.search(text) is not None


# ---------------------------------------------------------------- the possessive spellings


_OLD_TRUNCATED = re.compile(r"\s*[\w.\-]*(?:\[[A-Z_]*\]?)?\s*[\w\-]*")


@settings(max_examples=3000, deadline=None)
@given(st.text(alphabet="aZ9_-.é \n\t[]ARGSCLID{}!\u00a0", max_size=24))
def test_mistral_truncated_check_matches_the_old_pattern(tail: str) -> None:
    assert bool(mistral._TRUNCATED_RE.fullmatch(tail)) == bool(_OLD_TRUNCATED.fullmatch(tail))


def test_mistral_truncated_check_is_linear_on_a_long_word() -> None:
    """The old pattern backtracked quadratically over one long word (seconds for 20k letters)."""
    text = "[TOOL_CALLS]" + "a" * 200_000 + "!"
    assert mistral._TRUNCATED_RE.fullmatch(text, len("[TOOL_CALLS]")) is None
    assert FAMILIES["mistral"].extract(text, 0, "[TOOL_CALLS]", ParseContext()) is None


_NAMED_HEAD = re.compile(r"\s*[A-Za-z_][\w.\-]{0,127}+\s*+(?:\[CALL_ID\]\s*+[\w\-]{1,64}+\s*+)?(?:\[ARGS\])?\s*+\{")


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(["f", "a" * 60, "_", "9", ".", "-", " ", "\n", "[CALL_ID]", "[ARGS]", "x1", "{", "[", "é"]), max_size=8))
def test_mistral_named_head_matches_named_pattern(pieces: list[str]) -> None:
    tail = "".join(pieces)
    assert bool(_NAMED_HEAD.match(tail)) == bool(mistral._NAMED.match(tail))


_INVOKE_SCAN = re.compile(rf"<(?:{re.escape(NS)})?invoke\s" + anthropic_xml._INVOKE_TAIL)


@settings(max_examples=3000, deadline=None)
@given(
    st.lists(
        st.sampled_from(["<invoke", f"<{NS}invoke", " ", "\n", "name", "=", '"', "'", "f", "a" * 100, ">", "<", "é"]),
        max_size=10,
    )
)
def test_invoke_head_matches_invoke_pattern(pieces: list[str]) -> None:
    tail = "".join(pieces)
    assert bool(_INVOKE_SCAN.match(tail)) == bool(anthropic_xml._INVOKE.match(tail))


_WRAPPED_SCAN = re.compile(r"\s{0,64}+(?:\[|[A-Za-z_][\w.]{0,2300}+\s{0,16}+\()")


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from([" ", " " * 30, "\n", "[", "f", "x" * 1000, ".", "9", "(", "é", "_", "<"]), max_size=8))
def test_wrapped_head_matches_wrapped_pattern(pieces: list[str]) -> None:
    tail = "".join(pieces)
    assert bool(_WRAPPED_SCAN.match(tail)) == bool(pythonic._WRAPPED_HEAD.match(tail))


# ---------------------------------------------------------------- floods

#: triggers whose bare floods the heads turn away everywhere (at most the last copy, at the end
#: of the text, may still be visited: some families report a call cut off by the end there)
SKIPPED = [t for t in TRIGGERS if t not in ("[TOOL_CALLS]", "functools[")]


def _visits(text: str) -> list[int]:
    """Where each filtered pattern would make the scan stop, merged."""
    spots = {m.start() for m in SCANNER.filtered_call_pattern.finditer(text)}
    return sorted(spots | {m.start() for m in SCANNER.filtered_pattern.finditer(text)})


@pytest.mark.parametrize("trigger", SKIPPED)
@pytest.mark.parametrize("suffix", ["", "\n", " "])
def test_flood_of_a_bare_opener_is_never_visited(trigger: str, suffix: str) -> None:
    unit = trigger + suffix
    text = unit * 1000
    assert _visits(text) in ([], [len(text) - len(unit)])
    assert len(SCANNER.pattern.findall(text)) >= 1000  # the literal scan would stop at each one


@pytest.mark.parametrize("trigger", SKIPPED)
@pytest.mark.parametrize("junk", ["f", "f{", '"', "x(", "call", "name=", "]"])
def test_flood_of_opener_and_junk_is_never_visited(trigger: str, junk: str) -> None:
    unit = trigger + junk
    text = unit * 1000
    if junk == "x(" and trigger in (pythonic.LFM_OPEN, pythonic.OLMO_OPEN):
        # a python call opening a wrapper block: read once, and that read takes the rest (unclosed)
        assert scan_text(text, SCANNER, CONTEXTS[0]).spans == [(0, len(text))]
        return
    assert _visits(text) in ([], [len(text) - len(unit)])


@pytest.mark.parametrize("trigger", ["[TOOL_CALLS]", "functools["])
@pytest.mark.parametrize("suffix", ["", "\n", " "])
def test_flood_of_a_json_tag_is_one_visit(trigger: str, suffix: str) -> None:
    """A JSON tag followed by ``[`` must be read (it may be an unreadable call to report), but the
    first read takes the whole flood as one reported span, so the scan stops once."""
    text = (trigger + suffix) * 1000
    for ctx in CONTEXTS:
        result = scan_text(text, SCANNER, ctx)
        assert result.spans == [(0, len(text))]


@pytest.mark.parametrize("junk", ["f", "f(", '"', "x.y z", "f[ARGS]x"])
def test_flood_of_mistral_tag_and_junk_is_never_visited(junk: str) -> None:
    """Only the tail may be visited: ``f[TOOL_CALLS]f`` at the end reads as a name cut off
    mid-tag (``NAME[ARG``), which ``extract`` reports as truncated."""
    unit = "[TOOL_CALLS]" + junk
    text = unit * 1000
    assert set(_visits(text)) <= {len(text) - len(unit), len(text) - 2 * len(unit)}


@pytest.mark.parametrize("unit", ["functools[]", "functools[ ]", "x.functools[", "my_functools[", "afunctools["])
def test_functools_floods_that_are_never_calls(unit: str) -> None:
    text = unit * 1000
    assert _visits(text) in ([], [len(text) - len(unit)])


def test_bash_flood_without_bash_has_no_trigger_at_all() -> None:
    """bash is opt-in: without it, ```` ```sh ```` is only the fenced family's ```` ``` ````."""
    from utp.types import Tool

    off = get_parser("auto", [Tool("f")]).scanner
    on = get_parser("auto", [Tool("f")], allow_bash=True).scanner
    assert "```sh" not in off.triggers and "```sh" in on.triggers
    for scanner in (off, on):
        for unit in ("```sh", "```sh\n", "```bash\n\n", "```shell \n```"):
            text = unit * 1000
            assert [m.start() for m in scanner.filtered_call_pattern.finditer(text)] in ([], [len(text) - len(unit)])
