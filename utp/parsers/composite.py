"""The parser every caller uses: native calls, reasoning, and every text family in one pass.

Order of work for one response (the HLD's hierarchy, with its mixed case):

1. :func:`~utp.response.view_response` finds content, thinking and native
   ``tool_calls`` in whatever shape arrived.
2. Native calls are read first (:mod:`utp.parsers.native`).
3. Reasoning (``<think>…</think>``) is cut out of the content; call-like text
   in it is reported (``IN_REASONING``), never run.
4. One left-to-right scan finds every family's literal triggers at once (one
   compiled alternation per family set, cached). At each trigger the families
   owning it are tried by priority; the first that returns an Extraction
   consumes its span and the scan resumes after it.
5. Native and content calls are merged; a content call identical to a native
   one is dropped with a ``DUPLICATE`` diagnostic (servers sometimes parse the
   call *and* leave its text behind).
6. Names are checked against the offered tools (:mod:`utp.parsers.names`).

Nothing here raises on model output: a family that raises is reported as an
``UNPARSEABLE`` diagnostic and the scan goes on.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from utp.numbers import safe_repr
from utp.parsers.base import CallFamily, Extraction, ParseContext
from utp.parsers.familykit import clip, cut_by_output_end
from utp.parsers.jsonrepair import CUT_MID_VALUE
from utp.parsers.names import resolve_name
from utp.parsers.native import parse_native_calls
from utp.parsers.pyliteral import LiteralError, parse_literal
from utp.parsers.reasoning import REASONING_TAGS, call_list_starts, join_around_spans, prefilled_reasoning, trailing_call_lines
from utp.parsers.textscan import space_before
from utp.response import view_response
from utp.types import Diagnostic, DiagnosticKind, ParsedResponse, Tool, ToolCall


@dataclass(frozen=True)
class Candidate:
    family: CallFamily
    trigger: str


class TriggerScanner:
    """All triggers of a family set, found in one pass.

    ``pattern`` is one alternation of the escaped triggers, longest first, so
    a match is the longest trigger at the leftmost position; every shorter
    trigger that also matches there is a prefix of it, so the candidates for
    a matched trigger are precomputed: all families whose trigger is a prefix
    of it, by descending priority (longer trigger first on ties).

    The patterns are compiled when first used: Python's regex compiler costs
    about 10 ms per pattern of this size, and one-shot parsing and streaming
    each need only some of them.
    """

    def __init__(self, families: Sequence[CallFamily], ctx: ParseContext | None = None, anchored: bool = True, named: bool = True) -> None:
        """``ctx``'s tools add their triggers: those of any tool list, and with ``named`` those of these names."""
        owners: dict[str, list[CallFamily]] = {}
        for family in families:
            for trigger in (*family.triggers, *_offered_triggers(family, ctx), *(_named_triggers(family, ctx, anchored) if named else ())):
                if trigger and family not in owners.get(trigger, ()):
                    owners.setdefault(trigger, []).append(family)
        self.owners = owners
        self.triggers = sorted(owners, key=len, reverse=True)
        self.candidates = candidates_by_trigger(owners)
        self.closer_of = dict(REASONING_TAGS)
        #: the triggers plus reasoning openers: content is scanned with these, so a ``<think>``
        #: inside a call span belongs to the call, exactly as when streaming
        self.content_triggers = frozenset(self.triggers) | frozenset(self.closer_of)
        self.max_content_trigger = max(len(t) for t in self.content_triggers)
        #: triggers that start a call only where a word starts (:attr:`CallFamily.word_triggers`)
        self.word_triggers = frozenset(t for t in self.triggers if is_word_trigger(t, owners[t]))

    def _start(self, trigger: str) -> str:
        """The lookbehind a trigger's match needs: a word start for a word trigger, else nothing."""
        return word_start(len(trigger)) if trigger in self.word_triggers else ""

    @cached_property
    def pattern(self) -> re.Pattern[str] | None:
        return trie_pattern({t: self._start(t) for t in self.triggers})

    @cached_property
    def content_pattern(self) -> re.Pattern[str] | None:
        return trie_pattern({t: self._start(t) for t in self.content_triggers})

    @cached_property
    def filtered_pattern(self) -> re.Pattern[str] | None:
        """The one-shot pattern: each trigger followed by the lookahead its families' ``trigger_heads`` declare.

        Positions where every owner would decline are never visited (the
        stream keeps the literal pattern: a head may still be arriving there).
        """
        return trie_pattern({t: self._start(t) + _guard(t, self.owners.get(t, ())) for t in self.content_triggers})

    @cached_property
    def filtered_call_pattern(self) -> re.Pattern[str] | None:
        return trie_pattern({t: self._start(t) + _guard(t, self.owners[t]) for t in self.triggers})

    @cached_property
    def content_prefixes(self) -> frozenset[str]:
        """Every proper prefix of every trigger and reasoning opener (a stream holds these back)."""
        return frozenset(t[:k] for t in self.content_triggers for k in range(1, len(t)))

    @cached_property
    def loose_prefixes(self) -> frozenset[str]:
        """The prefixes (whole triggers included) of the triggers that may start inside a word.

        A prefix not among them begins only word triggers, so it can begin a
        trigger only where a word starts: "rea|d" holds no start of
        ``default_api.``, "| d" may.
        """
        return frozenset(t[:k] for t in self.content_triggers if t not in self.word_triggers for k in range(1, len(t) + 1))

    def _prefix_start(self, prefix: str) -> str:
        """The lookbehind a possible start of a trigger needs (see :attr:`loose_prefixes`)."""
        return "" if prefix in self.loose_prefixes else word_start(len(prefix))

    @cached_property
    def trigger_starts(self) -> re.Pattern[str]:
        """The first characters of every trigger: a text with none of them cannot hold one, or its start."""
        return re.compile("[" + "".join(sorted({re.escape(t[0]) for t in self.content_triggers})) + "]")

    @cached_property
    def possible_start(self) -> re.Pattern[str]:
        """Where a trigger could begin in a chunk: its first two characters, or its first at the chunk's end.

        Sharper than ``trigger_starts`` for triggers that open with a letter
        (``functools[``, ``Action:``): "found" holds an ``f`` but no place a
        trigger can start.
        """
        everything = self.content_triggers
        at_end = {t[0]: r"\Z" + self._prefix_start(t[0]) for t in everything}
        pattern = trie_pattern({**at_end, **{t[:2]: self._prefix_start(t[:2]) for t in everything}})
        assert pattern is not None
        return pattern

    @cached_property
    def watch_pattern(self) -> re.Pattern[str]:
        """Streaming's one question per chunk of prose: the leftmost whole trigger, or else the
        suffix that is a proper prefix of one (text to hold back until the next chunk)."""
        guards = {p: r"\Z" + self._prefix_start(p) for p in self.content_prefixes}
        for trigger in self.content_triggers:
            whole = self._start(trigger)
            # a word trigger that is also a prefix of a trigger that may start inside a word
            guards[trigger] = f"(?:{whole}|{guards[trigger]})" if whole and trigger in guards else whole
        pattern = trie_pattern(guards)
        assert pattern is not None
        return pattern

    def holds_at(self, text: str, start: int) -> bool:
        """Can ``text[start:]``, the text's end, be the start of a trigger still being written?"""
        rest = text[start:]
        if rest not in self.content_prefixes:
            return False
        return rest in self.loose_prefixes or start == 0 or WORD_CHARACTER.match(text, start - 1) is None

    def search(self, text: str, pos: int) -> re.Match[str] | None:
        return self.pattern.search(text, pos) if self.pattern is not None else None


