"""The one-shot scan's head filter and trie pattern change speed, never results.

The composite compiles the families' ``trigger_heads`` into its single scan
pattern so that positions where every owner would decline are never visited.
That is only sound if each head is a *necessary* condition for its family's
``extract`` to return something; these tests hold the filtered scan to the
literal one (every trigger occurrence visited) on the corpus and on generated
texts built from trigger fragments, call bodies and noise.
"""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.parsers.conftest import WHOLE_ANSWER_ONLY
from utp.parsers import family_names, get_family, get_parser
from utp.parsers.base import ParseContext, registered_families
from utp.parsers.scanloop import scan_text
from utp.parsers.triggerscan import EitherPattern, ToolScanner, TriggerScanner, scanner_for, trie_pattern
from utp.types import Tool, ToolCall

from .conftest import load_annotated

ALL_FAMILIES = list(registered_families().values())
SCANNER = TriggerScanner(ALL_FAMILIES)
TOOLS = [Tool("get_weather"), Tool("f"), Tool("search")]
CONTEXTS = [ParseContext(), ParseContext(TOOLS)]

#: pieces the generated texts are made of: every trigger, the text that follows triggers
#: in real calls, closers, and characters that sit at the edge of each head
PIECES = sorted(
    {t for f in ALL_FAMILIES for t in f.triggers}
    | {
        "\n", " ", "\t", ":", "Here:\n", "`", '"', "'", "\\", "name", "Name", "arguments", "parameters", "id",
        '"name": "f"', '"arguments": {}', "f(", "get_weather(city='x')", "a.b(", "]", ")", "}", "{}", "[]",
        "</tool_call>", "<function=f>", "</function>", "<parameter=a>", "</parameter>", "<name>f</name>",
        "<arguments>{}</arguments>", "<arg_key>a</arg_key>", "<arg_value>1</arg_value>", "get_weather\n",
        "```json\n", "\n```", "```python\n", "print(", "default_api.", "<think>", "</think>", "é", "K",
        "<get_weather>", "</get_weather>", "<f>", "</f>", "<city>x</city>", "<search>\n<query>x</query>\n</search>",
    }
)


#: what may follow a trigger: the start of every body shape some family reads, and near misses
AFTER = [
    "", " ", "\n", "  \n\t", '"', "'", "\\\"", "\\", "{", "[", "<", "`",
    "name", "Name", "NAME", "tool_name", "function", "arguments", "parameters", "args", "input", "type", "id", "idx", "name-x",
    '"name": "f", "arguments": {}}', "'name': 'f', 'arguments': {}}", 'name: "f", arguments: {}}',
    '"function": "get_weather", "parameters": {"city": "x"}}', '{"name": "f", "arguments": {}}]',
    "f()]", "get_weather(city='x')]", "a.b.c (x=1)]", "f ()", "_x(", "9f(",
    "get_weather\n", "get_weather", "f<arg_key>a</arg_key><arg_value>1</arg_value>", " _f<arg_key>a</arg_key><arg_value>1</arg_value></tool_call>", "9x</tool_call>", "<name>f</name>", "<tool_name>f</tool_name>",
    "<function>f</function>", "<function=f>", "<arguments>{}</arguments>", "</tool_call>", "é", "K", "é(",
    "json\n", "tool_call\n", "json \n  ", 'json\n{"name": "f", "arguments": {}}\n```', "tool_code\n[f()]\n```", "x" * 61 + "\n{",
]


TRIGGERS = sorted({t for f in ALL_FAMILIES for t in f.triggers})
#: triggers some family guards with a head: drawn half of the time
HEADED = sorted({t for f in ALL_FAMILIES for t in f.trigger_heads})


@st.composite
def call_like_texts(draw) -> str:
    """Prose, then triggers each followed by body-like text: exercises every head's edges."""
    parts = [draw(st.sampled_from(["", "Here:\n", "ok ", "\n", "x\n\n", "<think>t</think>"]))]
    for _ in range(draw(st.integers(1, 4))):
        parts.append(draw(st.sampled_from(HEADED) | st.sampled_from(TRIGGERS)))
        parts.extend(draw(st.lists(st.sampled_from(AFTER), min_size=1, max_size=3)))
        parts.append(draw(st.sampled_from(["", "\n", " then ", "\n```\n", "]", "}"])))
    return "".join(parts)


