"""The scan pattern: every family's triggers in one compiled alternation, cached per family set.

A family declares its triggers as :class:`~utp.parsers.base.Trigger` records
(a literal, the lookahead its text must pass, where it may start); this module
turns a family set into one regular expression (a trie of the triggers with
their guards) so the scan loop (:mod:`utp.parsers.scanloop`) visits only
positions where some family may start a call. Offered tools add triggers made
of their names; those scanners are cached by the names.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Any

from utp.parsers.base import WORD_CHARACTER, CallFamily, ParseContext, Start, Trigger
from utp.parsers.reasoning import REASONING_TAGS

@dataclass(frozen=True)
class Candidate:
    """A family to try where ``trigger`` matched (``word``: an answer-start trigger that is a word).

    ``head`` is the family's own lookahead for the trigger: where several families
    share a trigger, the scan pattern checks only their union, so one-shot parsing
    skips a family whose own head fails instead of running its reader to find out.
    """

    family: CallFamily
    trigger: str
    word: bool = False
    head: re.Pattern[str] | None = field(default=None, compare=False)


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
        records: dict[str, list[Trigger]] = {}
        for family in families:
            for record in family_triggers(family, ctx if ctx is not None and ctx.has_tools else None):
                if (named or not record.from_tool_names) and (anchored or record.start is not Start.ANSWER):
                    _own(owners, records, family, record)
        self.owners = owners
        #: per trigger, its owners' records (in the order of ``owners``)
        self.records = records
        self.triggers = sorted(owners, key=len, reverse=True)
        self.candidates = candidates_by_trigger(owners, records)
        self.closer_of = dict(REASONING_TAGS)
        #: the triggers plus reasoning openers: content is scanned with these, so a ``<think>``
        #: inside a call span belongs to the call, exactly as when streaming
        self.content_triggers = frozenset(self.triggers) | frozenset(self.closer_of)
        self.max_content_trigger = max(len(t) for t in self.content_triggers)
        #: triggers that start a call only where a word starts (:attr:`Trigger.word`)
        self.word_triggers = frozenset(t for t in self.triggers if is_word_trigger(records[t]))

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
        """The one-shot pattern: each trigger followed by the lookahead its owners' records declare (``Trigger.head``).

        Positions where every owner would decline are never visited (the
        stream keeps the literal pattern: a head may still be arriving there).
        """
        return trie_pattern({t: self._start(t) + heads_guard(self.records.get(t, ())) for t in self.content_triggers})

    @cached_property
    def filtered_call_pattern(self) -> re.Pattern[str] | None:
        return trie_pattern({t: self._start(t) + heads_guard(self.records[t]) for t in self.triggers})

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
    triggers of any tool list, :attr:`Trigger.offered_only`) is
    compiled once. The two are searched together (:class:`EitherPattern`),
    which visits exactly the positions the combined trie would. Streams keep
    one combined :class:`TriggerScanner`: their hold-back logic wants one
    pattern.
    """

    def __init__(self, shared: TriggerScanner, families: Sequence[CallFamily], ctx: ParseContext) -> None:
        own: dict[str, list[CallFamily]] = {}
        own_records: dict[str, list[Trigger]] = {}
        for family in families:
            for record in family_triggers(family, ctx):
                if record.from_tool_names and record.start is not Start.ANSWER:
                    _own(own, own_records, family, record)
        owners = {t: list(fs) for t, fs in shared.owners.items()}
        #: the tools' triggers' records, with those of a shared trigger of the same text
        records = {t: list(shared.records.get(t, ())) for t in own}
        for trigger, families_of in own.items():
            for family, record in zip(families_of, own_records[trigger]):
                _own(owners, records, family, record)
        self.owners = owners
        self.records = records
        self.shared = shared
        self.triggers = sorted(owners, key=len, reverse=True)
        self.candidates = candidates_by_trigger(owners, {**shared.records, **records})
        self.closer_of = shared.closer_of
        self.content_triggers = shared.content_triggers | frozenset(own)
        # One pattern per first character: the triggers of a group then share a literal prefix
        # (``functions.``, ``commentary to=functions.``), which the regex engine finds with a
        # fast substring search; one trie of them all would stop at every 'a', 'c' and 'f'.
        groups: dict[str, list[str]] = {}
        for trigger in own:
            groups.setdefault(trigger[0], []).append(trigger)
        self._own = own_records
        self._groups = list(groups.values())

    def _start(self, trigger: str) -> str:
        """The lookbehind a trigger's match needs (see :attr:`TriggerScanner.word_triggers`)."""
        return word_start(len(trigger)) if is_word_trigger(self.records[trigger]) else ""

    # Compiled when first used, as the shared scanner's: a one-shot parse needs only the filtered ones.
    @cached_property
    def _literal(self) -> list[re.Pattern[str] | None]:
        return [trie_pattern({t: self._start(t) for t in group}) for group in self._groups]

    @cached_property
    def _filtered(self) -> list[re.Pattern[str] | None]:
        return [trie_pattern({t: self._start(t) + heads_guard(self._own[t]) for t in group}) for group in self._groups]

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


