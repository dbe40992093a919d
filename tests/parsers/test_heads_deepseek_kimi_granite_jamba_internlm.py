"""Scan heads of the special-token families: DeepSeek, Kimi K2, Granite, Jamba, InternLM.

A head is sound only if ``extract`` returns None wherever it does not match.
These tests hold that at three levels: ``extract`` itself right after each
headed trigger (every context, including an offered ``interpreter`` tool,
which changes what InternLM reads), the filtered one-shot scan against the
literal one (with every family, and with each of these families alone, where
a head on a shared trigger such as ``<|tool_call_begin|>`` takes effect), and
floods of bare openers that the filtered pattern must not visit.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from utp.parsers import parse_response
from utp.parsers.base import CallFamily, ParseContext, registered_families
from utp.parsers.scanloop import scan_text
from utp.parsers.triggerscan import TriggerScanner
from utp.parsers.families import deepseek, internlm, kimi_k2
from utp.types import Tool

from .test_scan_filter import SCANNER, TOOLS, _outcome

NAMES = ("deepseek", "kimi_k2", "granite", "jamba", "internlm")
FAMILIES: dict[str, CallFamily] = {name: registered_families()[name] for name in NAMES}
#: the full scanner plus one per family: alone, a family's head on a shared trigger is used
SCANNERS = [SCANNER] + [TriggerScanner([family]) for family in FAMILIES.values()]
CONTEXTS = [ParseContext(), ParseContext(TOOLS), ParseContext([*TOOLS, Tool("interpreter")])]
MY_TRIGGERS = sorted({t for family in FAMILIES.values() for t in family.triggers})
HEADED = sorted({t for family in FAMILIES.values() for t in family.trigger_heads})

_DS_TOKENS = deepseek.CALLS_BEGIN + deepseek.CALLS_END + deepseek.CALL_BEGIN + deepseek.CALL_END + deepseek.SEP + deepseek.EOS
#: what follows these triggers in real calls, cut short, and near misses at each head's edge
BODY = sorted(
    set(_DS_TOKENS)
    | {
        # DeepSeek: names, fences, separators spelled wrongly (mixed bars, mixed space markers)
        "function", "get_weather", "\n```json\n", '{"city": "x"}', "\n```", "```", "<|tool_sep｜>",
        "<｜tool▁sep|>", "<|tool_sep>", "<|tool▁sep", "<｜tool_sep", "<|tool▁call_begin|>", "<", "<|", "<｜", "|>",
        # Kimi K2
        kimi_k2.SECTION_BEGIN, kimi_k2.SECTION_END, kimi_k2.CALL_BEGIN, kimi_k2.ARG_BEGIN, kimi_k2.CALL_END,
        "functions.get_weather:0", "functions.f:1", "<|tool_call_begin", "<|tool_calls_section_end", '{"a": 1}',
        # Kimi ids before a bare argument token (its opening tokens dropped), and near misses
        "channel_reply:0", "f:12 ", "f:", ":0", "functions.:0", "<|tool_call_argument_begin", "'",
        # JSON bodies (Granite, Jamba, InternLM plugin)
        "{", "[", "]", "}", '{"name": "f", "arguments": {}}', '[{"name": "f", "arguments": {}}]',
        '{"name": "get_weather", "parameters": {"city": "x"}}', '{"name": "f", "argum', '"', "f", "f(", "x{",
        "<|/tool_call|>", "</tool_calls>", "</TOOLCALL>", "<tool_calls>", "<TOOLCALL>", "<|tool_call|>",
        # InternLM
        internlm.START, internlm.PLUGIN, internlm.INTERPRETER, internlm.END, "<|action_end|", "print(1)",
        # whitespace str.isspace knows, ASCII and not, and other families' openers
        " ", "\n", "\t", "\r\n", "\u00a0", "\u3000", "\x1c", "\x85", "<tool_call>", "<think>", "</think>", "`",
    }
)


@st.composite
def texts_after_triggers(draw) -> str:
    """Prose, then these families' triggers each followed by pieces of bodies."""
    parts = [draw(st.sampled_from(["", "Here:\n", "ok ", "`", "<think>t</think>"]))]
    for _ in range(draw(st.integers(1, 4))):
        parts.append(draw(st.sampled_from(HEADED) | st.sampled_from(MY_TRIGGERS)))
        parts.extend(draw(st.lists(st.sampled_from(BODY), max_size=5)))
    return "".join(parts)


