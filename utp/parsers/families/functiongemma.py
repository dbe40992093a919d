"""FunctionGemma and Gemma 4 calls: ``call:NAME{key:<escape>text<escape>,n:42}`` between call tokens.

FunctionGemma (Gemma 3 270M) writes ``<start_function_call>call:NAME{...}<end_function_call>``
with every string wrapped in the ``<escape>`` token; Gemma 4 writes
``<|tool_call>call:NAME{...}<tool_call|>`` with strings wrapped in ``<|"|>``.
Inside the braces keys are bare words, numbers/booleans/null are bare, and
arrays and objects nest the same way. Strings are delimited by a token rather
than quotes precisely so that braces, commas and quotes inside them need no
escaping, so the reader here never looks inside a delimited string.

Drift read with a repair (each noted on the call):

* ``call:`` missing after the opener (gemma-4-E2B prompted with FunctionGemma
  syntax writes ``<start_function_call>NAME{}``): the opener is a special
  token, and an identifier glued to ``{`` right after it can only be a call.
  Its arguments must then read; if they do not, the block is reported
  UNPARSEABLE (TRUNCATED at the end of the text) rather than shown as prose.
  Anything else after an opener (prose that *mentions* the token) stays
  content.
* an XML-style closer: ``</end_function_call>``, ``</start_function_call>``,
  ``</tool_call|>``.
* Gemma 4's arguments in parentheses, ``call:NAME(key: "value", n=2)`` (the
  shape Hermes Agent's Gemma 4 parser was written for): the same values,
  keys separated by ``:`` or ``=``, and Python's single-quoted strings too.
* the name written twice, ``call:NAME:NAME{...}`` (Gemma 4 E2B in the
  flutter_gemma report): the second is dropped. Two different names so joined
  are one namespaced name (``call:mcp:lookup{...}``, an MCP server's tool).
* the arguments in doubled braces, ``call:write{{"content":"x"}}`` (a Jinja
  template's escaping copied, kronk's Gemma tests): the object inside.
* Gemma 4 behind a server that strips special tokens (vLLM with
  ``skip_special_tokens``) leaves ``call:NAME{key:value}`` bare: no call
  tokens, no ``<|"|>`` around strings. ``call:`` is an ordinary word, so a
  bare call is read only where it cannot be prose: ``call:`` starts a line
  (after blanks at most), NAME is an identifier glued to ``call:`` and to
  ``{``, the braces balance and the whole body reads in the argument syntax
  with identifier keys, the call(s) fill the rest of that one line (several
  calls may follow each other on it, as ``<tool_call|><|tool_call>`` vanish
  too; 16 blanks at most may trail; a stray end token may close it), and,
  when tools are offered, every NAME is one of them. When the first value opens with the
  string token (``call:f{content:<|"|>…``: the call tokens stripped, the string tokens kept,
  as gezel's llama-server captures show) the value may run over lines and the call ends at
  its brace, which must end its line. "Next call: {x}",
  "recall:foo{bar}" and a sentence that goes on after the braces stay
  content; such a line that does not read is content too (it may be prose),
  never a diagnostic.
* the end token written again right after a call's, ``<tool_call|><tool_call|>``
  (Gemma 4; Ollama's parser suppresses the repeats, ollama/ollama#15370): the
  repeats are part of the call's span, so none is left in the content.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from utp.parsers.base import CallFamily, Extraction, ParseContext, Start, register_family, static_triggers
from utp.parsers.callshape import calls_from_value
from utp.parsers.familykit import make_call, read_json_at, unreadable
from utp.parsers.names import namespace_dropped, offered_under_namespace
from utp.parsers.gemmaargs import ESCAPE, QUOTES, Unreadable, ValueReader
from utp.parsers.reasoning import REASONING_CLOSERS, call_list_starts
from utp.parsers.textscan import blanks_before, find_first, find_forward, is_proper_prefix, skip_blanks, skip_space
from utp.types import Diagnostic, DiagnosticKind, ToolCall

#: opening token → closing token
_BLOCKS = {"<start_function_call>": "<end_function_call>", "<|tool_call>": "<tool_call|>"}
_CALL_PREFIX = "call:"
#: Hermes' tag name written where the call's name belongs, its JSON call after it (see ``_hermes_inside``)
_HERMES_INSIDE = "call:tool_call>"
_HERMES_CLOSERS = ("</tool_call>", "<tool_call|>")
HERMES_INSIDE = "Hermes' <tool_call> JSON written inside Gemma's call tokens"
#: the bare trigger: a Gemma 4 call whose special tokens the server stripped
BARE = _CALL_PREFIX
#: XML-style closers models write for the end token (read with a repair)
_SLASHED = ("</end_function_call>", "</start_function_call>", "</tool_call|>")
_ENDS = (*_BLOCKS.values(), *_SLASHED)
#: end tokens repeated right after a block's end token (blanks between). Both bounds keep the
#: run shorter than a stream's lookahead past the call, so a stream that accepts the call has
#: seen the run's end: it consumes what one-shot parsing does.
_REPEATED_ENDS = re.compile(r"(?:[ \t\r\n]{0,8}+(?:<tool_call\|>|<end_function_call>)){0,63}+")
#: a call without ``call:`` (after an opener) or a bare call's name: an identifier glued to ``{``
_GLUED_NAME = r"[A-Za-z_][\w.\-]{0,255}"
#: and its arguments must really open there: ``}`` or a key (a word, a quoted key, or one opening with
#: ``$`` or ``@`` as JSON Schema's and JSON-LD's keys do: ``{$id:…}``, Mference's tests) next
_GLUED_BODY = r'\{\s{0,64}+(?:\}|[\w"$@]|<escape>|<\|"\|>)'
_GLUED = re.compile(rf"({_GLUED_NAME})(?={_GLUED_BODY})")
_BLANKS = re.compile(r"\s{0,64}+")
#: the same for a bare call, which lies on one line: only spaces and tabs after its '{'
_BARE_BODY = r'\{[ \t]{0,64}+(?:\}|[\w"$@]|<escape>|<\|"\|>)'
_BARE_GLUED = re.compile(rf"({_GLUED_NAME})(?={_BARE_BODY})")
_BARE_BLANKS = re.compile(r"[ \t]{0,64}+")
_KEY_START = re.compile(r'[\w"}$@]')
_NAME_RUN = re.compile(r"[\w.\-]*")
_NAME_START = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")
#: blanks that may trail a bare call on its line (fewer than the stream's lookahead, so a
#: stream sees the end of the line, or a longer run, before it accepts the call)
_TRAILING_BLANKS = 16
#: how much whitespace ``extract`` skips between the block opener and ``call:``
_LEADING_SPACE = 64
#: the scan lookahead: ``extract`` skips at most that much whitespace (``\s`` is ``str.isspace``) and
#: returns None unless ``call:`` or a name glued to its arguments (``_GLUED``) is next, at the end
#: of the text too (no truncation report there); no name character is ``{``, so the possessive
#: run gives back nothing
_HEAD = rf"\s{{0,{_LEADING_SPACE}}}+(?:{re.escape(_CALL_PREFIX)}|[A-Za-z_][\w.\-]{{0,255}}+{_GLUED_BODY})"
#: the bare trigger's lookahead: ``call:`` at a line start or after a blank that is itself at a
#: line start or after a blank (``_bare`` then checks that only blanks precede it on its line),
#: NAME glued to it and to ``{``, and a ``}`` later on the line (the call ends there); or right
#: after a tag's end (a reasoning closer: ``_bare`` reads only the answer's start there, so this
#: branch does not scan the line, which a flood of such calls would make quadratic; one blank may
#: stand between, as ``_bare`` allows any: two or more pass the first branch)
#: a bare call whose first value opens with Gemma's string token (``call:f{content:<|"|>…``): the
#: call tokens are gone but the string tokens survived (gezel's llama-server captures), so a value
#: may run over lines and the call ends at its brace, wherever that is
_TOKEN_STRING_BODY = r'\{[ \t]{0,64}+[A-Za-z_$@][\w.\-$@]{0,64}+[ \t]{0,8}+:[ \t]{0,8}+<\|"\|>'
_TOKEN_STRING_START = re.compile(rf"{_GLUED_NAME}(?={_TOKEN_STRING_BODY})")
_BARE_HEAD = (
    rf"(?:(?<![^ \t\n]call:)(?<![^ \t\n][ \t]call:)[A-Za-z_][\w.\-]{{0,255}}+(?:(?={_BARE_BODY})\{{[^\n}}]*+\}}|(?={_TOKEN_STRING_BODY}))"
    rf"|(?:(?<=[>\]]call:)|(?<=[>\]][ \t]call:))[A-Za-z_][\w.\-]{{0,255}}+(?={_BARE_BODY}))"
)
_NAME = re.compile(r"[^\s{}<>:,\[\]()]{1,256}")
#: what may follow a call written without braces: an end token, the next call (or its separator)
_AFTER_A_NAME_ALONE = (*_ENDS, *_BLOCKS, _CALL_PREFIX, ",")
#: a return type written after a call inside the call tokens, as a declaration states it (``-> OBJECT``)
_RETURN_TYPE = re.compile(r"[ \t]{0,8}+->[ \t]{0,8}+([A-Za-z_][\w.]{0,64}+)")
#: a key written bare: nothing the reader ends a key at (``=`` too: models write ``{city="Paris"}``), and
#: no opening quote (a key opening with ``'`` is read as one in Python's quotes)
_SAFE_KEY = re.compile(r"(?!')[^\s:,{}\[\]<>\"=]+\Z")


def _object_inside(text: str, cursor: int, opener: str, closer: str, repair: str, repairs: list[str]) -> tuple[dict[str, Any], int] | None:
    """The arguments object inside one more pair of brackets, read whole, else None.

    ``{{...}}`` (``opener`` "{", ``closer`` "}"): braces written twice, as a Jinja template
    escapes them (``call:write{{"content":"x"}}``); ``({...})``: the object passed as a
    function's one argument (Gemma 4 E2B writes ``call:search({query:<|"|>x<|"|>}) -> OBJECT``,
    a declaration's shape).
    """
    if not text.startswith(opener, cursor):
        return None
    brace = skip_space(text, cursor + 1)
    if not text.startswith("{", brace):
        return None
    inner: list[str] = []
    try:
        arguments, after = ValueReader(text, inner).object(brace, 1)
    except (Unreadable, RecursionError):
        return None
    after = skip_space(text, after)
    if not text.startswith(closer, after):
        return None
    repairs.extend([*inner, repair])
    return arguments, after + 1


def _name_after_prefix(text: str, prefix_at: int) -> re.Match[str] | None:
    """The name after ``call:`` at ``prefix_at``; inside the call tokens a blank may follow the colon
    (``call: solve{...}``), as the tokens already say a call is written."""
    return _NAME.match(text, _BARE_BLANKS.match(text, prefix_at + len(_CALL_PREFIX)).end())  # type: ignore[union-attr]


@register_family
class FunctionGemmaFamily(CallFamily):
    name = "functiongemma"
    aliases = ("function_gemma", "gemma4")
    summary = "FunctionGemma / Gemma 4: <start_function_call>call:NAME{key:<escape>v<escape>}<end_function_call>"
    declared_triggers = static_triggers((*_BLOCKS, BARE), {**dict.fromkeys(_BLOCKS, _HEAD), BARE: _BARE_HEAD}, Start.WORD)

    def extract(self, text: str, pos: int, trigger: str, ctx: ParseContext) -> Extraction | None:
        if trigger == BARE:
            return self._bare(text, pos, ctx)
        closing = _BLOCKS[trigger]
        cursor = skip_space(text, pos + len(trigger), pos + len(trigger) + _LEADING_SPACE)
        if text.startswith(_HERMES_INSIDE, cursor):
            return self._hermes_inside(text, pos, closing, cursor + len(_HERMES_INSIDE))
        calls: list[ToolCall] = []
        diagnostics: list[Diagnostic] = []
        if text.startswith(_CALL_PREFIX, cursor):
            name_match = _name_after_prefix(text, cursor)
            missing_prefix = False
        else:
            name_match = _GLUED.match(text, cursor)
            if name_match is None:
                return None
            missing_prefix = True
        while True:
            call_start = cursor
            if name_match is None:
                return self._unreadable(text, pos, closing, "no function name after 'call:'", calls, diagnostics)
            name = name_match.group()
            cursor = skip_space(text, name_match.end())
            repairs: list[str] = []
            if missing_prefix:
                repairs.append(f"no 'call:' before {name!r}")
                missing_prefix = False
            name, cursor = _whole_name(text, name, cursor, repairs, ctx)
            if (inside := _object_inside(text, cursor, "(", ")", "arguments object inside parentheses", repairs)) is not None:
                arguments, cursor = inside
            elif text.startswith("(", cursor):
                repairs.append("arguments written in parentheses")
                try:
                    arguments, cursor = ValueReader(text, repairs, paren=True).object(cursor, 1, close=")")
                except Unreadable as exc:
                    return self._unreadable(text, pos, closing, f"arguments of {name!r}: {exc} (offset {exc.offset})", calls, diagnostics)
                except RecursionError:
                    return self._unreadable(text, pos, closing, f"arguments of {name!r} nested too deeply", calls, diagnostics)
            elif (doubled := _object_inside(text, cursor, "{", "}", "arguments inside doubled braces", repairs)) is not None:
                arguments, cursor = doubled
            elif text.startswith("{", cursor):
                try:
                    arguments, cursor = ValueReader(text, repairs).object(cursor, 1)
                except Unreadable as exc:
                    return self._unreadable(text, pos, closing, f"arguments of {name!r}: {exc} (offset {exc.offset})", calls, diagnostics)
                except RecursionError:
                    return self._unreadable(text, pos, closing, f"arguments of {name!r} nested too deeply", calls, diagnostics)
            elif _ends_here(text, cursor):
                arguments = {}
                repairs.append(f"call to {name!r} has no '{{...}}' arguments")
            else:  # other text between the name and its arguments (``call:f<|channel>…{x:1}``): not run as f()
                return self._unreadable(text, pos, closing, f"unexpected text after the name {name!r}", calls, diagnostics)
            if (annotation := _RETURN_TYPE.match(text, cursor)) is not None:  # ``call:f({…}) -> OBJECT``
                repairs.append(f"return type {annotation.group(1)!r} written after the call")
                cursor = annotation.end()
            cursor, slashed = self._closer(text, cursor, repairs)
            # the next call's start token where this one's end token belongs: that one was left out
            reopened = not slashed and text.startswith(tuple(_BLOCKS), skip_space(text, cursor))
            if reopened:
                repairs.append(f"missing {closing} before the next call")
            calls.append(make_call(self.name, name, arguments, text[call_start:cursor], call_start, repairs, diagnostics))
            if slashed or reopened:
                return Extraction(end=cursor, calls=calls, diagnostics=diagnostics)
            cursor = skip_space(text, cursor)
            if text.startswith(",", cursor):
                cursor = skip_space(text, cursor + 1)
            if text.startswith(_CALL_PREFIX, cursor):
                name_match = _name_after_prefix(text, cursor)
                continue
            for token in (closing, *_BLOCKS.values()):
                if text.startswith(token, cursor):
                    end = _REPEATED_ENDS.match(text, cursor + len(token)).end()  # type: ignore[union-attr]
                    return Extraction(end=end, calls=calls, diagnostics=diagnostics)
            if cursor >= len(text):
                return Extraction(end=cursor, calls=calls, diagnostics=diagnostics)
            return self._unreadable(text, pos, closing, f"unexpected text after the call to {name!r}", calls, diagnostics)

    @staticmethod
    def _closer(text: str, cursor: int, repairs: list[str]) -> tuple[int, bool]:
        """Past an XML-style closer right after a call (a repair), else ``cursor`` unchanged."""
        after = skip_space(text, cursor)
        for token in _SLASHED:
            if text.startswith(token, after):
                repairs.append(f"closed with {token}")
                return after + len(token), True
        return cursor, False

    def _bare(self, text: str, pos: int, ctx: ParseContext) -> Extraction | None:
        """``call:NAME{...}`` with the call tokens stripped: only as a whole line (see the module doc)."""
        if not _opens_line(text, pos):
            return None
        line_end = find_forward(text, "\n", pos)
        if line_end == -1 or _TOKEN_STRING_START.match(text, pos + len(BARE)):
            line_end = len(text)  # (a value in string tokens may run over lines: the call ends at its brace)
        line = text[pos:line_end]  # everything read below lies on this line (or ends one)
        calls: list[ToolCall] = []
        diagnostics: list[Diagnostic] = []
        cursor = 0
        while True:
            name_match = _BARE_GLUED.match(line, cursor + len(BARE))
            if name_match is None:
                return None
            name = name_match.group()
            if ctx.has_tools and ctx.tool(name) is None:
                return None
            repairs = ["call tokens missing around 'call:' (stripped special tokens?)"]
            try:
                arguments, end = ValueReader(line, repairs, bare=True).object(name_match.end(), 1)
            except (Unreadable, RecursionError):
                return None
            calls.append(make_call(self.name, name, arguments, line[cursor:end], pos + cursor, repairs, diagnostics))
            cursor = end
            blanks = skip_blanks(line, cursor)
            if line.startswith(BARE, blanks):
                cursor = blanks
                continue
            for token in _ENDS:
                if line.startswith(token, blanks):
                    cursor = blanks + len(token)
                    blanks = skip_blanks(line, cursor)
                    break
            rest = line[blanks : find_forward(line, "\n", blanks) if "\n" in line else len(line)]
            if blanks - cursor > _TRAILING_BLANKS or rest not in ("", "\r"):
                return None
            return Extraction(end=pos + cursor, calls=calls, diagnostics=diagnostics)

    def settled(self, text: str, pos: int, trigger: str) -> bool:
        if trigger == BARE:
            return self._bare_settled(text, pos)
        cursor = skip_space(text, pos + len(trigger))
        if cursor >= len(text) or is_proper_prefix(text, cursor, _CALL_PREFIX):
            return False
        # an identifier still arriving may yet be glued to '{' (a call without 'call:')
        if cursor - (pos + len(trigger)) <= _LEADING_SPACE and text[cursor] in _NAME_START:
            return _glued_settled(text, cursor, _BLANKS)
        return True

    def _hermes_inside(self, text: str, pos: int, closing: str, cursor: int) -> Extraction:
        """``<|tool_call>call:tool_call>`` then a JSON call and ``</tool_call>``: Hermes' tag written
        inside Gemma's call tokens (Gemma 4 12B's reply in Inferpal's captures); one whole call object.
        Inside the call tokens anything else is a call that cannot be read, reported."""
        body = skip_space(text, cursor)
        read = read_json_at(text, body)
        found = None if read is None else calls_from_value(read[0], self.name, text[body : read[1]], [*read[2], HERMES_INSIDE], require_arguments=True)
        if found is None or not found[0]:
            return self._unreadable(text, pos, closing, "no JSON call after Hermes' tag inside the call tokens", [], [])
        jend = read[1]  # type: ignore[index]
        after = skip_space(text, jend)
        closer = next((c for c in _HERMES_CLOSERS if text.startswith(c, after)), None)
        return Extraction(after + len(closer), *found, final=True) if closer else Extraction(jend, *found)

    @staticmethod
    def _bare_settled(text: str, pos: int) -> bool:
        """Everything ``_bare`` reads lies on the trigger's line: decided once that line is whole."""
        if not _opens_line(text, pos):
            return True
        name_at = pos + len(BARE)
        if name_at < len(text) and (text[name_at] not in _NAME_START or _glued_settled(text, name_at, _BARE_BLANKS)):
            return True
        if (name := _TOKEN_STRING_START.match(text, name_at)) is not None:
            # a value in string tokens may run over lines: decided once the line the call ends on is whole
            try:
                end = ValueReader(text, [], bare=True).object(name.end(), 1)[1]
            except (Unreadable, RecursionError):
                return False
            return find_forward(text, "\n", end) != -1
        return find_forward(text, "\n", pos) != -1

    def _unreadable(
        self, text: str, pos: int, closing: str, reason: str, calls: list[ToolCall], diagnostics: list[Diagnostic]
    ) -> Extraction:
        end, token = find_first(text, (closing, *_ENDS), pos)
        if end == -1:
            return unreadable(self.name, text, pos, len(text), reason, kind=DiagnosticKind.TRUNCATED, calls=calls, diagnostics=diagnostics)
        return unreadable(self.name, text, pos, end + len(token), reason, calls=calls, diagnostics=diagnostics)

    def render(self, calls: Sequence[ToolCall]) -> str:
        return "".join(
            f"<start_function_call>{_CALL_PREFIX}{call.name}{render_value(call.arguments)}<end_function_call>" for call in calls
        )


