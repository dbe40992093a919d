"""The scan loop: one left-to-right pass over a text, trying the families at each trigger.

At each trigger the families owning it are tried by priority
(:func:`try_extract`); the first that returns an Extraction consumes its span
and the scan resumes after it. ``<think>``-style blocks met between calls are
reasoning spans when asked. Nothing here raises on model output: a family that
raises is reported as an ``UNPARSEABLE`` diagnostic and the scan goes on. Used
by one-shot parsing (:mod:`utp.parsers.composite`) and streams
(:mod:`utp.parsers.streaming`) alike.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from utp.parsers.callshape import ANSWER_KEYS
from utp.parsers.base import WORD_CHARACTER, CallFamily, Extraction, ParseContext, Start, Trigger
from utp.parsers.familykit import clip, cut_by_output_end
from utp.parsers.jsonrepair import CUT_MID_VALUE
from utp.parsers.leadins import shown_as_sample
from utp.parsers.reasoning import call_list_starts, trailing_call_lines
from utp.parsers.textscan import space_before
from utp.parsers.triggerscan import Candidate, Scanner, _searcher, family_triggers
from utp.types import Diagnostic, DiagnosticKind, ToolCall

#: the most call spans (a call read, or call-shaped text reported) one text is read for. A
#: model that writes more is repeating itself (a runaway generation, not 1,025 parallel
#: calls); past the limit the text is content, reported once, and a megabyte of call-shaped
#: text costs a bounded number of reads instead of one per opener. ``max_call_spans`` in the
#: parser options changes it.
MAX_CALL_SPANS = 1024


def call_span_limit(ctx: ParseContext) -> int:
    """The limit for this parser: the ``max_call_spans`` option, else :data:`MAX_CALL_SPANS`."""
    limit = ctx.options.get("max_call_spans") if ctx.options else None
    return limit if type(limit) is int and limit > 0 else MAX_CALL_SPANS


def unread_after_limit(limit: int, text: str, pos: int) -> Diagnostic | None:
    """The report for the text after the limit's last span (None: nothing but white space follows)."""
    rest = text[pos:]
    if rest.isspace() or not rest:
        return None
    return Diagnostic(
        DiagnosticKind.UNPARSEABLE,
        f"more than {limit} calls or call reports in one response (a model repeating itself): "
        f"the {len(rest)} characters after offset {pos} were not read for calls",
        clip(rest),
        None,
        pos,
    )


@dataclass
class ScanResult:
    calls: list[ToolCall]
    diagnostics: list[Diagnostic]
    spans: list[tuple[int, int]]
    thinking: list[str]


#: the characters right before a trigger that may quote it (a code span's backtick, a JSON string's quote)
_QUOTING = '`"'


def in_inline_code(text: str, pos: int, trigger: str) -> bool:
    """A trigger right after one or two backticks is syntax being *shown* (`` `<tool_call>` ``), not used.

    Three or more are a fence's, which a model writes before its call markup
    on the same line (```` ```<｜DSML｜invoke ````): that is no code span.
    """
    if pos == 0 or text[pos - 1] != "`" or trigger.startswith("`"):
        return False
    run = 1
    while run < 3 and pos - run > 0 and text[pos - run - 1] == "`":
        run += 1
    return run in (1, 2)


#: a JSON member's key and the quote opening its string, right before a trigger
_OPENS_JSON_MEMBER = re.compile(r'"([A-Za-z_][\w\-]{0,40})"\s*+:\s*+"\Z')
#: how far back that member's key is looked for
_MEMBER_REACH = 80


def quoted_in_json_member(text: str, pos: int) -> bool:
    """A trigger opening a JSON member's string (``{"output": "<tool_call>{\"name\": …``) is quoted data.

    A record, a log line or a tool's result quoting a reply holds its markup
    that way; a reply written as JSON holds it under an answer's key
    (``{"content": "<tool_call>…"}``), which is the reply itself, so those count.
    """
    if pos == 0 or text[pos - 1] != '"':
        return False
    member = _OPENS_JSON_MEMBER.search(text, max(0, pos - _MEMBER_REACH), pos)
    return member is not None and member.group(1) not in ANSWER_KEYS


