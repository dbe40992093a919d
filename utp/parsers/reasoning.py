"""Separate a model's reasoning from what it says.

Reasoning models write ``<think>…</think>`` before answering; servers without
a reasoning parser leave it in ``content``; a chat template that pre-fills
``<think>`` makes the output *start* inside reasoning (only ``</think>``
appears); a token limit can cut it off before the closing tag. A call written
while thinking is the model considering a call, not making one, so reasoning
is cut out before call families scan the content.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from utp.parsers.textscan import skip_space

#: (opening, closing) tag pairs treated as reasoning
#: ``<seed:think>`` is ByteDance Seed-OSS's (its chat template and vLLM's seed_oss reasoning parser);
#: the ``<ifm|think…>`` tags are K2-V3's (SGLang's k2_v3 detector); the ``think`` channel is Kimi K3's;
#: ``[THINK]`` is Magistral's (its model card's system prompt; Ollama leaves the tags in content);
#: ``<|channel>thought`` … ``<channel|>`` is Gemma 4's thought channel (its chat template).
#: No tag is a substring of another, so an orphan closer of one is never found inside another's
REASONING_TAGS: tuple[tuple[str, str], ...] = (
    ("<think>", "</think>"),
    ("<thinking>", "</thinking>"),
    ("<seed:think>", "</seed:think>"),
    ("<longcat_think>", "</longcat_think>"),
    ("<ifm|think>", "</ifm|think>"),
    ("<ifm|think_fast>", "</ifm|think_fast>"),
    ("<ifm|think_faster>", "</ifm|think_faster>"),
    ("<|open|>think<|sep|>", "<|close|>think<|sep|>"),
    ("<|think:start|>", "<|think:end|>"),
    ("<mm:think>", "</mm:think>"),
    ("[THINK]", "[/THINK]"),
    ("<|channel>thought", "<channel|>"),
)

#: the closing tag of each reasoning block: text right after one starts what the model says
REASONING_CLOSERS = tuple(closer for _, closer in REASONING_TAGS)
#: the parse option naming the reasoning tag a chat template wrote before the output
PREFILLED_OPTION = "prefilled_reasoning"


def template_opener(options: Mapping[str, Any]) -> str:
    """The opening reasoning tag the chat template wrote before the output ("" when none).

    A template that pre-fills ``<think>`` makes the output start inside
    reasoning. Parsing finds that out only when an orphan closer arrives,
    which a stream may not have seen when it would announce a call; a caller
    that knows says so with ``prefilled_reasoning=True`` (``<think>``) or the
    tag itself, and the output is read as if that tag preceded it.
    """
    value = options.get(PREFILLED_OPTION)
    if not value:
        return ""
    opener = "<think>" if value is True else value
    if opener not in _CLOSER_OF:
        known = ", ".join(_CLOSER_OF)
        raise ValueError(f"{PREFILLED_OPTION}={value!r} is not a reasoning opening tag (known: {known})")
    return opener


_CLOSER_OF = dict(REASONING_TAGS)
HARMONY_ANALYSIS = "<|channel|>analysis<|message|>"
_HARMONY_ENDS = ("<|end|>", "<|start|>", "<|channel|>", "<|call|>", "<|return|>")


@dataclass(frozen=True)
class ReasoningSpan:
    """``text[start:end]`` is reasoning markup; ``body`` is the reasoning itself."""

    start: int
    end: int
    body: str


def reasoning_spans(text: str) -> list[ReasoningSpan]:
    """Every reasoning block in ``text``, in order, non-overlapping.

    An orphan closing tag (no opener before it) means the text began inside
    reasoning: everything before it is reasoning. An opener without a closer
    runs to the end (truncated output).
    """
    if not may_hold_reasoning(text):
        return []
    spans: list[ReasoningSpan] = []
    pos, prefilled = prefilled_reasoning(text)
    if pos:
        spans.append(ReasoningSpan(0, pos, prefilled))
    while pos < len(text):
        found = _next_opener(text, pos)
        if found is None:
            break
        start, opener, closer = found
        body_start = start + len(opener)
        close = text.find(closer, body_start)
        if close < 0:
            spans.append(ReasoningSpan(start, len(text), text[body_start:]))
            break
        spans.append(ReasoningSpan(start, close + len(closer), text[body_start:close]))
        pos = close + len(closer)
    return spans


def may_hold_reasoning(text: str) -> bool:
    """False when no tag of ``REASONING_TAGS`` can be in ``text``: each holds one of these words.

    Three substring tests cost less than one search for every tag, and most
    texts hold no reasoning; a test keeps the words and the tags in step.
    """
    return "think" in text or "THINK" in text or "channel" in text  # _REASONING_WORDS, spelled out: faster


def _next_opener(text: str, pos: int) -> tuple[int, str, str] | None:
    best: tuple[int, str, str] | None = None
    for opener, closer in REASONING_TAGS:
        k = text.find(opener, pos)
        if k >= 0 and (best is None or k < best[0]):
            best = (k, opener, closer)
    return best


_answer_cache = threading.local()


def prefilled_reasoning(text: str) -> tuple[int, str]:
    """Output that starts inside reasoning (the template pre-filled ``<think>``).

    Only a closing tag with no opener before it: ``(index after it, reasoning)``;
    ``(0, "")`` otherwise.
    """
    if not text or not may_hold_reasoning(text):
        return 0, ""
    for opener, closer in REASONING_TAGS:
        close = text.find(closer)
        if close >= 0 and text.find(opener, 0, close) < 0:
            return close + len(closer), text[:close]
    return 0, ""


def answer_start(text: str) -> int:
    """Where the answer begins: after leading blanks and the reasoning that opens the output.

    Reasoning here is pre-filled reasoning and whole blocks at the start; a
    block the output ends inside leaves no answer (``len(text)``). The last text
    asked about is remembered, so every candidate position in one text costs
    one computation in all.
    """
    cached = getattr(_answer_cache, "entry", None)
    if cached is not None and cached[0] is text:
        return cached[1]
    pos = skip_space(text, prefilled_reasoning(text)[0])
    while may_hold_reasoning(text):
        found = next(((o, c) for o, c in REASONING_TAGS if text.startswith(o, pos)), None)
        if found is None:
            break
        close = text.find(found[1], pos + len(found[0]))
        if close < 0:
            pos = len(text)
            break
        pos = skip_space(text, close + len(found[1]))
    _answer_cache.entry = (text, pos)
    return pos


def forget_texts() -> None:
    """Drop the remembered answers (they hold a reference to the last text, which a stream
    wants to be the only one so that appending to it grows it in place)."""
    _answer_cache.__dict__.clear()


class GrowingAnswerStart:
    """:func:`answer_start` of a text that only grows, kept current in time linear in its length.

    A stream consults the families at every chunk that may settle something,
    and they ask where the answer starts; computed afresh, that reads the
    whole text each time, the square of the response's length in all. Here
    each closer's first occurrence is searched for only in the new text, and
    the walk over the reasoning blocks that open the answer resumes where it
    stopped (once it stopped well before the text's end at no opener, only a
    newly found closer can move it). :meth:`update` primes
    :func:`answer_start`'s cache for the text, so the families' own calls cost
    nothing.
    """

    def __init__(self) -> None:
        #: per tag of REASONING_TAGS: index of its closer's first occurrence (-1: not yet)
        self._closer_at = [-1] * len(REASONING_TAGS)
        self._searched = 0  # closers were searched for in text[:_searched]
        self._prefilled = 0  # end of the pre-filled reasoning the walk started after
        self._walk = 0  # the walk's position: blanks and whole blocks before it
        self._open: tuple[str, int] | None = None  # an unclosed block's closer and where to look for it
        self._final = False  # the walk stopped at no opener with a whole opener's length after it

    def update(self, text: str) -> int:
        if self._find_closers(text):
            prefilled = self._prefilled_end(text)
            if prefilled != self._prefilled:
                self._prefilled, self._walk, self._open, self._final = prefilled, prefilled, None, False
        pos = self._walk if self._final else self._resume_walk(text)
        _answer_cache.entry = (text, pos)
        return pos

    def _find_closers(self, text: str) -> bool:
        """Search the new text for closers not met yet; True if one was found."""
        since = max(0, self._searched - _LONGEST_TAG + 1)
        self._searched = len(text)
        if all(text.find(word, since) < 0 for word in _REASONING_WORDS):
            return False  # as may_hold_reasoning: every tag holds one of these words
        found = False
        for index, (_, closer) in enumerate(REASONING_TAGS):
            if self._closer_at[index] < 0:
                self._closer_at[index] = text.find(closer, since)
                found = found or self._closer_at[index] >= 0
        return found

    def _prefilled_end(self, text: str) -> int:
        """What :func:`prefilled_reasoning` gives: the first tag whose closer has no opener before it."""
        return self.prefilled_closer(text)[1]

    def prefilled_closer(self, text: str) -> tuple[int, int]:
        """Where the closer ending pre-filled reasoning starts and ends in ``text`` (as updated); ``(0, 0)``: none yet."""
        for (opener, closer), close in zip(REASONING_TAGS, self._closer_at):
            if close >= 0 and text.find(opener, 0, close) < 0:
                return close, close + len(closer)
        return 0, 0

    @property
    def prefilled(self) -> int:
        """End of the pre-filled reasoning found so far (0: none)."""
        return self._prefilled

    def _resume_walk(self, text: str) -> int:
        pos = self._walk
        while True:
            if self._open is not None:
                closer, search_from = self._open
                close = text.find(closer, search_from)
                if close < 0:
                    self._open = (closer, max(search_from, len(text) - len(closer) + 1))
                    return len(text)
                self._open = None
                pos = close + len(closer)
            pos = skip_space(text, pos)
            self._walk = pos
            found = next(((o, c) for o, c in REASONING_TAGS if text.startswith(o, pos)), None)
            if found is None:
                self._final = len(text) - pos >= _LONGEST_TAG
                return pos
            self._open = (found[1], pos + len(found[0]))


_LONGEST_TAG = max(len(tag) for pair in REASONING_TAGS for tag in pair)
#: the words :func:`may_hold_reasoning` looks for (every tag holds one)
_REASONING_WORDS = ("think", "THINK", "channel")


#: a lead-in is prose; these make a line code or data instead (``f(x):``, ``{"a":``, ``x = 1:``)
_NOT_PROSE = frozenset('{}[]()"`=<>')
#: longer than this, a line is no lead-in but a paragraph
MAX_LEAD_IN = 200
#: the emphasis closing a Markdown label after its colon (``**Tool Call:** f(...)``)
_EMPHASIS_CLOSER = re.compile(r"[*_]{1,3}+")


def call_list_starts(text: str) -> tuple[int, ...]:
    """Where a whole-answer call list may begin: the answer's start, or just after a lead-in.

    Small models announce the call before writing it: "Here is the function
    call:" on a line of its own, or "Tool call: get_weather(...)" on one line
    (the label perhaps in Markdown emphasis, its closer after the colon:
    "**Tool Call:** get_weather(...)").
    A lead-in is one line of prose (no brackets, quotes or ``=``) ending in
    ``:`` (or the full-width ``：``), or such prose before the first ``:`` of the answer's line; what
    follows it must still be nothing but calls (the families check). Cached
    like :func:`answer_start`.
    """
    cached = getattr(_answer_cache, "starts", None)
    if cached is not None and cached[0] is text:
        return cached[1]
    start = answer_start(text)
    starts = [start]
    line_end = text.find("\n", start, start + MAX_LEAD_IN + 1)
    line = text[start : len(text) if line_end < 0 else line_end]
    colon = min((at for at in (line.find(":"), line.find("\uff1a")) if at >= 0), default=-1)  # ASCII's or the full-width colon
    if colon > 0 and len(line) <= MAX_LEAD_IN and not _NOT_PROSE.intersection(line[:colon]):
        if colon == len(line.rstrip()) - 1 and line_end >= 0:
            starts.append(skip_space(text, line_end + 1))  # "Here is the call:" then the calls below
        elif colon < len(line.rstrip()) - 1:
            after = skip_space(text, start + colon + 1, start + len(line))
            emphasis = _EMPHASIS_CLOSER.match(text, after, start + len(line)) if line.startswith(("*", "_")) else None
            # "Tool call: f(...)", or "**Tool Call:** f(...)" (the label in Markdown emphasis, its closer after the colon)
            starts.append(skip_space(text, emphasis.end(), start + len(line)) if emphasis else after)
    found = tuple(starts)
    _answer_cache.starts = (text, found)
    return found


#: a command line's start: a name, then a ``key=`` word (``keyword_command`` checks the rest)
_COMMAND_START = r"[A-Za-z_][\w.\-]*+[ \t]++[A-Za-z_][\w.\-]*+=\S"
_COMMAND_LINE = re.compile(r"[ \t]*+" + _COMMAND_START)
#: a line that is one call: a dotted name, then '(' … ')' to the line's end; or a command line
_CALL_LINE = re.compile(r"[ \t]*+(?:[A-Za-z_][\w.]*+\(.*\)[ \t\r]*+\Z|" + _COMMAND_START + ")")


def trailing_call_lines(text: str) -> int:
    """Where the text's closing run of one-line calls begins, after prose (-1: none).

    "I'll check the weather.\nget_weather(city="Paris")": small models write
    the call on a line of its own after a sentence, or after the sentence on
    its line ("Let me check. read_file(path="a")"). One place per text can
    begin such a run, the first call line after the last line of anything
    else (blank lines may stand between the calls); it is found by one
    backward walk over the run, cached like :func:`answer_start`, so a text
    with many call-like lines is still read once. A run inside reasoning is
    no answer, but needs no test here: a reasoning block the text ends in is
    consumed before the run is reached, and a closed one ends in its closer,
    which no call line holds. Which names the calls may have is the
    families' business.
    """
    cached = getattr(_answer_cache, "trailing", None)
    if cached is not None and cached[0] is text:
        return cached[1]
    line_end = len(text)
    while line_end > 0 and text[line_end - 1].isspace():
        line_end -= 1
    start = -1
    last_line = text.rfind("\n", 0, line_end) + 1
    if line_end > 0 and (text[line_end - 1] == ")" or _COMMAND_LINE.match(text, last_line, line_end)):  # the cheap test most answers fail
        while line_end > 0:
            line_start = text.rfind("\n", 0, line_end) + 1
            line = text[line_start:line_end]
            if line.strip():
                if _CALL_LINE.match(line) is None:
                    after = _SENTENCE_THEN_CALL.match(line)
                    if after is not None and _is_sentence(line[: after.end()]):
                        start = line_start + after.end()  # "Let me check. read_file(path="a")": the call ends the line
                    break
                start = line_start + len(line) - len(line.lstrip())
            line_end = line_start - 1
    _answer_cache.trailing = (text, start)
    return start


def begins_call_lines(text: str, pos: int) -> bool:
    """Can a whole-answer run of calls begin at ``pos``? At the answer's start (or after a lead-in:
    :func:`call_list_starts`), or where the lines that end the answer after a sentence begin
    (:func:`trailing_call_lines`). The families that read unmarked calls ask this one question."""
    return pos in call_list_starts(text) or (pos == trailing_call_lines(text) and opens_line_after_sentence(text, pos))


def opens_line_after_sentence(text: str, pos: int) -> bool:
    """Does ``pos`` open a line whose previous non-blank line is a sentence, or follow a sentence on its own line?

    Only such a position can be :func:`trailing_call_lines` for the families:
    a sentence is prose that ends in ``.``, ``!``, ``?`` or ``:`` (or their full-width forms) and holds no
    brackets, quotes or ``=`` (``I'll check the weather.``), so a call after
    a line of code (``import os``, a ```` ``` ```` fence line, a comment with
    code in it) is code being shown. The test reads the lines between, so
    positions met one after another cost their own lines, not the text's.
    """
    line_start = text.rfind("\n", 0, pos) + 1
    if text[line_start:pos].strip():  # the sentence on the call's own line (read no further back than a lead-in's length)
        return pos - line_start <= MAX_LEAD_IN and _SENTENCE_BEFORE_CALL.fullmatch(text, line_start, pos) is not None and _is_sentence(text[line_start:pos])
    while line_start > 0:
        previous = text.rfind("\n", 0, line_start - 1) + 1
        line = text[previous : line_start - 1].strip()
        if line:
            return line[-1] in _SENTENCE_ENDS and not line.startswith(("#", "//")) and not _NOT_PROSE.intersection(line)
        line_start = previous
    return False


#: (with the full-width marks a Chinese or Japanese sentence ends with: 。！？：)
_SENTENCE_ENDS = frozenset(".!?:\u3002\uff01\uff1f\uff1a")
#: a sentence ended on the call's own line, then the call: ``.``, ``!`` or ``?`` and a blank (a CJK mark
#: needs none); a colon is a lead-in's, which :func:`call_list_starts` reads
_SENTENCE_END = r"(?:[.!?][ \t]++|[\u3002\uff01\uff1f][ \t]*+)"
_SENTENCE_THEN_CALL = re.compile(r"[^\n]*?" + _SENTENCE_END + r"(?=[A-Za-z_][\w.]*+\()")
_SENTENCE_BEFORE_CALL = re.compile(r"[^\n]*" + _SENTENCE_END)


def _is_sentence(line: str) -> bool:
    """Is ``line`` (up to the call after it) prose: no brackets, quotes or ``=``, no comment?"""
    line = line.strip()
    return bool(line) and not line.startswith(("#", "//")) and not _NOT_PROSE.intersection(line)


#: what the last line of a growing text may be while it can still become a ``_CALL_LINE`` (a call
#: line, or a command line up to its first ``key=``)
_OPEN_CALL_LINE = re.compile(r"[ \t]*+(?:[A-Za-z_][\w.]*+(?:\(.*|[ \t]++(?:[A-Za-z_][\w.\-]*+(?:=.*)?)?)?)?\Z")


def may_open_trailing_call_lines(text: str, pos: int) -> bool:
    """Can ``pos`` still become :func:`trailing_call_lines` once more text arrives (a stream's question)?

    It can while it opens a line after a sentence, every line after it is
    blank or a call (of any name: the tools are checked when it is read) and
    the last one may still grow into one. The walk stops at the first line
    that is neither, so a text of many broken call lines costs a line per
    position.
    """
    if not opens_line_after_sentence(text, pos):
        return False
    line_start = pos if text[text.rfind("\n", 0, pos) + 1 : pos].strip() else text.rfind("\n", 0, pos) + 1
    while True:
        line_end = text.find("\n", line_start)
        if line_end < 0:
            return _OPEN_CALL_LINE.match(text, line_start) is not None
        line = text[line_start:line_end]
        if line.strip() and _CALL_LINE.match(line) is None:
            return False
        line_start = line_end + 1


def split_reasoning(text: str) -> tuple[str, str, list[ReasoningSpan]]:
    """``(content_without_reasoning, reasoning, spans)``; content is untouched when there is none."""
    spans = reasoning_spans(text)
    if not spans:
        return text, "", []
    thinking = "\n\n".join(s.body.strip() for s in spans if s.body.strip())
    content = join_around_spans(text, [(s.start, s.end) for s in spans])
    return content, thinking, spans


def harmony_analysis_spans(text: str) -> list[ReasoningSpan]:
    """gpt-oss analysis-channel messages (``<|channel|>analysis<|message|>…<|end|>``).

    The harmony family owns the channel grammar; this helper lets it (and
    anything else) route analysis text to ``thinking`` the same way.
    """
    spans: list[ReasoningSpan] = []
    pos = 0
    while True:
        start = text.find(HARMONY_ANALYSIS, pos)
        if start < 0:
            return spans
        body_start = start + len(HARMONY_ANALYSIS)
        ends = [(k, marker) for marker in _HARMONY_ENDS if (k := text.find(marker, body_start)) >= 0]
        if not ends:
            spans.append(ReasoningSpan(start, len(text), text[body_start:]))
            return spans
        k, marker = min(ends)
        end = k + len(marker) if marker == "<|end|>" else k
        spans.append(ReasoningSpan(start, end, text[body_start:k]))
        pos = max(end, body_start)


def join_around_spans(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` with ``spans`` cut out; the prose around each cut is trimmed at the cut.

    Pieces that are non-empty after trimming are joined with a newline, so
    ``"Checking.<call/>Done."`` reads ``"Checking.\\nDone."`` and a call
    between paragraphs leaves no run of blank lines. The streaming parser
    applies the same rule incrementally.
    """
    if not spans:
        return text
    pieces: list[str] = []
    pos = 0
    for start, end in spans:
        piece = text[pos:start]
        piece = piece.rstrip() if pos == 0 else piece.strip()
        if piece:
            pieces.append(piece)
        pos = max(pos, end)
    tail = text[pos:].lstrip()
    if tail:
        pieces.append(tail)
    return "\n".join(pieces)