def _whole_name(text: str, name: str, cursor: int, repairs: list[str], ctx: ParseContext) -> tuple[str, int]:
    """The call's name read on past ``:`` (and where reading goes on): the name written twice
    (``call:f:f{…}``, one dropped), an MCP server's before a tool's (``call:mcp:lookup{…}``, deeper too,
    one namespaced name), and a namespace of the model's own before an offered tool's
    (``call:attest.list_notes(…)``: that tool, recorded)."""
    while text.startswith(":", cursor) and (second := _NAME.match(text, cursor + 1)) is not None:
        if second.group() == name:
            repairs.append(f"name {name!r} written twice")
        else:
            name = f"{name}:{second.group()}"
        cursor = skip_space(text, second.end())
    if (meant := offered_under_namespace(name, ctx)) is not None:
        repairs.append(namespace_dropped(name))
        name = meant
    return name, cursor


def _glued_settled(text: str, at: int, blanks_after_brace: re.Pattern[str]) -> bool:
    """Can no text after ``text`` make ``_GLUED`` (``_BARE_GLUED``) match at ``at`` (a name start)?"""
    run = _NAME_RUN.match(text, at + 1).end()  # type: ignore[union-attr]
    if run - at > 256:
        return True
    if run == len(text):
        return False
    if text[run] != "{":
        return True
    blanks = blanks_after_brace.match(text, run + 1).end()  # type: ignore[union-attr]
    if blanks == len(text):
        return False
    if _KEY_START.match(text, blanks):
        return False
    return not any(text.startswith(q, blanks) or is_proper_prefix(text, blanks, q) for q in QUOTES)