def shown_not_used(text: str, pos: int, trigger: str) -> bool:
    """Is the trigger at ``pos`` syntax shown in a code span, or quoted in a JSON string? Then no call is here."""
    return in_inline_code(text, pos, trigger) or quoted_in_json_member(text, pos)


def try_extract(
    candidates: Sequence[Candidate], text: str, pos: int, ctx: ParseContext, floor: int, heads: bool = False
) -> tuple[Extraction | None, list[Diagnostic]]:
    """The first family's Extraction at ``pos``, with a family bug turned into a diagnostic.

    With ``heads`` (one-shot parsing: the whole text is there) a family whose own
    head fails here is not asked: a head is a necessary condition of its reading.
    A stream does not skip: the head may still be arriving.
    """
    problems: list[Diagnostic] = []
    if candidates and pos and text[pos - 1] in _QUOTING and shown_not_used(text, pos, candidates[0].trigger):
        return None, problems
    for cand in candidates:
        if heads and cand.head is not None and cand.head.match(text, pos + len(cand.trigger)) is None:
            continue
        try:
            found = cand.family.extract(text, pos, cand.trigger, ctx)
        except Exception as exc:  # a family bug must not lose the response
            problems.append(
                Diagnostic(
                    DiagnosticKind.UNPARSEABLE,
                    f"{cand.family.name}: parser error {type(exc).__name__}: {exc}",
                    text[pos : pos + 200],
                    cand.family.name,
                    pos,
                )
            )
            continue
        if found is None:
            continue
        start = pos if found.start is None else found.start
        if not isinstance(found.end, int) or found.end <= pos or found.end > len(text) or start > pos:
            problems.append(
                Diagnostic(
                    DiagnosticKind.UNPARSEABLE,
                    f"{cand.family.name}: ignored an extraction with an invalid span ({start}, {found.end})",
                    text[pos : pos + 200],
                    cand.family.name,
                    pos,
                )
            )
            continue
        if start < floor:
            found.start = floor
        if found.calls and any(CUT_MID_VALUE in call.repairs for call in found.calls):
            _withhold_cut_calls(found, text, pos)
        if found.calls and shown_as_sample(text, pos):
            found = _shown(found, text, pos)
        return found, problems
    return None, problems


def _shown(found: Extraction, text: str, pos: int) -> Extraction:
    """The extraction of calls a lead-in shows as an example: their text stays content, each is reported."""
    diagnostics = [d for d in found.diagnostics if d.kind is not DiagnosticKind.REPAIRED]
    for call in found.calls:
        reason = f"{call.format}: a call to {call.name!r} introduced as an example (shown, not run)"
        diagnostics.append(Diagnostic(DiagnosticKind.SHOWN, reason, clip(call.raw or text[pos:found.end]), call.format, pos))
    return replace(found, calls=[], diagnostics=diagnostics, shown=True)


def _withhold_cut_calls(found: Extraction, text: str, pos: int) -> None:
    """Report, instead of returning, each call whose arguments the text cut off mid-value.

    Closing brackets the output never wrote is a repair with one meaning; a
    string cut mid-way, or an object cut right after ``{`` or a comma, is not
    (``{"content": "half a fi`` would write half a file), so such a call is
    TRUNCATED, like one cut before its arguments.
    """
    kept: list[ToolCall] = []
    for call in found.calls:
        if CUT_MID_VALUE not in call.repairs:
            kept.append(call)
            continue
        found.diagnostics = [d for d in found.diagnostics if not (d.kind is DiagnosticKind.REPAIRED and CUT_MID_VALUE in d.reason)]
        reason = f"{call.format}: the arguments of {call.name!r} were cut off mid-value (a half-written value: not run)"
        found.diagnostics.append(Diagnostic(DiagnosticKind.TRUNCATED, reason, clip(call.raw or text[pos:found.end]), call.format, pos))
    found.calls = kept