def candidates_by_trigger(owners: dict[str, list[CallFamily]], records: dict[str, list[Trigger]]) -> dict[str, tuple[Candidate, ...]]:
    """For each trigger, the families to try when it matches: owners of it and of its prefixes.

    By descending priority, the longer trigger first on ties. ``records`` are the
    owners' trigger records, in the order of ``owners``: each candidate carries its head.
    """
    triggers = sorted(owners, key=len, reverse=True)
    heads = {t: [_head_pattern(r.head) for r in records.get(t, ())] + [None] * len(owners[t]) for t in triggers}
    candidates: dict[str, tuple[Candidate, ...]] = {}
    for trigger in triggers:
        # the scan pattern checked the union of the matched trigger's owners' heads: a lone
        # owner's head is that union, so only shared triggers and shorter ones carry theirs
        own = len(owners[trigger]) == 1
        found = [Candidate(f, t, head=None if own and t == trigger else heads[t][i]) for t in triggers if trigger.startswith(t) for i, f in enumerate(owners[t])]
        found.sort(key=lambda c: (-c.family.priority, -len(c.trigger)))
        candidates[trigger] = tuple(found)
    return candidates


@lru_cache(maxsize=4096)
def _head_pattern(head: str | None) -> re.Pattern[str] | None:
    """A trigger record's head compiled (shared by every scanner with the same head)."""
    return None if head is None else re.compile(head)


def _own(owners: dict[str, list[CallFamily]], records: dict[str, list[Trigger]], family: CallFamily, record: Trigger) -> None:
    """Note that ``family`` watches for ``record`` (once per family and text)."""
    if family not in owners.get(record.text, ()):
        owners.setdefault(record.text, []).append(family)
        records.setdefault(record.text, []).append(record)


#: the records families made of tool lists, by family and tool names; the oldest goes first
_RECORDS: dict[tuple[CallFamily, tuple[str, ...]], tuple[Trigger, ...]] = {}
MAX_RECORDS = 1024


def family_triggers(family: CallFamily, ctx: ParseContext | None) -> tuple[Trigger, ...]:
    """``family.triggers_for(ctx)``, remembered by the tool names where the family makes triggers of them.

    ``triggers_for`` is a function of the names, and a parser is built for
    every new tool list (every request of an agent): the records it builds
    (tens per list) are not built again for names seen before.
    """
    if not family.names_tools or ctx is None or not ctx.has_tools:
        return family.triggers_for(ctx)
    key = (family, tuple(ctx.by_name))
    found = _RECORDS.get(key)
    if found is None:
        if len(_RECORDS) >= MAX_RECORDS:
            _RECORDS.pop(next(iter(_RECORDS)))
        found = _RECORDS[key] = family.triggers_for(ctx)
    return found


def named_triggers(families: Sequence[CallFamily], ctx: ParseContext | None, anchored: bool) -> tuple[str, ...]:
    """The texts of the triggers ``families`` make of ``ctx``'s tool names (answer-start ones if ``anchored``)."""
    if ctx is None or not ctx.has_tools:
        return ()
    found = {
        record.text
        for family in families
        if family.names_tools
        for record in family_triggers(family, ctx)
        if record.from_tool_names and (anchored or record.start is not Start.ANSWER)
    }
    return tuple(sorted(found))


#: a head that opens with a one-character class lookahead (the cheap first check floods fail on)
_FIRST_CHARACTER = re.compile(r"\(\?=\[((?:\\.|[^\]\\^])(?:\\.|[^\]\\])*)\]\)")


def heads_guard(records: Sequence[Trigger]) -> str:
    """The lookahead after a trigger from its owners' records' heads ("" when any owner has none).

    When every head opens with a one-character class, their union is checked
    first: a flood of the bare trigger then fails each position in one step
    instead of once per owner (1 MB of ``[``, owned by pythonic and json).
    """
    heads = [record.head for record in records]
    if not heads or any(head is None for head in heads):
        return ""
    unique = list(dict.fromkeys(h for h in heads if h is not None))
    firsts = [_FIRST_CHARACTER.match(head) for head in unique]
    union = "(?=[" + "".join(m.group(1) for m in firsts if m) + "])" if len(unique) > 1 and all(firsts) else ""
    return f"{union}(?=(?:{'|'.join(unique)}))"


def word_start(length: int) -> str:
    """A lookbehind for the end of ``length`` characters of a word trigger: no word character before them.

    Placed at the trigger's leaf of the trie (after its characters, where the
    lookahead guards go), so the longest trigger whose conditions hold still wins.
    """
    return rf"(?<!\w[\s\S]{{{length}}})"


def _guard(trigger: str, owners: Sequence[CallFamily]) -> str:
    """The lookahead after a declared ``trigger`` owned by ``owners`` (see :func:`heads_guard`)."""
    return heads_guard([next((r for r in f.declared_triggers if r.text == trigger), Trigger(trigger)) for f in owners])


def is_word_trigger(records: Sequence[Trigger]) -> bool:
    """Does the trigger of these owners' records start a call only where a word starts? (Every record says so.)"""
    return bool(records) and all(r.word for r in records)


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


_SCANNERS: dict[tuple[tuple[str, ...], bool, tuple[str, ...], bool], Scanner] = {}
#: scanners kept for distinct (family set, offered-tool triggers) pairs; the oldest goes first
MAX_SCANNERS = 64


def scanner_for(families: Sequence[CallFamily], ctx: ParseContext | None = None, anchored: bool = False) -> Scanner:
    """The cached scanner for this family set and the triggers the offered tools add.

    ``anchored`` asks for a stream's scanner: one :class:`TriggerScanner` that
    also watches for the triggers only an answer's start can be
    (:attr:`Start.ANSWER`); one-shot parsing tries those once
    and gets a :class:`ToolScanner` when the tools' names add triggers.
    Families are registry singletons, and the triggers they add are a
    function of the tool names, so one scanner serves every tool list with
    the same names (and one every tool list when no family adds any).
    """
    named = named_triggers(families, ctx, anchored)
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


def _no_match(text: str, pos: int) -> None:
    return None