def _same_scans(text: str) -> None:
    for scanner in SCANNERS:
        for ctx in CONTEXTS:
            for reasoning in (False, True):
                filtered = scan_text(text, scanner, ctx, reasoning=reasoning)
                literal = scan_text(text, scanner, ctx, reasoning=reasoning, literal=True)
                assert _outcome(filtered) == _outcome(literal), (text, reasoning, ctx.by_name.keys())


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=texts_after_triggers())
def test_filtered_scan_equals_literal_scan(text: str) -> None:
    _same_scans(text)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(prefix=st.sampled_from(["", "x ", "`"]), trigger=st.sampled_from(HEADED), body=st.lists(st.sampled_from(BODY), max_size=6))
def test_extract_declines_wherever_the_head_fails(prefix: str, trigger: str, body: list[str]) -> None:
    """The head's promise itself, one trigger at a time and with every context."""
    text = prefix + trigger + "".join(body)
    pos = len(prefix)
    for family in FAMILIES.values():
        head = family.trigger_heads.get(trigger)
        if head is None or re.match(head, text[pos + len(trigger) :]):
            continue
        for ctx in CONTEXTS:
            assert family.extract(text, pos, trigger, ctx) is None, (family.name, text, ctx.by_name.keys())


@pytest.mark.parametrize(
    "text",
    [
        # whitespace str.isspace knows (and ``\s`` too), then JSON or the end of the text
        '<|tool_call|>\u00a0\x1c[{"name": "f", "arguments": {}}]<|/tool_call|>',
        "<tool_calls>\u3000",
        '<TOOLCALL>\n{"name": "f", "arguments": {"a": 1}}</TOOLCALL> and <TOOLCALL>no',
        '<|action_start|><|plugin|>\n{"name": "f", "parameters": {}}<|action_end|>',
        "<|action_start|><|interpreter|>\nprint(1)<|action_end|> <|action_start|><|interpreter|> \n<|action_end|>",
        "<|action_start|><|interpreter|>\x85",
        # Kimi: a section token followed by nothing, whitespace, prose or its end
        "a <|tool_calls_section_begin|>", "a <|tool_calls_section_begin|> b", "a <|tool_calls_section_begin|>b",
        "<|tool_calls_section_begin|><|tool_calls_section_end|>",
        # DeepSeek: the separator after text, after a stray '<', after a mixed-bar near miss, or never
        "<｜tool▁call▁begin｜>f<x<｜tool▁sep｜>{}<｜tool▁call▁end｜>",
        "<|tool▁call▁begin|>function<|tool_sep｜><|tool▁sep|>f\n```json\n{}\n```<|tool▁call▁end|>",
        "<｜tool_call_begin｜>f<｜tool_call_begin｜>g<｜tool_sep｜>{}",
        "<|tool_call_begin|>get_weather<|tool_sep|>{}<|tool_call_end|>",
        "<｜tool▁call▁begin｜>", "<｜tool▁calls▁begin｜> \n", "<｜tool▁calls▁begin｜>hi <｜tool▁calls▁begin｜><｜end▁of▁sentence｜>",
    ],
)
def test_filtered_scan_equals_literal_scan_on_edges(text: str) -> None:
    _same_scans(text)


def _flood_visits(scanner: TriggerScanner, unit: str, trigger: str, copies: int = 1000) -> list[int]:
    """Where the filtered patterns stop at ``trigger`` in ``unit`` repeated ``copies`` times."""
    text = unit * copies
    found = set()
    for pattern in (scanner.filtered_call_pattern, scanner.filtered_pattern):
        found |= {m.start() for m in pattern.finditer(text) if m.group() == trigger}
    return sorted(found)


def _headed_by_all_owners(scanner: TriggerScanner, trigger: str) -> bool:
    return all(trigger in c.family.trigger_heads for c in scanner.candidates.get(trigger, ()))