class ToolScanner:
    """The one-shot scanner for a tool list: the family set's shared scanner plus the tools' triggers.

    Triggers made of the offered tools' names (``<read_file>`` for an offered
    ``read_file``) differ with every tool list. Compiled into the families'
    trie they would cost a whole new trie per list (~20 ms: once per agent,
    but once per scenario in an evaluation suite); kept in a small pattern of
    their own they cost about a millisecond, and the shared trie (with the
    triggers of any tool list, :attr:`CallFamily.offered_triggers`) is
    compiled once. The two are searched together (:class:`EitherPattern`),
    which visits exactly the positions the combined trie would. Streams keep
    one combined :class:`TriggerScanner`: their hold-back logic wants one
    pattern.
    """

    def __init__(self, shared: TriggerScanner, families: Sequence[CallFamily], ctx: ParseContext) -> None:
        own: dict[str, list[CallFamily]] = {}
        for family in families:
            for trigger in family.tool_triggers(ctx):
                if trigger and family not in own.get(trigger, ()):
                    own.setdefault(trigger, []).append(family)
        owners = {t: list(fs) for t, fs in shared.owners.items()}
        for trigger, families_of in own.items():
            known = owners.setdefault(trigger, [])
            known.extend(f for f in families_of if f not in known)
        self.owners = owners
        self.shared = shared
        self.triggers = sorted(owners, key=len, reverse=True)
        self.candidates = candidates_by_trigger(owners)
        self.closer_of = shared.closer_of
        self.content_triggers = shared.content_triggers | frozenset(own)
        # One pattern per first character: the triggers of a group then share a literal prefix
        # (``functions.``, ``commentary to=functions.``), which the regex engine finds with a
        # fast substring search; one trie of them all would stop at every 'a', 'c' and 'f'.
        groups: dict[str, list[str]] = {}
        for trigger in own:
            groups.setdefault(trigger[0], []).append(trigger)
        self._own = own
        self._groups = list(groups.values())

    def _start(self, trigger: str) -> str:
        """The lookbehind a trigger's match needs (see :attr:`TriggerScanner.word_triggers`)."""
        return word_start(len(trigger)) if is_word_trigger(trigger, self.owners[trigger]) else ""

    # Compiled when first used, as the shared scanner's: a one-shot parse needs only the filtered ones.
    @cached_property
    def _literal(self) -> list[re.Pattern[str] | None]:
        return [trie_pattern({t: self._start(t) for t in group}) for group in self._groups]

    @cached_property
    def _filtered(self) -> list[re.Pattern[str] | None]:
        return [trie_pattern({t: self._start(t) + _guard(t, self._own[t]) for t in group}) for group in self._groups]

    @cached_property
    def pattern(self) -> EitherPattern:
        return EitherPattern(self.shared.pattern, *self._literal)

    @cached_property
    def content_pattern(self) -> EitherPattern:
        return EitherPattern(self.shared.content_pattern, *self._literal)

    @cached_property
    def filtered_pattern(self) -> EitherPattern:
        return EitherPattern(self.shared.filtered_pattern, *self._filtered)

    @cached_property
    def filtered_call_pattern(self) -> EitherPattern:
        return EitherPattern(self.shared.filtered_call_pattern, *self._filtered)

    def search(self, text: str, pos: int) -> re.Match[str] | None:
        return self.pattern.search(text, pos)


