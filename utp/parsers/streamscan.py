"""The stream's scan: how the buffered text moves forward, trigger by trigger, as chunks arrive.

The part of :class:`~utp.parsers.streaming.StreamParser` that decides, at
each step, what of the buffer is content, reasoning or a call: prose is
emitted up to the next possible trigger; at a trigger the families' own
``extract`` reads the buffered text (so a stream gives the one-shot reading);
an undecided span is re-read only after it has grown by a fixed fraction, or
when a closing character arrives, which keeps the whole stream linear.
"""

from __future__ import annotations

import re

from utp.parsers.base import STREAM_LOOKAHEAD, Extraction
from utp.parsers.scanloop import first_call_at, shown_not_used, spent_by, try_extract, withhold_call_cut_by_limit
from utp.parsers.streamevents import DiagnosticEvent, StreamEvent
from utp.parsers.triggerscan import Candidate

#: characters that must follow an extraction before it is final (optional closers may come)
LOOKAHEAD = STREAM_LOOKAHEAD
#: an undecided span is retried after growing by 1/RETRY_FRACTION of its length (at least MIN_RETRY)
RETRY_FRACTION = 8
MIN_RETRY = 16
#: every family's call ends on one of these (a closing brace, bracket, parenthesis, tag or fence):
#: a span is re-read for a call only after one arrives; skipping a read can only delay a
#: decision, never change it, so a family ending on something else is announced late, not lost
CLOSING = re.compile("[\\]})>`\uff5c]")
#: while a found call waits for its lookahead, a closing character re-reads its span at most this often
WAITING_READS = 4
#: a pattern that matches nowhere: the triggers once the call-span limit is reached
_NOTHING = re.compile(r"(?!)")


