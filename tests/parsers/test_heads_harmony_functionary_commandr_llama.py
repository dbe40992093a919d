"""Scan heads of harmony, functionary (+ qwen3_coder's bare ``<function=``), command_r and llama.

Each head is a necessary condition for its family's ``extract`` to return
something after the trigger. Two checks hold them to it: directly (wherever a
head does not match, ``extract`` returns None, with and without tools) and
through the composite (the filtered one-shot scan equals the literal scan).
The flood tests are the reason for the heads: a bare opener repeated must
never reach Python code.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from utp.parsers.base import ParseContext, registered_families
from utp.parsers.families.harmony import MAX_HEADER
from utp.parsers.qwen3markup import MAX_NAME
from utp.types import Tool

from .test_scan_filter import SCANNER, _same_scan

FAMILIES = {name: registered_families()[name] for name in ("harmony", "functionary", "qwen3_coder", "command_r", "llama")}
#: code_interpreter makes llama read any code after its tag as a call: the widest case
TOOLS = [Tool("get_weather"), Tool("f"), Tool("search"), Tool("code_interpreter")]
CONTEXTS = [ParseContext(), ParseContext(TOOLS), ParseContext([Tool("f")])]

#: qwen3_coder is here only for the ``<function=`` it shares with functionary
OWN_TRIGGERS = sorted({t for f in FAMILIES.values() for t in f.triggers} - {"<tool_call>"})
#: (family, trigger, head) for every head these families declare on those triggers
HEADS = [(family, trigger, head) for family in FAMILIES.values() for trigger, head in family.trigger_heads.items() if trigger in OWN_TRIGGERS]
HEADED = sorted({trigger for _, trigger, _ in HEADS})

#: what may follow these triggers: body starts of every shape these families read, near misses,
#: other tokens, and unusual whitespace (``\s`` in a head must agree with ``str.isspace``)
BODIES = [
    "", " ", "\n", "\t", "\r\n", "  \n\t", "\xa0", "\u2003", "\x1c", "\x85", "\r",
    # harmony
    "assistant", "assistant to=functions.f", "<|channel|>", "commentary", " to=functions.f", " to=functions.get_weather ",
    "<|constrain|>json", "<|message|>", '{"city": "x"}', "{", "<|call|>", "<|end|>", "<|return|>", "analysis", "final",
    "functions.f to=assistant", "user", "<|m", "essage|>", "<|messag", "m", "e|>", "<|start|>",
    # functionary / qwen3_coder
    "f>", " f >", "f\n>", "\nf>", "f", ">", "<", "<function=", "</function>", "<parameter=a>", "1</parameter>",
    '{"a": 1}', "}", "all\n", "all \r\n", "all", "alls\n", "f\n", "f \t\r\n", "f.x-y\n", "9f\n", "_\n", "é\n", ">>>", ">",
    # command_r
    "```json\n", " \n ```\n", "```json \n", "```jsonx\n", "```\n", "```", "json", "[", "]", '{"tool_name": "f", "parameters": {}}',
    '[{"tool_name": "directly_answer", "parameters": {}}]', "<|END_ACTION|>", "Action:", "<|START_ACTION|>",
    # llama
    "<|eom_id|>", "<|eot_id|>", "<|python_tag|>", '{"name": "f", "parameters": {}}', "f()", "print(1)",
    'brave_search.call(query="x")', "[f()]", "[get_weather(city='x')]", "x = 1", ";", "<|eom_id",
]


def _pad(char: str, n: int) -> str:
    return char * n


@st.composite
def texts(draw) -> str:
    """Prose, then these families' triggers each followed by body-like pieces (and padding near the bounds)."""
    parts = [draw(st.sampled_from(["", "Here:\n", "ok ", "\n", "`", "<think>t</think>"]))]
    for _ in range(draw(st.integers(1, 4))):
        parts.append(draw(st.sampled_from(HEADED) | st.sampled_from(OWN_TRIGGERS)))
        for _ in range(draw(st.integers(0, 4))):
            if draw(st.integers(0, 9)) == 0:  # padding that lands near a head's length bound
                char = draw(st.sampled_from(["x", " ", "\n", "<", "a"]))
                parts.append(_pad(char, draw(st.sampled_from([MAX_NAME - 2, MAX_NAME - 1, MAX_NAME, MAX_NAME + 1, MAX_HEADER - 20, MAX_HEADER - 12, MAX_HEADER - 11, MAX_HEADER - 9, MAX_HEADER - 8, MAX_HEADER]))))
            else:
                parts.append(draw(st.sampled_from(BODIES)))
    parts.append(draw(st.sampled_from(["", "\n", " then ", "]", "}"])))
    return "".join(parts)