Searcher = Callable[[str, int], "re.Match[str] | None"]


class EitherPattern:
    """Patterns searched as one: the leftmost match of any, the longest where several match there.

    That is the match the alternation of them all would give, since each pattern
    yields its longest trigger whose head holds. A scan asks for the next
    match from ever later positions, so :meth:`searcher` remembers each
    pattern's next match and searches a pattern again only once the scan has
    passed it: re-searching both from every position would re-read the text
    behind a rare trigger once per common one, quadratic on a flood.
    """

    def __init__(self, *patterns: re.Pattern[str] | None) -> None:
        self.patterns = tuple(p for p in patterns if p is not None)

    def searcher(self) -> Searcher:
        """A search function for one text, to be called with non-decreasing positions."""
        patterns = self.patterns
        found: list[re.Match[str] | None] = [None] * len(patterns)
        searched_from = [-1] * len(patterns)
        seen: list[str | None] = [None]
        #: patterns that may still match from the last position asked: one that found nothing
        #: from a position at or before it has nothing further on (until a search goes back)
        live: list[int] = []
        last = [0]

        def search(text: str, pos: int) -> re.Match[str] | None:
            if text is not seen[0]:
                seen[0] = text
                searched_from[:] = [-1] * len(patterns)
                live[:] = range(len(patterns))
            elif pos < last[0]:
                live[:] = range(len(patterns))
            last[0] = pos
            best: re.Match[str] | None = None
            dead = False
            for i in live:
                match = found[i]
                if searched_from[i] < 0 or searched_from[i] > pos or (match is not None and match.start() < pos):
                    match = found[i] = patterns[i].search(text, pos)
                    searched_from[i] = pos
                if match is None:
                    dead = True
                elif best is None or match.start() < best.start() or (match.start() == best.start() and match.end() > best.end()):
                    best = match
            if dead:
                live[:] = [i for i in live if found[i] is not None]
            return best

        return search

    def search(self, text: str, pos: int = 0) -> re.Match[str] | None:
        return self.searcher()(text, pos)

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        """Non-overlapping matches left to right, like :meth:`re.Pattern.finditer`."""
        search = self.searcher()
        pos = 0
        while pos <= len(text) and (match := search(text, pos)) is not None:
            yield match
            pos = match.end() if match.end() > match.start() else match.start() + 1


