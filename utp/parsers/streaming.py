"""Parse a response while it streams: prose out at once, each call the moment it closes.

A UI wants the model's words as they arrive, and an agent wants to start a
call as soon as it is complete, but a call's opening (``<tool_call>``,
``[TOOL_CALLS]``, ``{``) arrives a few tokens at a time and must not be shown
as prose. :class:`StreamParser` emits content immediately and holds back only

* a suffix of the buffer that could be the start of a trigger (``[TOO``), and
* text from a trigger on, while the families owning it cannot yet decide.

Decisions reuse the families' ``extract`` on the buffered text, so a stream
gives the same calls and content as parsing the whole response at once. To
stay linear in the response size, the scan position only moves forward, and
an undecided span is re-examined only after it has grown by a fixed fraction
(each retry costs its length, the lengths grow geometrically). A *final*
extraction (the family consumed the call's closing marker, so nothing later
can change it) is announced the moment that marker arrives. Any other is
accepted once at least :data:`LOOKAHEAD` characters follow it (an optional
closing tag may still be coming) or the stream has ended, so such a call is
announced a few dozen characters after it closes.

A text chunk of prose (no whole trigger in it plus the held-back suffix)
takes a fast path: it is emitted without joining or scanning the buffer, so
per-chunk cost is a few Python operations, not a function of the text so far.

Chunks may be text deltas, Ollama ``/api/chat`` NDJSON objects (``message``
with ``content``, ``thinking``, ``tool_calls``) or OpenAI chat-completion
chunks (``choices[0].delta``; tool-call fragments assembled by ``index``).

Output that *starts* inside reasoning (only ``</think>`` appears, the
template pre-filled ``<think>``): once the ``</think>`` has arrived, all that
is still undecided before it is thinking and no call in it is announced, as
one-shot parsing reads it. What streamed before it arrived stays: text as
content (:meth:`StreamParser.result` files it under ``thinking``), and a call
announced the moment it closed. A caller whose template pre-fills reasoning
says so (``prefilled_reasoning=True``, or the tag), and then the stream starts
inside reasoning and agrees with one-shot parsing throughout. Likewise a Kimi call whose opening tokens
were dropped (``NAME:0<|tool_call_argument_begin|>{...}``) is recognised only
at the argument token, after its id has streamed as content; one-shot parsing
removes the id with the call; a call that ends a reasoning block the output
never closes streams as thinking (it is found when the stream ends); and a gpt-oss recipient written in the role
position before a bare ``<|channel|>`` (`` to=functions.NAME<|channel|>…``)
has streamed as content when ``<|channel|>`` arrives. The calls are the same
either way.
"""

from __future__ import annotations

from typing import Any

from utp.parsers.base import Extraction
from utp.parsers.turnframe import blanks_end, role_header_end, role_header_undecided, turn_end_at, turn_end_held
from utp.parsers.composite import CompositeParser
from utp.parsers.finishing import duplicate_of_native, restatement
from utp.parsers.scanloop import call_span_limit, unread_after_limit
from utp.parsers.streamchunks import NativeChunkReader, _OpenAICall
from utp.parsers.streamevents import CallReady, ContentDelta, DiagnosticEvent, StreamEvent, ThinkingDelta
from utp.parsers.streamscan import CLOSING, LOOKAHEAD, MIN_RETRY, RETRY_FRACTION, WAITING_READS, SpanStepper
from utp.parsers.triggerscan import TriggerScanner
from utp.parsers.reasoning import GrowingAnswerStart, forget_texts, template_opener
from utp.parsers.textscan import clear_cache
from utp.types import Diagnostic, ParsedResponse, ToolCall