def render_value(value: Any) -> str:
    if isinstance(value, str):
        return f"{ESCAPE}{value}{ESCAPE}"
    if isinstance(value, dict):
        items = ",".join(f"{render_key(k)}:{render_value(v)}" for k, v in value.items())
        return "{" + items + "}"
    if isinstance(value, list):
        return "[" + ",".join(render_value(v) for v in value) + "]"
    return json.dumps(value)


def render_key(key: str) -> str:
    return key if _SAFE_KEY.match(key) else f"{ESCAPE}{key}{ESCAPE}"


def _ends_here(text: str, cursor: int) -> bool:
    """Does a call written without braces end at ``cursor``: an end token, the next call, or the text's end next?

    Only then is it a call with no arguments; anything else there (a reasoning
    channel the model opened mid-call) leaves arguments it may have written after unread.
    """
    after = skip_space(text, cursor)
    return after >= len(text) or text.startswith(_AFTER_A_NAME_ALONE, after)


def _opens_line(text: str, pos: int) -> bool:
    """Only blanks before ``pos`` on its line, or, as the answer's start, a reasoning block's closer.

    (Gemma 4's ``<channel|>call:...``; only the answer's start, so a flood of
    closers and calls on one line is not read at every one.)
    """
    before = blanks_before(text, pos)
    if before == 0 or text[before - 1] == "\n":
        return True
    return text.endswith(REASONING_CLOSERS, 0, before) and pos in call_list_starts(text)