def _searcher(pattern: re.Pattern[str] | EitherPattern | None) -> Searcher:
    if pattern is None:
        return _no_match
    if isinstance(pattern, EitherPattern):
        return pattern.searcher()
    return pattern.search


def candidates_by_trigger(owners: dict[str, list[CallFamily]]) -> dict[str, tuple[Candidate, ...]]:
    """For each trigger, the families to try when it matches: owners of it and of its prefixes.

    By descending priority, the longer trigger first on ties.
    """
    triggers = sorted(owners, key=len, reverse=True)
    candidates: dict[str, tuple[Candidate, ...]] = {}
    for trigger in triggers:
        found = [Candidate(family, shorter) for shorter in triggers if trigger.startswith(shorter) for family in owners[shorter]]
        found.sort(key=lambda c: (-c.family.priority, -len(c.trigger)))
        candidates[trigger] = tuple(found)
    return candidates


def _offered_triggers(family: CallFamily, ctx: ParseContext | None) -> tuple[str, ...]:
    """The triggers ``family`` watches for while any tool is offered."""
    return family.offered_triggers if ctx is not None and ctx.has_tools else ()


def _named_triggers(family: CallFamily, ctx: ParseContext | None, anchored: bool) -> tuple[str, ...]:
    """The triggers ``family`` makes of ``ctx``'s tool names: those found anywhere, and the anchored ones if asked."""
    if ctx is None or not ctx.has_tools:
        return ()
    return (*family.tool_triggers(ctx), *(family.context_triggers(ctx) if anchored else ()))


#: a head that opens with a one-character class lookahead (the cheap first check floods fail on)
_FIRST_CHARACTER = re.compile(r"\(\?=\[((?:\\.|[^\]\\^])(?:\\.|[^\]\\])*)\]\)")


def _guard(trigger: str, owners: Sequence[CallFamily]) -> str:
    """The lookahead after ``trigger`` from its owners' heads ("" when any owner has none).

    When every head opens with a one-character class, their union is checked
    first: a flood of the bare trigger then fails each position in one step
    instead of once per owner (1 MB of ``[``, owned by pythonic and json).
    """
    heads = [family.trigger_head(trigger) for family in owners]
    if not heads or any(head is None for head in heads):
        return ""
    unique = list(dict.fromkeys(h for h in heads if h is not None))
    firsts = [_FIRST_CHARACTER.match(head) for head in unique]
    union = "(?=[" + "".join(m.group(1) for m in firsts if m) + "])" if len(unique) > 1 and all(firsts) else ""
    return f"{union}(?=(?:{'|'.join(unique)}))"


#: what ``\w`` matches: a word trigger cannot start right after one
WORD_CHARACTER = re.compile(r"\w")