def _outcome(result) -> tuple:
    calls = [(c.name, json.dumps(c.arguments, sort_keys=True), c.format) for c in result.calls]
    diagnostics = [(d.kind, d.reason, d.format, d.offset) for d in result.diagnostics]
    return calls, diagnostics, result.spans, result.thinking


#: with tools offered, families add triggers for them (a code fence, ``<get_weather>``): one trie
#: of everything, and what one-shot parsing uses, the shared trie plus a pattern of the tools' own
TOOL_SCANNER = TriggerScanner(ALL_FAMILIES, CONTEXTS[1], anchored=False)
SPLIT_SCANNER = scanner_for(ALL_FAMILIES, CONTEXTS[1])


def _same_scan(text: str, ctx: ParseContext) -> None:
    scanner = TOOL_SCANNER if ctx.has_tools else SCANNER
    for reasoning in (False, True):
        filtered = scan_text(text, scanner, ctx, reasoning=reasoning)
        literal = scan_text(text, scanner, ctx, reasoning=reasoning, literal=True)
        assert _outcome(filtered) == _outcome(literal), (text, reasoning)
        if ctx.has_tools:
            for literal in (False, True):
                split = scan_text(text, SPLIT_SCANNER, ctx, reasoning=reasoning, literal=literal)
                assert _outcome(split) == _outcome(filtered), (text, reasoning, literal)


def test_one_shot_with_tools_reuses_the_families_trie() -> None:
    """A new tool list compiles its own few triggers, not the families' whole trie again."""
    first = scanner_for(ALL_FAMILIES, ParseContext([Tool("read_file")]))
    second = scanner_for(ALL_FAMILIES, ParseContext([Tool("list_dir"), Tool("grep")]))
    assert isinstance(first, ToolScanner) and isinstance(second, ToolScanner)
    assert first.shared is second.shared is not scanner_for(ALL_FAMILIES)
    assert "pythonic" in {f.name for f in first.shared.owners["```"]}  # any tool list's: in the shared trie
    assert "<read_file>" in first.candidates and "<read_file>" not in second.candidates
    assert [c.family.name for c in second.candidates["<grep>"]] == ["cline_xml"]


class _CountingPattern:
    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern, self.calls = pattern, 0

    def search(self, text: str, pos: int = 0) -> re.Match[str] | None:
        self.calls += 1
        return self.pattern.search(text, pos)


def test_either_pattern_searches_a_rare_pattern_again_only_once_passed() -> None:
    """A scan asks from every common trigger; the rare one's match (or its absence) is remembered."""
    common, rare = _CountingPattern(re.compile("a")), _CountingPattern(re.compile("<b>"))
    either = EitherPattern(common, rare)  # type: ignore[arg-type]
    text = "a" * 5000 + "<b>" + "a" * 5000
    starts = [m.start() for m in either.finditer(text)]
    assert starts == [m.start() for m in re.finditer("a|<b>", text)]
    assert rare.calls == 2 and common.calls == len(starts)  # one per match of its own, plus the final miss


@given(st.text(alphabet="<>ab|", max_size=30))
def test_either_pattern_matches_like_the_alternation_of_both(text: str) -> None:
    first, second = ["<a", "<ab>", "|"], ["<a", "<abb", "b|", "<"]
    both = trie_pattern(dict.fromkeys(first + second, ""))
    either = EitherPattern(trie_pattern(dict.fromkeys(first, "")), trie_pattern(dict.fromkeys(second, "")))
    assert both is not None
    assert [m.span() for m in either.finditer(text)] == [m.span() for m in both.finditer(text)]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pieces=st.lists(st.sampled_from(PIECES) | st.text(max_size=4), max_size=14), with_tools=st.booleans())
def test_filtered_scan_equals_literal_scan_on_generated_text(pieces: list[str], with_tools: bool) -> None:
    _same_scan("".join(pieces), CONTEXTS[with_tools])


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=call_like_texts(), with_tools=st.booleans())
def test_filtered_scan_equals_literal_scan_on_call_like_text(text: str, with_tools: bool) -> None:
    _same_scan(text, CONTEXTS[with_tools])