class SpanStepper:
    """Stepping the buffer forward (a part of :class:`~utp.parsers.streaming.StreamParser`, which holds the state)."""

    __slots__ = ()

    def _advance(self, final: bool, events: list[StreamEvent]) -> None:
        text = self._joined()
        if self._answer_start.prefilled > self._pos:
            self._end_prefilled_reasoning(text, events)
        while True:
            if self._mode == "think":
                if not self._step_think(text, final, events):
                    return
            elif self._mode == "span":
                if not self._step_span(text, final, events):
                    return
            elif not self._step_content(text, final, events):
                return

    def _step_content(self, text: str, final: bool, events: list[StreamEvent]) -> bool:
        match = self._pattern.search(text, self._pos)
        if match is None:
            safe = len(text) if final else len(text) - self._held_suffix(text)
            if safe > self._pos:
                self._out(text[self._pos : safe], events)
                self._pos = safe
            return False
        at = match.start()
        if not final and len(text) - at < self._max_trigger:
            # a longer trigger may still be arriving here, or from before here around this one
            # (``<|tool_call:`` holds ``call:``, and may yet become ``<|tool_call:start|>``)
            held = len(text)
            tail = max(self._pos, len(text) - self._max_trigger + 1)
            if tail < at and self._starts.search(text, tail, at) is not None:
                held -= self._suffix_prefix(text, self._pos)
            if held <= at or text[at:] in self._prefixes:
                hold_from = min(held, at)
                if hold_from > self._pos:
                    self._out(text[self._pos : hold_from], events)
                    self._pos = hold_from
                return False
        if at > self._pos:
            self._out(text[self._pos : at], events)
        self._pos = at
        trigger = match.group()
        if trigger in self._closer_of:
            self._begin_span()
            self._mode = "think"
            self._think_closer = self._closer_of[trigger]
            self._pos = self._think_body = at + len(trigger)
            return True
        self._mode = "span"
        self._span_start = at
        self._span_trigger = trigger
        self._last_try = -1
        self._found_end = -1
        self._waiting_reads = 0
        self._closing_seen = self._closing_after(text, at + len(trigger))
        self._closing_at = len(text) if self._closing_seen else 0
        return True

    def _end_prefilled_reasoning(self, text: str, events: list[StreamEvent]) -> None:
        """An orphan reasoning closer has arrived past what is decided: the output began inside
        reasoning the template opened, so everything undecided before it is thinking, as in
        one-shot parsing, and no span in it is read (a call there was only considered).
        Text already streamed as content stays so (a documented difference)."""
        close, end = self._answer_start.prefilled_closer(text)
        self._think_out(text[self._pos : close], events)
        self._pos = self._floor = end
        self._mode = "content"
        self._waiting, self._found_end, self._open_report = None, -1, False
        self._begin_span()

    def _closing_after(self, text: str, pos: int) -> bool:
        """Is there a closing character in ``text[pos:]``?

        Asked at every opener; searched afresh, one large chunk of openers with no
        closing character (``"[" * 40000``) made each search run to the end of the
        text. The answer is remembered as the next closing character's index (or
        none up to the searched length), so text is searched once as positions advance.
        """
        known, searched_from, searched_to = self._next_closing
        if known >= pos:
            return True
        start = max(pos, searched_to) if known < 0 and searched_from <= pos else pos
        found = CLOSING.search(text, start)
        self._next_closing = (-1 if found is None else found.start(), pos, len(text))
        return found is not None

    def _step_think(self, text: str, final: bool, events: list[StreamEvent]) -> bool:
        close = text.find(self._think_closer, self._pos)
        if close >= 0:
            self._think_out(text[self._pos : close], events)
            self._pos = self._floor = close + len(self._think_closer)
            self._mode = "content"
            return True
        if final and (call_at := first_call_at(text, self._think_body, self._parser.scanner, self._ctx)) >= 0:
            # never closed: the call ended it (streamed as thinking so far, a documented difference)
            self._think_out(text[self._pos : call_at], events)
            self._pos = self._floor = call_at
            self._mode = "content"
            return True
        safe = len(text)
        if not final:
            closer = self._think_closer
            for k in range(min(len(closer) - 1, len(text) - self._pos), 0, -1):
                if text.endswith(closer[:k]):
                    safe = len(text) - k
                    break
        if safe > self._pos:
            self._think_out(text[self._pos : safe], events)
            self._pos = safe
        return False

    def _step_span(self, text: str, final: bool, events: list[StreamEvent]) -> bool:
        start = self._span_start
        reason = self._span_due(len(text), final)
        if reason is None:
            return False
        waiting, self._waiting = self._waiting, None
        if reason == "waiting":
            self._waiting_reads += 1
        self._last_try = len(text)
        self._closing_seen = False
        self._found_end = -1
        self._open_report = False
        found = _completed(waiting, text) if waiting is not None else None
        if found is not None:  # the optional closer it waited for has arrived: no second read
            problems = self._waiting_problems
        else:
            candidates = self._scanner.candidates[self._span_trigger]
            if reason == "growth" and not self._decided(text, start, candidates):
                return False  # no closing character since the last read: only "not a call" could be new
            found, problems = try_extract(candidates, text, start, self._ctx, self._floor)
        if found is not None:
            if not final and not found.final and (found.provisional or (found.end >= len(text) and not found.calls)):
                # a report running to the end of the text (a call still being written), or a reading
                # that later text may overturn: read it again when a closer may have come, or on the
                # growth schedule, not after every lookahead (over a long span that would be quadratic)
                self._found_end, self._open_report = found.end, True
                return False
            if not final and not found.final and len(text) - found.end < LOOKAHEAD:
                self._found_end = found.end
                self._waiting, self._waiting_problems = found, problems
                return False
            spent = spent_by(found)  # counted as one-shot parsing counts it, before any call is withheld
            if final and self._finish == "length" and found.calls:
                found.calls = withhold_call_cut_by_limit(found.calls, text, found.diagnostics)
            for problem in problems:
                self._diagnostics.append(problem)
                events.append(DiagnosticEvent(problem))
            if found.thinking:
                self._think_out(found.thinking, events)
            for call in found.calls:
                if call.format is None:
                    call.format = "unknown"
            self._announce(found.calls, found.diagnostics, events, content=True)
            if found.shown:  # a sample's text is the answer's
                self._out(text[start : found.end], events)
            self._begin_span()
            self._pos = self._floor = found.end
            self._mode = "content"
            self._spans_left -= spent
            if self._spans_left <= 0:
                self._stop_reading_calls(found.end)
            return True
        if not final and not self._decided(text, start, candidates):
            return False
        self._out(text[start : start + 1], events)
        self._pos = start + 1
        self._mode = "content"
        return True

    def _stop_reading_calls(self, at: int) -> None:
        """The limit's last span ended at ``at``: from here on everything is content, as in one-shot parsing."""
        self._limit_at = at
        self._pattern = self._starts = _NOTHING
        self._quiet = self._watch = _NOTHING.search

    def _decided(self, text: str, start: int, candidates: tuple[Candidate, ...]) -> bool:
        """Would no extraction here ever succeed, whatever follows?"""
        return shown_not_used(text, start, self._span_trigger) or all(c.family.settled(text, start, c.trigger) for c in candidates)

    def _held_suffix(self, text: str) -> int:
        """Length of the longest buffer suffix that could begin a trigger.

        Only suffixes starting with a trigger's first character can, so only
        those are looked up (earliest first: the longest).
        """
        return self._suffix_prefix(text, self._pos)

    def _suffix_prefix(self, text: str, floor: int) -> int:
        """Length of the longest suffix of ``text[floor:]`` that is a proper trigger prefix."""
        tail = max(floor, len(text) - self._max_trigger + 1)
        if self._starts.search(text, tail) is None:
            return 0  # the usual case: no trigger character near the end
        holds_at = self._scanner.holds_at
        for start in self._starts.finditer(text, tail):
            if holds_at(text, start.start()):
                return len(text) - start.start()
        return 0


_SPACE = re.compile(r"\s*")  # what str.isspace() accepts, as the families skip it


def _completed(found: Extraction, text: str) -> Extraction | None:
    """``found``, final, when whitespace and its pending closer now follow it (see ``Extraction.closer``)."""
    closer = found.closer
    if not closer:
        return None
    at = _SPACE.match(text, found.end).end()
    if not text.startswith(closer, at):
        return None
    found.end = at + len(closer)
    found.final = True
    found.closer = ""
    return found