def word_start(length: int) -> str:
    """A lookbehind for the end of ``length`` characters of a word trigger: no word character before them.

    Placed at the trigger's leaf of the trie (after its characters, where the
    lookahead guards go), so the longest trigger whose conditions hold still wins.
    """
    return rf"(?<!\w[\s\S]{{{length}}})"


def is_word_trigger(trigger: str, owners: Sequence[CallFamily]) -> bool:
    """Does ``trigger`` start a call only where a word starts? (It begins with one, and every owner says so.)"""
    return bool(owners) and WORD_CHARACTER.match(trigger) is not None and all(f.word_triggers for f in owners)


def trie_pattern(guards: dict[str, str]) -> re.Pattern[str] | None:
    """One regex for all triggers (each followed by its guard), factored as a trie.

    A flat alternation of ~50 literals makes the regex engine try every
    alternative at every candidate character (~250 ns each); factored by
    shared prefixes it tries one branch per character. Children come before a
    trigger ending at a node, so the longest trigger whose guard holds wins,
    exactly as with the longest-first alternation.
    """
    if not guards:
        return None
    root: dict[str, Any] = {}
    for trigger, guard in guards.items():
        node = root
        for ch in trigger:
            node = node.setdefault(ch, {})
        node[""] = guard

    def emit(node: dict[str, Any]) -> str:
        options = [re.escape(ch) + emit(child) for ch, child in sorted(node.items()) if ch]
        if "" in node:
            options.append(node[""])
        if len(options) == 1:
            return options[0]
        return "(?:" + "|".join(options) + ")"

    return re.compile(emit(root))


Scanner = TriggerScanner | ToolScanner

#: the most call spans (a call read, or call-shaped text reported) one text is read for. A
#: model that writes more is repeating itself (a runaway generation, not 1,025 parallel
#: calls); past the limit the text is content, reported once, and a megabyte of call-shaped
#: text costs a bounded number of reads instead of one per opener. ``max_call_spans`` in the
#: parser options changes it.
MAX_CALL_SPANS = 1024


def call_span_limit(ctx: ParseContext) -> int:
    """The limit for this parser: the ``max_call_spans`` option, else :data:`MAX_CALL_SPANS`."""
    limit = ctx.options.get("max_call_spans")
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
_SCANNERS: dict[tuple[tuple[str, ...], bool, tuple[str, ...], bool], Scanner] = {}
#: scanners kept for distinct (family set, offered-tool triggers) pairs; the oldest goes first
MAX_SCANNERS = 64


def scanner_for(families: Sequence[CallFamily], ctx: ParseContext | None = None, anchored: bool = False) -> Scanner:
    """The cached scanner for this family set and the triggers the offered tools add.

    ``anchored`` asks for a stream's scanner: one :class:`TriggerScanner` that
    also watches for the triggers only an answer's start can be
    (:meth:`CallFamily.context_triggers`); one-shot parsing tries those once
    and gets a :class:`ToolScanner` when the tools' names add triggers.
    Families are registry singletons, and the triggers they add are a
    function of the tool names, so one scanner serves every tool list with
    the same names (and one every tool list when no family adds any).
    """
    named = tuple(sorted({t for f in families for t in _named_triggers(f, ctx, anchored)}))
    if not named:
        return _shared_scanner(families, ctx)
    key = (tuple(f.name for f in families), True, named, anchored)
    scanner = _SCANNERS.get(key)
    if scanner is None:
        assert ctx is not None
        if anchored:
            scanner = TriggerScanner(families, ctx, anchored=True)
        else:
            scanner = ToolScanner(_shared_scanner(families, ctx), families, ctx)
        _remember(key, scanner)
    return scanner


def _shared_scanner(families: Sequence[CallFamily], ctx: ParseContext | None) -> TriggerScanner:
    """The scanner of the families' own triggers, plus those of any tool list when ``ctx`` offers tools."""
    with_tools = ctx is not None and ctx.has_tools
    key = (tuple(f.name for f in families), with_tools, (), False)
    scanner = _SCANNERS.get(key)
    if scanner is None:
        scanner = TriggerScanner(families, ctx if with_tools else None, named=False)
        _remember(key, scanner)
    assert isinstance(scanner, TriggerScanner)
    return scanner