def withhold_call_cut_by_limit(calls: list[ToolCall], text: str, diagnostics: list[Diagnostic]) -> list[ToolCall]:
    """The calls to run when the server stopped the output at its length limit.

    A call the output stopped inside right after a whole value is read as
    written when the model stopped there (its stop token was the closer). When
    the length limit stopped it, the rest of its arguments were never written,
    so it is reported TRUNCATED instead (the loop asks the model again).
    """
    last = calls[-1] if calls else None
    if last is None or not cut_by_output_end(last) or not isinstance(last.raw, str):
        return calls
    if not text.endswith(last.raw.rstrip(), 0, space_before(text, len(text))):
        return calls  # repaired closers inside the text: not where the output stopped
    raw = clip(last.raw)
    diagnostics[:] = [d for d in diagnostics if not (d.kind is DiagnosticKind.REPAIRED and d.raw == raw)]
    reason = f"{last.format}: the output reached its length limit inside the call to {last.name!r} (its remaining arguments were never written: not run)"
    diagnostics.append(Diagnostic(DiagnosticKind.TRUNCATED, reason, raw, last.format))
    return calls[:-1]


def scan_text(
    text: str,
    scanner: Scanner,
    ctx: ParseContext,
    start: int = 0,
    reasoning: bool = False,
    literal: bool = False,
    anchored: dict[str, tuple[Candidate, ...]] | None = None,
) -> ScanResult:
    """Every call in ``text`` from ``start``: one pass, consumed spans skipped.

    With ``reasoning``, ``<think>``-style blocks met *between* calls are
    reasoning spans (their bodies go to ``ScanResult.thinking``); the
    streaming parser makes the same decisions in the same order, so both
    agree on what is reasoning, call and content. ``literal`` visits every
    trigger occurrence instead of only those passing the families' heads (same
    result, slower; the equivalence is what the tests check). ``anchored`` are
    the offered tools' answer-start triggers (:attr:`Start.ANSWER`), which
    only the answer's first word can be: they are tried there, once, instead
    of being searched for everywhere.
    """
    result = ScanResult([], [], [], [])
    if literal:
        pattern = scanner.content_pattern if reasoning else scanner.pattern
    else:
        pattern = scanner.filtered_pattern if reasoning else scanner.filtered_call_pattern
    if not text:
        return result
    anchor, anchor_trigger = _anchor(text, start, anchored) if anchored else (-1, "")
    search = _searcher(pattern)
    match = search(text, start)
    if match is None and anchor < 0:
        return result
    pos = floor = start
    candidates = scanner.candidates
    closer_of = scanner.closer_of
    limit = call_span_limit(ctx)
    left = limit  # call spans still to be read

    while left > 0:
        if match is None:
            match = search(text, pos)
        if anchor >= 0 and (match is None or match.start() >= anchor):
            at = anchor  # the answer's start: reasoning before it is consumed by now
            if pos <= at:
                found, problems = try_extract(anchored[anchor_trigger], text, at, ctx, floor)  # type: ignore[index]
                result.diagnostics.extend(problems)
                if found is not None:
                    left -= spent_by(found)
                    _take(result, found, at)
                    pos = floor = found.end
                    match = None
                    # the next place a call list may begin (the answer's last lines after prose)
                    anchor, anchor_trigger = _anchor(text, pos, anchored)
                    continue
            # not a call list here: a later place may still begin one, as a stream finds
            anchor, anchor_trigger = _anchor(text, max(pos, at + 1), anchored)
            continue
        if match is None:
            break
        at = match.start()
        trigger = match.group()
        match = None
        if trigger in closer_of:  # only matched with reasoning=True
            pos = floor = _reasoning_block(text, at, trigger, closer_of[trigger], scanner, ctx, result)
            continue
        found, problems = try_extract(candidates[trigger], text, at, ctx, floor, not literal)
        if problems:
            result.diagnostics.extend(problems)
        if found is None:
            pos = at + 1
            continue
        left -= spent_by(found)
        _take(result, found, at)
        pos = floor = found.end
    if left <= 0 and (unread := unread_after_limit(limit, text, pos)) is not None:
        result.diagnostics.append(unread)
    return result