class StreamParser(NativeChunkReader, SpanStepper):
    """Incremental parser; ``feed`` chunks, then ``close``; ``result`` is the one-shot view."""

    # Slots: the per-chunk path reads a dozen attributes, and CPython stops sharing an instance
    # dict's keys past 30 of them (this class has more), which makes every access slower.
    __slots__ = (
        "_answer_start", "_calls", "_closed", "_closer_of", "_closing_at", "_closing_seen", "_ctx",
        "_diagnostics", "_emitted_any", "_finish", "_floor", "_found_end", "_held", "_hold", "_hold_pos",
        "_last_try", "_length", "_limit_at", "_next_closing", "_max_trigger", "_mode", "_native_items", "_native_keys", "_content_formats", "_open_report",
        "_openai_calls", "_parser", "_pattern", "_pending", "_pos", "_prefix", "_prefixes", "_quiet", "_scanner",
        "_skip_leading", "_span_start", "_spans_left", "_span_trigger", "_starts", "_text", "_think_body", "_think_closer",
        "_thinking_field", "_framing", "_head", "_head_blanks", "_turn_tail", "_waiting", "_waiting_problems", "_waiting_reads", "_watch", "_whole",
    )

    def __init__(self, tools: Any = None, format: str | list[str] = "auto", **options: Any) -> None:
        from utp.parsers import get_parser

        parser = get_parser(format, tools, **options)
        assert isinstance(parser, CompositeParser)
        self._parser = parser
        self._ctx = parser.ctx
        # the offered tools' triggers (a bracketless answer) are watched for like the others: after
        # pre-filled reasoning streamed as content, the answer may still begin at any later point
        self._use_scanner(parser.stream_scanner)
        self._text = ""
        self._answer_start = GrowingAnswerStart()
        #: text received on the fast path, not yet joined into ``_text`` (joined when a scan needs it)
        self._pending: list[str] = []
        self._length = 0  # len(_text) + len of everything pending
        self._hold = ""  # text[_hold_pos:], the held-back suffix, when _hold_pos == _pos
        self._hold_pos = 0
        #: a trailing run of end-of-turn tokens (and one still arriving), not yet in the buffer: it is
        #: the answer's end if the output ends there, and text like any other if more follows
        self._turn_tail = ""
        #: the output's start while it may still be a role header (None: decided), then whether the
        #: blanks after a header are still being dropped
        self._head: str | None = ""
        self._head_blanks = False
        self._framing = True  # one of the three above is in play: chunks go through _admit
        self._pos = 0  # text before this is decided
        self._floor = 0  # end of the last consumed span
        self._mode = "content"  # content | think | span
        self._think_closer = ""
        self._think_body = 0  # where the open reasoning block's text starts
        self._span_start = 0
        self._span_trigger = ""
        self._last_try = -1
        self._found_end = -1  # end of the call found in the span, waiting for its lookahead
        self._open_report = False  # the last read found only a report running to the end of the text
        self._waiting: Extraction | None = None  # that call's extraction
        self._waiting_problems: list[Diagnostic] = []
        self._waiting_reads = 0  # reads of this span made while a found call waited
        self._closing_seen = False  # a closing character arrived since the span was last read
        self._closing_at = 0  # text length when the latest closing character had arrived
        #: (index of the next closing character, or -1 for none in text[from:to]; from; to)
        self._next_closing = (-1, 0, 0)
        self._held = ""  # trailing whitespace of the current piece, dropped if a span follows
        self._skip_leading = False  # after a span: the next piece's leading whitespace goes
        self._emitted_any = False
        self._thinking_field: list[str] = []
        self._native_items: list[Any] = []
        self._openai_calls: dict[int, _OpenAICall] = {}
        self._calls: list[ToolCall] = []
        self._native_keys: set[str] = set()  # canonical keys of the native calls announced
        self._content_formats: dict[tuple[str, str], str | None] = {}  # each content call's key -> the notation it was first read in
        self._diagnostics: list[Diagnostic] = []
        self._finish: str | None = None
        self._closed = False
        self._spans_left = call_span_limit(self._ctx)  # one-shot parsing reads as many (see MAX_CALL_SPANS)
        self._limit_at = -1  # where the last span the limit allows ended, once reached
        # the reasoning tag the chat template wrote: the buffer starts with it, as the text one-shot
        # parsing reads does, so both see the same reasoning (it is no part of ``text`` or ``result``)
        self._prefix = template_opener(self._ctx.options)
        if self._prefix:
            self._pending.append(self._prefix)
            self._length = len(self._prefix)
            self._hold_pos = -1  # the first chunk takes the scanning path, which reads the tag

    def _use_scanner(self, scanner: TriggerScanner) -> None:
        self._scanner = scanner
        self._closer_of = scanner.closer_of
        self._pattern = scanner.content_pattern
        self._prefixes = scanner.content_prefixes
        self._max_trigger = scanner.max_content_trigger
        #: a chunk with none of these characters cannot start or complete a trigger
        self._starts = scanner.trigger_starts
        self._quiet = scanner.possible_start.search
        self._watch = scanner.watch_pattern.search
        self._whole = scanner.content_triggers

    # ------------------------------------------------------------ input

    def feed(self, chunk: Any) -> list[StreamEvent]:
        """Take one chunk (text, Ollama NDJSON object or OpenAI chunk); return what it settles."""
        if type(chunk) is str and (self._framing or "<" in chunk):
            if self._closed:
                raise RuntimeError("StreamParser.feed() after close()")
            chunk = self._admit(chunk)
        if type(chunk) is str and self._hold_pos == self._pos and not self._hold and self._quiet(chunk) is None:
            # prose with nothing held back and no trigger character: out as it is (the
            # commonest chunk by far, so this is _feed_prose and _out cut to what applies)
            self._pending.append(chunk)
            self._pos = self._hold_pos = self._length = self._length + len(chunk)
            core = chunk.rstrip()
            if core is chunk and not self._held and not self._skip_leading and chunk:
                self._emitted_any = True
                return [ContentDelta(chunk)]
            return self._prose_out(chunk)
        if self._closed:
            raise RuntimeError("StreamParser.feed() after close()")
        if type(chunk) is str:
            if self._hold_pos == self._pos:
                fast = self._feed_prose(chunk)
                if fast is not None:
                    return fast
            elif self._mode == "span" and not self._pending_due(chunk):
                return []  # the span is not due for another look: nothing can be decided yet
            elif self._mode == "think" and self._pos == self._length and self._think_closer[0] not in chunk:
                return self._feed_thinking(chunk)
        events: list[StreamEvent] = []
        if isinstance(chunk, (bytes, bytearray)):  # text as the server sent it: the frame is held back as for str
            chunk = self._admit(bytes(chunk).decode("utf-8", "replace"))
        if isinstance(chunk, str):
            self._append(chunk)
        elif chunk is not None:
            self._read_chunk(chunk, events)
        self._advance(False, events)
        self._note_hold()
        return events

    def _admit(self, chunk: str) -> str:
        """The part of the text so far that may be scanned now: the template's frame is held back.

        One-shot parsing sets a role header opening the output and a run of
        end-of-turn tokens ending it aside (:mod:`utp.parsers.turnframe`), so the
        scan here must not see either. The output's start is held while it may
        still become a header; a trailing run until text follows it (then it is
        text like any other) or the stream ends (then it was the template's).
        """
        if self._head is not None:
            piece = self._head + chunk
            if role_header_undecided(piece):
                self._head = piece
                return ""
            self._head = None
            start = role_header_end(piece)
            self._head_blanks = start > 0
            chunk = piece[start:] if start else piece
        if self._head_blanks and chunk:
            start = blanks_end(chunk)
            self._head_blanks = start == len(chunk)
            chunk = chunk[start:] if start else chunk
        piece = self._turn_tail + chunk if self._turn_tail else chunk
        cut = turn_end_held(piece)
        self._turn_tail = piece[cut:]
        self._framing = self._head_blanks or bool(self._turn_tail)
        return piece[:cut] if cut < len(piece) else piece

    def _feed_prose(self, chunk: str) -> list[StreamEvent] | None:
        """Most chunks of prose: the same decision the scan would make, without joining or scanning the buffer.

        Applies in content with only a short held-back suffix, when that suffix
        plus the chunk holds no whole trigger; returns None otherwise. For a
        token-sized chunk one regex search answers both questions (a trigger?
        a suffix to hold back?).
        """
        hold = self._hold
        piece = hold + chunk if hold else chunk
        if len(piece) <= self._max_trigger:  # token-sized: one search answers both questions
            seen = self._watch(piece)
            if seen is None:
                held = 0
            elif seen.end() < len(piece) or seen.group() in self._whole:
                return None  # a whole trigger: the scan decides
            else:
                held = len(piece) - seen.start()
        elif self._pattern.search(piece) is not None:
            return None
        else:  # a long piece: the plain trigger search, then only its tail for a prefix
            held = self._suffix_prefix(piece, 0)
        self._pending.append(chunk)
        length = self._length = self._length + len(chunk)
        self._pos = self._hold_pos = length - held
        if held:
            size = len(piece)
            self._hold = piece[size - held :]
            if size == held:
                return []
            piece = piece[: size - held]
        elif hold:
            self._hold = ""
        return self._prose_out(piece)

    def _prose_out(self, piece: str) -> list[StreamEvent]:
        """Decided prose out: ``_out`` with the usual case inlined (no span just closed)."""
        if self._skip_leading:
            events: list[StreamEvent] = []
            self._out(piece, events)
            return events
        # trailing whitespace is held until we know no span follows
        core = piece.rstrip()
        if not core:
            self._held += piece
            return []
        text = self._held + core if self._held else core
        self._held = piece[len(core) :] if len(core) < len(piece) else ""
        self._emitted_any = True
        return [ContentDelta(text)]

    def _feed_thinking(self, chunk: str) -> list[StreamEvent]:
        """Reasoning with no closing tag in sight: straight out as thinking."""
        self._pending.append(chunk)
        self._length += len(chunk)
        self._pos = self._length
        if not chunk:
            return []
        return [ThinkingDelta(chunk)]

    def _pending_due(self, chunk: str) -> bool:
        """Take a chunk inside an undecided span; is the span due for another look?"""
        self._append(chunk)
        if self._span_due(self._length, False) is None:
            return False
        # un-take it: feed() appends it again on its general path
        self._pending.pop()
        self._length -= len(chunk)
        return True

    def _span_due(self, length: int, final: bool) -> str | None:
        """Why the span at ``_span_start`` should be re-read at this length (None: not yet).

        Reading costs the span's length, so reads are rationed: when a closing
        character has arrived (and the span has grown by a fraction of itself
        since the last read, which keeps the total linear even when every chunk
        holds a ``}``), and, once a call was found, not again until the
        lookahead after it is complete. A read that found only a report running
        to the end of the text (a call still being written) is repeated when a
        closing character comes (a few times a span) or the span has grown by a
        fraction of itself, never per lookahead: a lookahead's worth of text
        per read over a long unclosed call is quadratic. Otherwise, on the
        growth schedule, the families are only asked whether the span is
        settled as prose (cheap).
        """
        if final:
            return "now"
        span = length - self._span_start
        if self._open_report:  # only a report reached the end at the last read
            if self._closing_seen and self._waiting_reads < WAITING_READS:
                return "waiting"
            grown = length - self._last_try
            if grown >= max(MIN_RETRY, span // RETRY_FRACTION) and (self._closing_seen or grown >= span // 2):
                return "lookahead"
            return None
        if self._found_end >= 0:
            # the lookahead counts from the call's end, or from a later closing character (an
            # optional closing tag arriving): re-read once past both, or two lookaheads after the call
            after = max(self._found_end, self._closing_at) + LOOKAHEAD
            if length >= min(after, self._found_end + 2 * LOOKAHEAD):
                return "lookahead"
            # a closing character since: the closing tag may be complete, making the call final
            # (at most WAITING_READS such reads a span, so the total stays linear)
            if self._closing_seen and self._waiting_reads < WAITING_READS:
                return "waiting"
            return None
        if self._last_try < 0:  # just opened: read it if it may have closed, else ask whether it is prose
            return "closing" if self._closing_seen else "growth"
        grown = length - self._last_try
        if self._closing_seen and grown >= span // RETRY_FRACTION:
            return "closing"
        if grown >= max(MIN_RETRY, span // RETRY_FRACTION):
            return "growth"
        return None

    def _note_hold(self) -> None:
        """After a scan: remember the held-back suffix, so the next chunk may take the fast path."""
        if self._mode == "content" and not self._pending and self._length - self._pos < self._max_trigger:
            self._hold = self._text[self._pos :]
            self._hold_pos = self._pos
        else:
            self._hold_pos = -1

    def _append(self, piece: str) -> None:
        self._pending.append(piece)
        self._length += len(piece)
        if self._mode == "span" and CLOSING.search(piece) is not None:
            self._closing_seen = True
            self._closing_at = self._length

    def _joined(self) -> str:
        """All text received, with the fast path's pieces joined in.

        The new pieces are appended to the buffer in place: with the only
        reference to the buffer in a local variable, CPython grows the string
        instead of copying it, so a long response with many calls (a slow step
        each) is not copied once per call. The search caches hold the last
        text, so they are dropped first (a fresh text rebuilds them anyway).
        """
        if self._pending:
            clear_cache()
            forget_texts()
            text = self._text
            self._text = ""
            text += "".join(self._pending)
            self._text = text
            self._pending.clear()
            self._answer_start.update(text)  # the families ask for it; computed afresh it reads the whole text
        return self._text

    def close(self) -> list[StreamEvent]:
        """End of stream: decide everything still held back."""
        if self._closed:
            return []
        events: list[StreamEvent] = []
        if self._head:  # the output's start never became a role header: text like any other
            head, self._head = self._head, None
            self._append(self._admit(head))
        tail, self._turn_tail = self._turn_tail, ""
        if tail:  # what one-shot parsing keeps of it (a token that never completed, an element's "</s>")
            text = self._joined()
            kept = turn_end_at(text + tail) - len(text)
            if kept > 0:
                self._append(tail[:kept])
        self._advance(True, events)
        if self._limit_at >= 0 and (unread := unread_after_limit(call_span_limit(self._ctx), self._text, self._limit_at)) is not None:
            self._diagnostics.append(unread)
            events.append(DiagnosticEvent(unread))
        if self._held:  # trailing whitespace of the last piece: no span follows, so it stays
            events.append(ContentDelta(self._held))
            self._held = ""
        self._flush_openai(events)
        self._closed = True
        self._hold_pos = -1  # no fast path after the end: feed() must refuse
        return events

    def result(self) -> ParsedResponse:
        """The whole response parsed at once (what :func:`parse_response` gives for it)."""
        message: dict[str, Any] = {"role": "assistant", "content": self.text}
        if self._thinking_field:
            message["thinking"] = "".join(self._thinking_field)
        natives = list(self._native_items) + [self._openai_item(c) for _, c in sorted(self._openai_calls.items())]
        if natives:
            message["tool_calls"] = natives
        response: dict[str, Any] = {"message": message}
        if self._finish:
            response["done_reason"] = self._finish
        return self._parser.parse(response)

    @property
    def text(self) -> str:
        """All content text received so far (raw, before any parsing)."""
        text = self._joined() + self._turn_tail
        text = text[len(self._prefix) :] if self._prefix else text
        return self._head + text if self._head else text

    # ------------------------------------------------------------ output

    def _begin_span(self) -> None:
        self._held = ""
        self._skip_leading = True

    def _out(self, piece: str, events: list[StreamEvent]) -> None:
        """Emit decided content, trimming around spans exactly like one-shot parsing."""
        if self._skip_leading:
            piece = piece.lstrip()
            if not piece:
                return
            self._skip_leading = False
            if self._emitted_any:
                piece = "\n" + piece
        core = piece.rstrip()
        if not core:
            self._held += piece
            return
        text = self._held + core
        self._held = piece[len(core) :]
        self._emitted_any = True
        events.append(ContentDelta(text))

    def _think_out(self, text: str, events: list[StreamEvent]) -> None:
        if text:
            events.append(ThinkingDelta(text))

    def _announce(self, calls: list[ToolCall], diagnostics: list[Diagnostic], events: list[StreamEvent], content: bool = False) -> None:
        checked: list[Diagnostic] = list(diagnostics)
        ready = []
        seen = self._native_keys
        for call in calls:
            if content and seen and call.canonical_key() in seen:
                checked.append(duplicate_of_native(call, raw=""))
                continue
            if content:
                key = call.canonical_key()
                repeated = restatement(call, self._content_formats.get(key))
                if repeated is not None:
                    checked.append(repeated)
                    continue
                self._content_formats.setdefault(key, call.format)
            ready.append(call)
        self._parser.check_names(ready, checked)
        for diagnostic in checked:
            self._diagnostics.append(diagnostic)
            events.append(DiagnosticEvent(diagnostic))
        for call in ready:
            self._calls.append(call)
            if call.format == "native":
                seen.add(call.canonical_key())
            events.append(CallReady(call))


def stream_parse(chunks: Any, tools: Any = None, format: str | list[str] = "auto", **options: Any) -> tuple[list[StreamEvent], ParsedResponse]:
    """Feed every chunk, close, and return ``(events, result)`` (handy for tests and replays)."""
    parser = StreamParser(tools, format, **options)
    events: list[StreamEvent] = []
    for chunk in chunks:
        events.extend(parser.feed(chunk))
    events.extend(parser.close())
    return events, parser.result()


__all__ = [
    "CallReady",
    "ContentDelta",
    "DiagnosticEvent",
    "StreamEvent",
    "StreamParser",
    "ThinkingDelta",
    "stream_parse",
]