def _remember(key: tuple[tuple[str, ...], bool, tuple[str, ...], bool], scanner: Scanner) -> None:
    if len(_SCANNERS) >= MAX_SCANNERS:
        _SCANNERS.pop(next(iter(_SCANNERS)))
    _SCANNERS[key] = scanner


@dataclass
class ScanResult:
    calls: list[ToolCall]
    diagnostics: list[Diagnostic]
    spans: list[tuple[int, int]]
    thinking: list[str]


def in_inline_code(text: str, pos: int, trigger: str) -> bool:
    """A trigger right after a single backtick is syntax being *shown* (`` `<tool_call>` ``), not used."""
    return pos > 0 and text[pos - 1] == "`" and not trigger.startswith("`")


def try_extract(candidates: Sequence[Candidate], text: str, pos: int, ctx: ParseContext, floor: int) -> tuple[Extraction | None, list[Diagnostic]]:
    """The first family's Extraction at ``pos``, with a family bug turned into a diagnostic."""
    problems: list[Diagnostic] = []
    if candidates and in_inline_code(text, pos, candidates[0].trigger):
        return None, problems
    for cand in candidates:
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
        return found, problems
    return None, problems


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
    the offered tools' triggers (:meth:`CallFamily.context_triggers`), which
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
    limit = call_span_limit(ctx) if ctx.options else MAX_CALL_SPANS
    left = limit  # call spans still to be read

    def take(found: Extraction, at: int) -> None:
        nonlocal left
        left -= 1
        for call in found.calls:
            if call.format is None:
                call.format = "unknown"
        result.calls.extend(found.calls)
        result.diagnostics.extend(found.diagnostics)
        if found.thinking:
            result.thinking.append(found.thinking)
        result.spans.append((at if found.start is None else found.start, found.end))

    while left:
        if match is None:
            match = search(text, pos)
        if anchor >= 0 and (match is None or match.start() >= anchor):
            at = anchor  # the answer's start: reasoning before it is consumed by now
            if pos <= at:
                found, problems = try_extract(anchored[anchor_trigger], text, at, ctx, floor)  # type: ignore[index]
                result.diagnostics.extend(problems)
                if found is not None:
                    take(found, at)
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
            body = at + len(trigger)
            close = text.find(closer_of[trigger], body)
            if close < 0 and (call_at := first_call_at(text, body, scanner, ctx)) >= 0:
                close = end = call_at  # reasoning never closed: the call that follows it ended it
            else:
                end = len(text) if close < 0 else close + len(closer_of[trigger])
            result.thinking.append(text[body : len(text) if close < 0 else close])
            result.spans.append((at, end))
            pos = floor = end
            continue
        found, problems = try_extract(candidates[trigger], text, at, ctx, floor)
        if problems:
            result.diagnostics.extend(problems)
        if found is None:
            pos = at + 1
            continue
        take(found, at)
        pos = floor = found.end
    if not left and (unread := unread_after_limit(limit, text, pos)) is not None:
        result.diagnostics.append(unread)
    return result


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
        found, _ = try_extract(scanner.candidates[match.group()], text, at, ctx, start)
        if found is not None and found.calls and found.final:
            return at if found.start is None else found.start
        pos = found.end if found is not None else at + 1
    return -1


def _no_match(text: str, pos: int) -> None:
    return None


def _anchor(text: str, start: int, anchored: dict[str, tuple[Candidate, ...]]) -> tuple[int, str]:
    """Where an anchored trigger stands where a call list may begin (the answer's start, after a
    lead-in: :func:`call_list_starts`, or after prose: :func:`trailing_call_lines`), and which
    (the longest): (-1, "") if none."""
    for at in (*call_list_starts(text), trailing_call_lines(text)):
        if at < start:
            continue
        found = max((t for t in anchored if text.startswith(t, at)), key=len, default="")
        if found and at > 0 and WORD_CHARACTER.match(text, at - 1) and is_word_trigger(found, [c.family for c in anchored[found]]):
            continue  # glued to the word before it: another word (the stream's scan skips it too)
        if found:
            return at, found
    return -1, ""