def _heads_hold(text: str) -> None:
    """Wherever a head does not match after its trigger, the family reads nothing there."""
    for family, trigger, head in HEADS:
        compiled = re.compile(head)
        start = text.find(trigger)
        while start != -1:
            if compiled.match(text, start + len(trigger)) is None:
                for ctx in CONTEXTS:
                    assert family.extract(text, start, trigger, ctx) is None, (family.name, trigger, start, text)
            start = text.find(trigger, start + 1)


@settings(max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(text=texts())
def test_heads_are_necessary_conditions(text: str) -> None:
    _heads_hold(text)


@settings(max_examples=800, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(text=texts(), which=st.integers(0, len(CONTEXTS) - 1))
def test_filtered_scan_equals_literal_scan(text: str, which: int) -> None:
    _same_scan(text, CONTEXTS[which])


def _around_bounds() -> list[str]:
    """Texts whose decisive token sits just inside or just outside each head's length bound."""
    found: list[str] = []
    for trigger in ("<|start|>", "<|channel|>"):
        room = MAX_HEADER - len(trigger)
        for n in range(room - 3, room + 4):
            for filler in ("x", " ", "<|end|>"[0], "m"):
                pad = filler * n
                found.append(f"{trigger}{pad}<|message|>hi<|end|>")
                found.append(f"{trigger}assistant to=functions.f{pad}<|message|>{{}}<|call|>")
                found.append(f"{trigger}{pad}")  # the end within (or past) a header's length
                found.append(f"{trigger}{pad}tail")
                found.append(f"{trigger}{pad}<|messag")
    for n in (MAX_NAME - 1, MAX_NAME, MAX_NAME + 1):
        found += [
            f"<function={'a' * n}>{{}}</function>",
            f"<function=f>{' ' * n}{{}}</function>",
            "<function=f>" + "\n" * n + "<parameter=a>1</parameter></function>",
            f"<function={'a' * n}><parameter=a>1</parameter></function>",
            f">>>f\n{' ' * n}{{}}",
            f">>>{'a' * n}\n{{}}",
            f"<|START_ACTION|>{' ' * n}[]",
            f"Action:\n```json\n{' ' * n}[]",
            f"<|python_tag|>{' ' * n}f()",
            f"<|python_tag|>{' ' * n}",
        ]
    return found


@pytest.mark.parametrize("text", _around_bounds())
def test_heads_hold_at_their_length_bounds(text: str) -> None:
    _heads_hold(text)
    for ctx in CONTEXTS:
        _same_scan(text, ctx)
        _same_scan("before " + text + " after", ctx)


#: how close to the end a flood's occurrence may still pass its head (the end-of-text alternatives):
#: harmony reports a header cut off by the end within MAX_HEADER characters
NEAR_END = {"<|start|>": MAX_HEADER, "<|channel|>": MAX_HEADER}


#: floods of a trigger and short junk: all but llama's tag, after which any code may be a call
#: (of ``code_interpreter``, when offered), so ``<|python_tag|>f`` is visited every time
JUNK_FLOODS = [(t, junk) for t in HEADED if t != "<|python_tag|>" for junk in ("f", "f{", "f(", '"')]


@pytest.mark.parametrize(("trigger", "suffix"), [(t, s) for t in HEADED for s in ("", "\n", " ")] + JUNK_FLOODS)
def test_flood_of_a_headed_trigger_is_not_visited(trigger: str, suffix: str) -> None:
    unit = trigger + suffix
    flood = unit * 1000
    near = NEAR_END.get(trigger, len(unit))
    for pattern in (SCANNER.filtered_call_pattern, SCANNER.filtered_pattern):
        assert pattern is not None
        visited = [m.start() for m in pattern.finditer(flood)]
        assert all(at >= len(flood) - near for at in visited), (unit, visited[:5])


def test_literal_scan_does_visit_the_floods() -> None:
    """The flood test above means something: without heads each occurrence is a match."""
    assert SCANNER.content_pattern is not None
    for trigger in HEADED:
        assert len(SCANNER.content_pattern.findall(trigger * 100)) >= 100


def test_rendered_calls_still_pass_the_heads() -> None:
    from utp.parsers import get_family
    from utp.types import ToolCall

    calls = [ToolCall("get_weather", {"city": "Paris"}), ToolCall("f", {})]
    for name in FAMILIES:
        text = "Sure.\n" + get_family(name).render(calls) + "\nDone."
        _heads_hold(text)
        for ctx in CONTEXTS:
            _same_scan(text, ctx)


# --- stray end tokens: no head is possible (each is always removed), so a run of them is one span ---

STRAY_PIECES = ["<|end|>", "<|call|>", "<|return|>", "<|eom_id|>", "<|eot_id|>", " ", "\n", "\t", "\xa0", "x", "Hi.", "`", "<|start|>",
                "<|channel|>", "<|message|>", "assistant", "<|python_tag|>", "f()", '{"name": "f", "parameters": {}}', "<think>", "</think>"]


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pieces=st.lists(st.sampled_from(STRAY_PIECES), max_size=80), which=st.integers(0, len(CONTEXTS) - 1))
def test_a_run_of_stray_ends_parses_like_one_token_at_a_time(pieces: list[str], which: int) -> None:
    """Removing a run as one span leaves the same content, calls and diagnostics as token by token."""
    from utp.parsers import get_parser
    from utp.parsers.families import harmony, llama

    text = "".join(pieces)
    tools = list(CONTEXTS[which].tools)
    parser = get_parser("auto", tools, allow_bash=True)
    runs = parser.parse(text)
    saved = harmony._STRAY_RUN, llama._TRAILER_RUN
    harmony._STRAY_RUN = llama._TRAILER_RUN = re.compile("")
    try:
        tokens = parser.parse(text)
    finally:
        harmony._STRAY_RUN, llama._TRAILER_RUN = saved
    assert runs.content == tokens.content, text
    assert runs.thinking == tokens.thinking, text
    assert [(c.name, c.arguments) for c in runs.tool_calls] == [(c.name, c.arguments) for c in tokens.tool_calls], text
    assert [(d.kind, d.reason) for d in runs.diagnostics] == [(d.kind, d.reason) for d in tokens.diagnostics], text


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
#: without ``</think>``: output that starts inside reasoning is the stream's documented difference
@given(pieces=st.lists(st.sampled_from([p for p in STRAY_PIECES if p != "</think>"]), max_size=120), size=st.integers(1, 12))
def test_a_stream_removes_stray_runs_like_one_shot_parsing(pieces: list[str], size: int) -> None:
    """A stream re-reads a growing run; it must end where one-shot parsing ends it."""
    from utp.parsers import parse_response
    from utp.parsers.streaming import CallReady, ContentDelta, stream_parse

    text = "".join(pieces)
    events, _ = stream_parse([text[i : i + size] for i in range(0, len(text), size)], tools=TOOLS)
    whole = parse_response(text, tools=TOOLS)
    assert "".join(e.text for e in events if isinstance(e, ContentDelta)) == whole.content, text
    streamed = [(e.call.name, e.call.arguments) for e in events if isinstance(e, CallReady)]
    assert streamed == [(c.name, c.arguments) for c in whole.tool_calls], text