#: suffixes after which no owner can read a call at the next copy of the trigger
_SUFFIXES = {
    **dict.fromkeys(deepseek.CALL_BEGIN, ["", "\n", " ", "f", "f{", "f(", '"', '{"name": ']),
    **dict.fromkeys((kimi_k2.SECTION_BEGIN, kimi_k2.SINGULAR_SECTION_BEGIN), ["", "f", "f{", "f(", '"', '{"name": ']),
    kimi_k2.ARG_BEGIN: ["", "\n", " ", "f", "f(", '"', "[", "}", "x:0 ", "\nfunctions.f:0"],
    "<|tool_call|>": ["", "\n", " ", "f", "f{", "f(", '"'],
    "<tool_calls>": ["", "\n", " ", "f", "f{", "f(", '"'],
    "<TOOLCALL>": ["", "\n", " ", "f", "f{", "f(", '"'],
    internlm.START + internlm.PLUGIN: ["", "\n", " ", "f", "f{", "f(", '"'],
    internlm.SPACED_PLUGIN: ["", "\n", " ", "f", "f{", "f(", '"'],
    internlm.START + internlm.INTERPRETER: [internlm.END, "\n" + internlm.END, " \n\t" + internlm.END],
}


@pytest.mark.parametrize("trigger", HEADED)
def test_floods_of_openers_are_not_visited(trigger: str) -> None:
    """Only the last copy may be visited (the end of the text can be a truncated call there).

    Not filtered, because ``extract`` really reads them: Kimi's section token followed by
    whitespace (it swallows both), a bare interpreter tag when that tool is offered (the next
    tag is its code), any ``<|tool_call_begin|>`` in the full scanner (Kimi reads it).
    """
    scanners = [s for s in SCANNERS if trigger in s.candidates and _headed_by_all_owners(s, trigger)]
    assert scanners, trigger
    for scanner in scanners:
        for suffix in _SUFFIXES[trigger]:
            unit = trigger + suffix
            visits = _flood_visits(scanner, unit, trigger)
            assert visits in ([], [999 * len(unit)]), (unit, visits[:5])


def test_a_lone_kimi_section_token_stays_text_and_its_flood_is_never_visited() -> None:
    """Only a call, the section end or the end of the text makes the section token markup."""
    assert parse_response("a <|tool_calls_section_begin|> b").content == "a <|tool_calls_section_begin|> b"
    assert parse_response("a <|tool_calls_section_begin|> <|tool_calls_section_end|> b").content == "a\nb"
    assert parse_response("a <|tool_call_section_begin|> <|tool_call_section_end|> b").content == "a\nb"
    assert len(_flood_visits(SCANNER, kimi_k2.SECTION_BEGIN + "\n", kimi_k2.SECTION_BEGIN, 50)) <= 1


def test_unfilterable_openers_are_still_visited() -> None:
    """The floods named above are read, so their heads (or their absence) must let them through."""
    # all but the last: nothing follows it, so there is no code to read
    assert len(_flood_visits(SCANNER, internlm.START + internlm.INTERPRETER, internlm.START + internlm.INTERPRETER, 50)) == 49
    assert len(_flood_visits(SCANNER, kimi_k2.CALL_BEGIN, kimi_k2.CALL_BEGIN, 50)) == 50
    assert len(_flood_visits(SCANNER, deepseek.CALLS_BEGIN[0], deepseek.CALLS_BEGIN[0], 50)) == 50


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from([*_DS_TOKENS, "<", "<|", "<|tool_sep｜>", "x", " ", "\n", "|>"]), max_size=8))
def test_deepseek_call_head_is_exactly_the_separator_check(pieces: list[str]) -> None:
    """The head walks to the first token as ``_TOKEN.search`` does: it matches iff that token is a separator."""
    text = "".join(pieces)
    assert bool(re.match(deepseek.CALL_HEAD, text)) == deepseek._separated(text, 0), text


@settings(max_examples=500, deadline=None)
@given(trigger=st.sampled_from(deepseek.CALLS_BEGIN), body=st.lists(st.sampled_from(BODY), max_size=5))
def test_deepseek_stray_calls_token_fast_path_keeps_results(trigger: str, body: list[str]) -> None:
    """The shortcut for stray calls tokens (one span for a run of them) parses as the full loop does,
    token by token (a pattern matching everywhere turns the shortcut off)."""
    text = "a" + trigger + "".join(body) + " b"

    def outcome() -> tuple:
        parsed = parse_response(text, tools=TOOLS, format="deepseek")
        return parsed.content, [(c.name, c.arguments) for c in parsed.tool_calls], [(d.kind, d.reason) for d in parsed.diagnostics]

    fast = outcome()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(deepseek, "_CONTINUES", re.compile(""))
        assert outcome() == fast, text