def anchored_candidates(families: Sequence[CallFamily], ctx: ParseContext) -> dict[str, tuple[Candidate, ...]]:
    """The offered tools' triggers and the families reading them, by priority."""
    owners: dict[str, list[CallFamily]] = {}
    for family in families:
        for trigger in family.context_triggers(ctx):
            owners.setdefault(trigger, []).append(family)
    return {t: tuple(Candidate(f, t) for f in sorted(fs, key=lambda f: -f.priority)) for t, fs in owners.items()}


class CompositeParser:
    """Native calls plus the given content families, in one pass (implements ToolCallParser)."""

    def __init__(self, families: Sequence[CallFamily], ctx: ParseContext | None = None) -> None:
        self.families = list(families)
        self.ctx = ctx if ctx is not None else ParseContext()
        self.scanner = scanner_for(self.families, self.ctx)
        #: the offered tools' triggers, tried only at the answer's start (see ``scan_text``)
        self.anchored = anchored_candidates(self.families, self.ctx)
        self._stream_scanner: TriggerScanner | None = None

    @property
    def stream_scanner(self) -> TriggerScanner:
        """The scanner a stream watches with: the families' triggers plus the offered tools'."""
        if self._stream_scanner is None:
            scanner = scanner_for(self.families, self.ctx, anchored=True)
            assert isinstance(scanner, TriggerScanner)
            self._stream_scanner = scanner
        return self._stream_scanner

    def can_parse(self, response: Any) -> bool:
        """Native calls present, or a trigger of one of the families in the content."""
        view = view_response(response)
        if view.native_calls:
            return True
        if not view.content:
            return False
        return self.scanner.search(view.content, 0) is not None or (bool(self.anchored) and _anchor(view.content, 0, self.anchored)[0] >= 0)

    def parse(self, response: Any) -> ParsedResponse:
        try:
            return self._parse(response)
        except Exception as exc:  # last line of defence: parse never raises
            return ParsedResponse(
                content=_safe_content(response),
                raw_response=response,
                diagnostics=[Diagnostic(DiagnosticKind.UNPARSEABLE, f"parser error {type(exc).__name__}: {exc}")],
            )

    def _parse(self, response: Any) -> ParsedResponse:
        if type(response) is str:  # the common case, without building a view
            content, thinking, finish = response, "", None
            native, diagnostics = [], []
        else:
            view = view_response(response)
            content, thinking, finish = view.content, view.thinking, view.finish_reason
            if view.native_calls:
                native, diagnostics = parse_native_calls(view.native_calls)
            else:
                native, diagnostics = [], []
        thoughts = [thinking.strip()] if thinking and not thinking.isspace() else []
        start, prefilled = prefilled_reasoning(content)
        if prefilled.strip():
            thoughts.append(prefilled.strip())
        found = scan_text(content, self.scanner, self.ctx, start, reasoning=True, anchored=self.anchored)
        if found.diagnostics:
            diagnostics.extend(found.diagnostics)
        if finish == "length" and found.calls:
            found.calls = withhold_call_cut_by_limit(found.calls, content, diagnostics)
        for extra in found.thinking:
            if extra.strip():
                thoughts.append(extra.strip())
        if start or found.spans:
            content = join_around_spans(content, ([(0, start)] if start else []) + found.spans)
        for thought in thoughts:
            diagnostics.extend(self._calls_in_reasoning(thought))
        calls = self._merge(native, found.calls, diagnostics) if native else found.calls
        if calls and self.ctx.has_tools:
            self.check_names(calls, diagnostics)
        return ParsedResponse(
            content,
            calls,
            "tool_calls" if calls else (finish or "stop"),
            response,
            "\n\n".join(thoughts) if thoughts else "",
            diagnostics,
        )

    def _calls_in_reasoning(self, thought: str) -> list[Diagnostic]:
        found = scan_text(thought, self.scanner, self.ctx)
        return [
            Diagnostic(
                DiagnosticKind.IN_REASONING,
                f"call to {call.name!r} written inside reasoning; not executed",
                call.raw if isinstance(call.raw, str) else safe_repr(call.raw),
                call.format,
            )
            for call in found.calls
        ]

    @staticmethod
    def _merge(native: list[ToolCall], content: list[ToolCall], diagnostics: list[Diagnostic]) -> list[ToolCall]:
        if not native or not content:
            return native + content
        seen = {call.canonical_key() for call in native}
        merged = list(native)
        for call in content:
            if call.canonical_key() in seen:
                diagnostics.append(
                    Diagnostic(
                        DiagnosticKind.DUPLICATE,
                        f"{call.name!r} appears both as a native call and in content ({call.format}); kept once",
                        call.raw if isinstance(call.raw, str) else safe_repr(call.raw),
                        call.format,
                    )
                )
                continue
            merged.append(call)
        return merged

    def check_names(self, calls: list[ToolCall], diagnostics: list[Diagnostic]) -> None:
        """Resolve each call's name against the offered tools (in place); no tools, no check."""
        if self.ctx.has_tools:
            for call in calls:
                self._check_name(call, diagnostics)

    def _check_name(self, call: ToolCall, diagnostics: list[Diagnostic]) -> ToolCall:
        match = resolve_name(call.name, self.ctx)
        call.known = match.known
        if match.how in ("normalized", "corrected"):
            note = f"tool name {call.name!r} -> {match.name!r}"
            call.repairs.append(note)
            diagnostics.append(
                Diagnostic(
                    DiagnosticKind.NAME_CORRECTED,
                    f"{note} ({'misspelling within 2 edits' if match.how == 'corrected' else 'case/spacing/prefix'})",
                    call.name,
                    call.format,
                )
            )
            call.name = match.name
        if match.known:
            _unwrap_arguments(call, self.ctx.tool(call.name), diagnostics)
        else:
            offered = ", ".join(sorted(self.ctx.by_name)[:20])
            diagnostics.append(
                Diagnostic(
                    DiagnosticKind.UNKNOWN_TOOL,
                    f"{call.name!r} is not an offered tool (offered: {offered})",
                    call.name,
                    call.format,
                )
            )
        return call