def spent_by(found: Extraction) -> int:
    """What one extraction uses of the response's limit: one per call it read (one at least).

    The one-shot scan and the stream both count with it, so they stop at the same span.
    """
    return max(1, len(found.calls))


def _take(result: ScanResult, found: Extraction, at: int) -> None:
    """Add what one extraction found (its calls, reports, reasoning and span) to the scan's result."""
    for call in found.calls:
        if call.format is None:
            call.format = "unknown"
    result.calls.extend(found.calls)
    result.diagnostics.extend(found.diagnostics)
    if found.thinking:
        result.thinking.append(found.thinking)
    if not found.shown:  # a sample's text is the answer's
        result.spans.append((at if found.start is None else found.start, found.end))


def _reasoning_block(text: str, at: int, trigger: str, closer: str, scanner: Scanner, ctx: ParseContext, result: ScanResult) -> int:
    """A reasoning block opened by ``trigger`` at ``at``: its body to the result's thinking; returns its end.

    A block the output never closes ends where the first call after it begins
    (the model went on to answer without closing it), else at the text's end.
    """
    body = at + len(trigger)
    close = text.find(closer, body)
    if close < 0 and (call_at := first_call_at(text, body, scanner, ctx)) >= 0:
        close = end = call_at
    else:
        end = len(text) if close < 0 else close + len(closer)
    result.thinking.append(text[body : len(text) if close < 0 else close])
    result.spans.append((at, end))
    return end


def first_call_at(text: str, start: int, scanner: Scanner, ctx: ParseContext) -> int:
    """Where the first call after ``start`` begins (-1: none), reasoning tags not special.

    A reasoning block the output never closes ends there: a model that opens
    ``<think>`` and then writes a whole call block has gone on to act (Ollama's
    Qwen 3.5 parser was changed to read such calls after a real report). A
    call before a closer that does come stays reasoning. Only a call that
    reads *and* is closed by its marker ends the block: broken markup, or a
    call the output cut off (a draft, as likely as not), stays reasoning.
    """
    search = _searcher(scanner.filtered_call_pattern)
    pos = start
    while (match := search(text, pos)) is not None:
        at = match.start()
        found, _ = try_extract(scanner.candidates[match.group()], text, at, ctx, start, True)
        if found is not None and found.calls and found.final:
            return at if found.start is None else found.start
        pos = found.end if found is not None else at + 1
    return -1


def _anchor(text: str, start: int, anchored: dict[str, tuple[Candidate, ...]]) -> tuple[int, str]:
    """Where an anchored trigger stands where a call list may begin (the answer's start, after a
    lead-in: :func:`call_list_starts`, or after prose: :func:`trailing_call_lines`), and which
    (the longest): (-1, "") if none."""
    for at in (*call_list_starts(text), trailing_call_lines(text)):
        if at < start:
            continue
        found = max((t for t in anchored if text.startswith(t, at)), key=len, default="")
        if found and at > 0 and WORD_CHARACTER.match(text, at - 1) and all(c.word for c in anchored[found]):
            continue  # glued to the word before it: another word (the stream's scan skips it too)
        if found:
            return at, found
    return -1, ""


def anchored_candidates(families: Sequence[CallFamily], ctx: ParseContext) -> dict[str, tuple[Candidate, ...]]:
    """The offered tools' triggers and the families reading them, by priority."""
    owners: dict[str, list[tuple[CallFamily, Trigger]]] = {}
    for family in families:
        if family.names_tools:
            for record in family_triggers(family, ctx):
                if record.start is Start.ANSWER:
                    owners.setdefault(record.text, []).append((family, record))
    ranked = {t: sorted(fs, key=lambda owner: -owner[0].priority) for t, fs in owners.items()}
    return {t: tuple(Candidate(f, t, r.word) for f, r in fs) for t, fs in ranked.items()}