@pytest.mark.parametrize("text", ['{name<TOOLCALL>', '{{"name"<TOOLCALL>', '{"name"{"name"', '``````get_weather\n{"name": "f", "arguments": {}}]',
                                  '``` ```get_weather\n{"name": "f", "arguments": {}}]'])
@pytest.mark.parametrize("with_tools", [False, True])
def test_filtered_scan_equals_literal_scan_where_a_head_fails_after_a_call_key(text: str, with_tools: bool) -> None:
    """A head that fails, and ``extract`` agrees: a call key with no separator after it; backticks
    on a fence's opening line (hypothesis found ``extract`` reading ```` `````` ```` and ```` ``` ``` ```` from the first)."""
    _same_scan(text, CONTEXTS[with_tools])


@pytest.mark.parametrize("with_tools", [False, True])
def test_filtered_scan_equals_literal_scan_on_corpus(with_tools: bool) -> None:
    records = load_annotated()
    for record in records:
        _same_scan(record["raw"], CONTEXTS[with_tools])


@pytest.mark.parametrize("family", family_names())
def test_filtered_scan_keeps_every_rendered_call(family: str) -> None:
    calls = [ToolCall("get_weather", {"city": "Paris", "days": 3}), ToolCall("search", {"query": "x"})]
    text = f"Let me check.\n{get_family(family).render(calls)}\nDone."
    for ctx in CONTEXTS:
        _same_scan(text, ctx)
    parsed = get_parser("auto", TOOLS, allow_bash=True).parse(text)
    if family in WHOLE_ANSWER_ONLY:  # between sentences it is prose; alone (its parameters declared) it is the calls
        assert parsed.tool_calls == []
        declared = [Tool(c.name, parameters={"type": "object", "properties": dict.fromkeys(c.arguments, {})}) for c in calls]
        parsed = get_parser("auto", declared, allow_bash=True).parse(get_family(family).render(calls))
    assert [c.name for c in parsed.tool_calls] == ["get_weather", "search"]


def test_heads_are_valid_regexes_for_own_triggers() -> None:
    for family in ALL_FAMILIES:
        owned = (*family.triggers, *family.offered_triggers, *family.tool_triggers(CONTEXTS[1]))
        for trigger, head in family.trigger_heads.items():
            assert trigger in owned, f"{family.name}: head for a trigger it does not own: {trigger!r}"
            re.compile(head)


@given(st.text(alphabet="<>abc|_", max_size=30))
def test_trie_pattern_finds_the_longest_trigger_like_a_flat_alternation(text: str) -> None:
    triggers = ["<a", "<ab", "<abc>", "a|", "|", "<b>", "bc"]
    flat = re.compile("|".join(re.escape(t) for t in sorted(triggers, key=len, reverse=True)))
    trie = trie_pattern(dict.fromkeys(triggers, ""))
    assert trie is not None
    assert [m.span() for m in trie.finditer(text)] == [m.span() for m in flat.finditer(text)]


def test_flood_of_openers_is_never_visited() -> None:
    """The reason the heads exist: no Python-level visit for a bare ``{`` or ``<tool_call>`` flood."""
    for flood in ("{" * 5000, "[" * 5000, "<tool_call>" * 500):
        assert SCANNER.filtered_pattern.search(flood) is None
        assert SCANNER.content_pattern.search(flood) is not None


def test_a_trigger_owned_twice_checks_the_union_of_its_heads_first_characters_first() -> None:
    """1 MB of ``[`` (pythonic's and json's) then fails each position in one regex step."""
    from utp.parsers.triggerscan import _guard

    owners = [get_family("pythonic"), get_family("json")]
    guard = _guard("[", owners)
    assert guard.startswith("(?=[") and guard.index("(?=(?:") > 0
    first = re.compile(guard[: guard.index("(?=(?:")])
    assert first.match("x") and first.match("{") and first.match(" ") and not first.match("[") and not first.match("]")
    # a head that opens with anything else (fenced's ``[^\n`]…``) gets no union: it could be wrong
    fence = _guard("```", [get_family("pythonic"), get_family("fenced")])
    assert fence.startswith("(?=(?:")