#: the one argument some models put all arguments under (DeepSeek V3.2 ``arguments``/``input``,
#: MiniCPM ``properties``), for a tool that declares no parameter of that name
_WRAPPING_KEYS = frozenset({"arguments", "parameters", "input", "properties", "args", "kwargs"})


def _unwrap_arguments(call: ToolCall, tool: Tool | None, diagnostics: list[Diagnostic]) -> None:
    """``{"arguments": {"city": ...}}`` for a tool whose parameters are ``city``...: the inner object is the arguments.

    Only when the wrapping key is not a parameter of the tool and every inner
    key is one, so a tool that takes an ``input`` keeps it.
    """
    if tool is None or len(call.arguments) != 1:
        return
    (key, inner), = call.arguments.items()
    declared = tool.properties
    if key not in _WRAPPING_KEYS or key in declared or not declared:
        return
    if isinstance(inner, str):  # written as text: JSON, or a Python dict (MiniCPM's raw values)
        try:
            inner, _ = parse_literal(inner)
        except LiteralError:
            return
    if not isinstance(inner, dict) or not inner or not set(inner) <= set(declared):
        return
    note = f"arguments unwrapped from the single {key!r} argument"
    call.arguments = inner
    call.repairs.append(note)
    diagnostics.append(Diagnostic(DiagnosticKind.REPAIRED, f"{call.name!r}: {note}", call.name, call.format))


def _safe_content(response: Any) -> str:
    try:
        return view_response(response).content
    except Exception:
        return ""
