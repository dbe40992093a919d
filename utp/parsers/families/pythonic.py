"""Python-style call lists: ``[get_weather(city="Paris"), ping()]``.

Llama 3.2/4 and BFCL's prompt mode write a bare list; LFM2 wraps it in
``<|tool_call_start|>...<|tool_call_end|>`` (openPangu writes a JSON call
list between the same tokens, read as JSON), Llama 4 in its code tokens
``<|python_start|>...<|python_end|>`` (vLLM's ``llama4_pythonic`` parser strips
them; SGLang's pythonic detector reads the list between them mid-text);
OLMo-3 writes one call per line
inside ``<function_calls>...</function_calls>`` with no brackets. Gemma 3
writes the bracket list when prompted as Google's guide does, and
```` ```tool_code ```` fences holding calls under the prompts widely used
for it (a JSON body in such a fence is the fenced family's). Arguments
are read by :mod:`utp.parsers.pyliteral`, which accepts literals only: nothing
is evaluated or called, ever.

``[`` is everywhere in prose and Markdown, so a bare list must look like a
call straight away (``[`` + name + ``(``) and be *the* response's call: either
the first thing in the content, or naming offered tools. Its extent is found
by a linear, string-aware bracket scan capped at :data:`MAX_SPAN` before
``ast`` sees anything.

BFCL's own decoder wraps a prompt-mode answer in brackets when the model
left them out, so a response that is nothing but ``get_weather(city="Paris")``
(or several such calls) is a call list too. With no bracket to look for, the
offered tools' names are the triggers (:meth:`PythonicFamily.triggers_for`):
the calls must *be* the whole response (reasoning before them aside), or
its last lines after prose ("I'll check.\nget_weather(city="Paris")", each
of those calls on one line of its own), and every name must be an offered
tool; anything else is prose or code.

One call whose arguments are no JSON values (``b'x'``, ``1e999``) does not
cost its siblings in a well-formed list: it is reported (UNPARSEABLE, never
run) and the others are kept, as vLLM's pythonic parsers do.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from utp.parsers.base import CallFamily, Extraction, ParseContext, Start, Trigger, register_family, static_triggers
from utp.parsers.taggedjson import extract_tagged_json
from utp.parsers.familykit import clip, ended_before, make_call, unreadable
from utp.parsers.leadins import introduces_a_call
from utp.parsers.families.jamba import LISTED_TAGS
from utp.parsers.families.keyword_command import command_line
from utp.parsers.pyliteral import CallFailure, LiteralError, RawCall
from utp.parsers.quotedcalls import quoted_calls
from utp.parsers.codefencelabels import CODE_FENCE, CODE_FENCE_HEAD, CODE_FENCE_OPENING, CODE_FENCE_PARTIAL
from utp.parsers.pylenient import BARE_KEY, BARE_TEXT, BARE_WORD, COLON_KEYWORD
from utp.parsers.pythoncalls import MAX_SPAN, any_name, bracket_end, build_python_calls, names_offered_tool, read_calls
from utp.parsers.reasoning import answer_start, begins_call_lines, call_list_starts, may_open_trailing_call_lines
from utp.parsers.textscan import find_forward, is_proper_prefix, skip_space
from utp.types import Diagnostic, DiagnosticKind, ToolCall

LFM_OPEN, LFM_CLOSE = "<|tool_call_start|>", "<|tool_call_end|>"
OLMO_OPEN, OLMO_CLOSE = "<function_calls>", "</function_calls>"
LLAMA4_OPEN, LLAMA4_CLOSE = "<|python_start|>", "<|python_end|>"
#: wrapper opener -> closer (the body is a call list or calls, one per line); Nemotron and
#: Jamba tags hold JSON lists (``jamba``'s) or, from models prompted Python-style, call lists
WRAPPERS = {
    LFM_OPEN: LFM_CLOSE,
    OLMO_OPEN: OLMO_CLOSE,
    LLAMA4_OPEN: LLAMA4_CLOSE,
    **{opener: closer for opener, closer in LISTED_TAGS.items()},
}
#: fences whose label declares a call; the body is read like a wrapped block
FENCE_OPENERS, FENCE_CLOSE = ("```tool_code", "```tool_call"), "```"
#: the rest of a call fence's opening line, then a call or a call list (not JSON)
_FENCE_HEAD = r"[ \t]*\r?\n\s*(?:[A-Za-z_]|\[\s*[A-Za-z_])"
_FENCE_HEAD_RE = re.compile(_FENCE_HEAD)
#: what may still grow into ``_FENCE_HEAD`` (streaming: wait for more text)
_FENCE_HEAD_PARTIAL = re.compile(r"[ \t]*(?:\r?\n?\s*(?:\[\s*)?)?")
#: the end of an LFM2 call list whose ``<|tool_call_start|>[`` a server stripped (liquid-text issue #42's leak)
_HEADLESS_LIST_END = re.compile(r"\][ \t]*+" + re.escape(LFM_CLOSE) + r"\s*+\Z")
#: the lenient reader's readings of bare words as strings: in a code fence those words are code's variables
_VARIABLES_READ = frozenset({BARE_WORD, BARE_TEXT})
#: a call's result kept in a name before it (``results = f(``: the tool_code habit of assigning, then printing)
_KEPT_RESULT = r"(?:[A-Za-z_]\w{0,64}\s*=\s*)?"
#: the first call's name in a code fence's body, its result maybe kept; each name is checked once the body is read
_CODE_FIRST_CALL = re.compile(rf"\s*{_KEPT_RESULT}(?:print\s*\(\s*)?(?:\[\s*)?([A-Za-z_][\w.]{{0,256}})\s*\(")
#: how many leading characters may precede a bare list that opens the response
_LEADING_LIMIT = 256
#: a list whose first item is quoted (see ``_quoted_call_list``)
_QUOTED_LIST_START = re.compile(r"\[\s{0,16}+['\"]")
_BARE_HEAD = re.compile(r"\[\s{0,16}([A-Za-z_][\w\-]{0,255}(?:\.[A-Za-z_][\w\-]{0,255}){0,8})\s{0,16}\(")
#: what must open a wrapped block: a call "name(" (its result maybe assigned: "x = name("), a list "[" or a JSON object "{"
_WRAPPED_HEAD = re.compile(r"\s{0,64}(?:[\[{]|(?:[A-Za-z_]\w{0,64}\s{0,16}=\s{0,16})?[A-Za-z_][\w.]{0,2300}\s{0,16}\()")
#: a wrapped block of JSON calls (openPangu writes ``<|tool_call_start|>[{"name": ...}]``)
_WRAPPED_JSON = re.compile(r"\s{0,64}(?:\{|\[\s{0,16}\{)")
#: the scan lookahead for the wrapped openers: ``extract`` returns None unless ``_WRAPPED_HEAD``
#: matches (here with possessive runs: each stops at a character the next part cannot take, so the
#: match is the same) or only whitespace is left (``\s`` is ``str.isspace``, as ``skip_space``)
_WRAPPED_SCAN_HEAD = r"(?:\s{0,64}+(?:[\[{]|(?:[A-Za-z_]\w{0,64}+\s{0,16}+=\s{0,16}+)?+[A-Za-z_][\w.]{0,2300}+\s{0,16}+\()|\s*+\Z)"
#: the scan lookahead for JSON tags that may hold a Python-style list instead (``<TOOLCALL>[f(``):
#: that list's head, or only whitespace left (a bracketless call or JSON there is not ours)
_LISTED = r"\s{0,64}+\[\s{0,16}+[A-Za-z_][\w.\-]{0,2300}+\s{0,16}+\("
_LISTED_SCAN_HEAD = rf"(?:{_LISTED}|\s*+\Z)"
_LISTED_HEAD = re.compile(_LISTED)
#: a call head still arriving ("get_wea")
_PARTIAL_CALL_HEAD = re.compile(r"[A-Za-z_][\w.]{0,2300}\s{0,16}")
#: a bare-list head still arriving ("[get_wea")
_PARTIAL_HEAD = re.compile(r"\[\s{0,16}(?:[A-Za-z_][\w.]{0,2300}\s{0,16})?")


@register_family
class PythonicFamily(CallFamily):
    name = "pythonic"
    #: below anthropic_xml, which shares <function_calls> and passes on non-<invoke> bodies
    priority = 40
    #: a bare list must open with ``[name(`` (a superset of ``_BARE_HEAD``, as a scan lookahead)
    declared_triggers = static_triggers(("[", *WRAPPERS, *FENCE_OPENERS), {
        "[": r"(?=[\sA-Za-z_'\"])\s{0,16}+['\"]?+[A-Za-z_][\w.\-]*+\s*+\(",
        **dict.fromkeys(FENCE_OPENERS, _FENCE_HEAD),
        **dict.fromkeys(WRAPPERS, _WRAPPED_SCAN_HEAD),
        **dict.fromkeys(LISTED_TAGS, _LISTED_SCAN_HEAD), "<tool_call>": _LISTED,  # (a flood of Hermes tags visits none)
    }) + (
        #: a code fence, once tools are offered: Gemma/Gemini write ```` ```python ```` calls of them
        Trigger(CODE_FENCE, CODE_FENCE_HEAD, offered_only=True),
    )
    aliases = ("python", "llama3_pythonic", "llama4_pythonic", "lfm2", "olmo3")
    summary = "Pythonic: [f(a=1, b='x'), g()] (also <|tool_call_start|>[...]<|tool_call_end|>, <|python_start|>[...]<|python_end|> and <function_calls>f(a=1)</function_calls>)"

    def triggers_for(self, ctx: ParseContext | None) -> tuple[Trigger, ...]:
        """Also ``NAME(`` for each offered tool named like a Python callable: the start of a bracketless answer
        (a call only as a word of its own: ``forget_weather(`` is another word).

        Also ``functions.NAME(`` and ``default_api.NAME(``: the namespaces the tools
        are declared in by TypeScript-style prompts (Harmony's ``namespace functions``)
        and by Gemini-style ones (``default_api``), which models then write before the name;
        and ``NAME.call(``, Llama 3.1's built-in tool syntax, written without its ``<|python_tag|>``.
        """
        if ctx is None or not ctx.has_tools:
            return _UNTOOLED
        names = [name for name in ctx.by_name if _CALLABLE_NAME.fullmatch(name)]
        answers = (Trigger(f"{prefix}{name}(", start=Start.ANSWER, from_tool_names=True) for prefix in _NAMESPACES for name in names)
        builtin = (Trigger(f"{name}.call(", start=Start.ANSWER, from_tool_names=True) for name in names if not name.endswith(".call"))
        return (*self.declared_triggers, *answers, *builtin)

    def extract(self, text: str, pos: int, trigger: str, ctx: ParseContext) -> Extraction | None:
        if trigger == "[":
            return self._bare_list(text, pos, ctx)
        if trigger == CODE_FENCE:
            return self._code_fence(text, pos, ctx)
        if trigger not in _STATIC_TRIGGERS:
            return self._bracketless(text, pos, ctx)
        body_start = pos + len(trigger)
        if trigger in LISTED_TAGS and _LISTED_HEAD.match(text, body_start) is None:
            return None  # JSON (jamba's), or no call list
        if trigger in FENCE_OPENERS:
            if _FENCE_HEAD_RE.match(text, body_start) is None:
                return None  # JSON or prose in the fence: not a python-style call
            body_start = text.index("\n", body_start) + 1
            closing = FENCE_CLOSE
        else:
            closing = WRAPPERS[trigger]
        if not _WRAPPED_HEAD.match(text, body_start) and not is_proper_prefix(text, skip_space(text, body_start), "["):
            if trigger in FENCE_OPENERS and (close := find_forward(text, "\n" + closing, body_start - 1)) != -1:
                commands = _command_lines(self.name, text, body_start, close + 1, ctx)
                return Extraction(close + 1 + len(closing), commands) if commands is not None else None
            return None  # "<function_calls>" mentioned in prose: no call follows
        if trigger in WRAPPERS and _WRAPPED_JSON.match(text, body_start):
            return extract_tagged_json(self.name, text, pos, body_start, (closing,))
        close = find_forward(text, closing, body_start)
        if trigger in WRAPPERS and close == -1 and (listed := self._list_before_text(text, body_start, close, closing, ctx)) is not None:
            return listed
        end = len(text) if close == -1 else close + len(closing)
        body_end = len(text) if close == -1 else close
        if not text[body_start:body_end].strip():
            return None if close == -1 else Extraction(end=end)
        if body_end - body_start > MAX_SPAN:
            return unreadable(self.name, text, pos, end, f"call block longer than {MAX_SPAN} characters")
        try:
            raws, repairs, failures = read_calls(text[body_start:body_end], one_per_line=True, lenient=any_name)
        except LiteralError as exc:
            if trigger in FENCE_OPENERS and close != -1 and (past := self._past_quoted_fence(text, pos, body_start, close, ctx)) is not None:
                return past
            # a whole list, then text where the closer belongs: the closer was left out after the list
            if trigger in WRAPPERS and close != -1 and (listed := self._list_before_text(text, body_start, close, closing, ctx)) is not None:
                return listed
            if trigger in WRAPPERS and close != -1 and (unclosed := self._list_left_open(text, pos, body_start, close, end, ctx)) is not None:
                return unclosed
            kind = DiagnosticKind.TRUNCATED if close == -1 else DiagnosticKind.UNPARSEABLE
            return unreadable(self.name, text, pos, end, str(exc), kind=kind)
        return self._extraction(text, pos, end, raws, repairs, ctx, failures)

    def _past_quoted_fence(self, text: str, pos: int, body_start: int, close: int, ctx: ParseContext) -> Extraction | None:
        """The fence read to the next closer that starts a line, when the first ``` stood inside a string
        (``Write(content="…\\n```")``: Gemma 4 writing a Markdown file); None when that does not read either."""
        line_close = find_forward(text, "\n" + FENCE_CLOSE, close)
        if line_close < 0 or line_close + 1 - body_start > MAX_SPAN:
            return None
        try:
            raws, repairs, failures = read_calls(text[body_start : line_close + 1], one_per_line=True, lenient=any_name)
        except LiteralError:
            return None
        return self._extraction(text, pos, line_close + 1 + len(FENCE_CLOSE), raws, repairs, ctx, failures)

    def _list_before_text(self, text: str, body_start: int, close: int, closing: str, ctx: ParseContext) -> Extraction | None:
        """A wrapped call list the model went on from without the closer: ``<|python_start|>[f()]<|eom|>``,
        ``<|tool_call_start|>[f()] more text``. The list ends the call (a repair); None when the
        closer follows the list, or no whole list opens the body."""
        start = skip_space(text, body_start)
        if not text.startswith("[", start) or _BARE_HEAD.match(text, start) is None:
            return None
        end = bracket_end(text, start, MAX_SPAN)
        if end < 0 or (close != -1 and not text[end:close].strip()):
            return None
        try:
            raws, repairs, failures = read_calls(text[start:end], lenient=any_name)
        except LiteralError:
            return None
        return self._extraction(text, start, end, raws, [*repairs, f"{closing} missing after the call list"], ctx, failures)

    def _list_left_open(self, text: str, pos: int, body_start: int, close: int, end: int, ctx: ParseContext) -> Extraction | None:
        """A call list whose ``]`` the model left out before the closer (LFM2: ``<|tool_call_start|>[f(a=1)<|tool_call_end|>``),
        read with it put back; None when the body is no list or does not read so either."""
        body = text[body_start:close].rstrip()
        if not body.lstrip().startswith("[") or body.endswith("]"):
            return None
        try:
            raws, repairs, failures = read_calls(body + "]", one_per_line=True, lenient=any_name)
        except LiteralError:
            return None
        return self._extraction(text, pos, end, raws, [*repairs, "']' missing before the closer"], ctx, failures)

    def _bare_list(self, text: str, pos: int, ctx: ParseContext) -> Extraction | None:
        head = _BARE_HEAD.match(text, pos)
        if head is None:
            return self._quoted_call_list(text, pos, ctx)
        opens_response = _opens_answer(text, pos)
        offered = ctx.has_tools and names_offered_tool(head.group(1), ctx)
        if not (opens_response or offered):
            return None
        end = bracket_end(text, pos, MAX_SPAN)
        if end == -1:
            closed = self._list_to_the_end(text, pos, ctx, offered)
            if closed is not None:
                return closed
            return unreadable(self.name, text, pos, len(text), f"call list to {head.group(1)!r} is not closed", kind=DiagnosticKind.TRUNCATED)
        if end == -2:
            return unreadable(self.name, text, pos, pos + MAX_SPAN, f"call list longer than {MAX_SPAN} characters")
        try:
            raws, repairs, failures = read_calls(text[pos:end], lenient=(lambda name: names_offered_tool(name, ctx)) if offered else None)
        except LiteralError as exc:
            if not offered:
                return None  # prose that happens to open with "[word(" stays prose
            return unreadable(self.name, text, pos, end, str(exc))
        if not offered and not all(failure.literal for failure in failures):
            return None  # "[f(x), g(1)]": code naming variables, not a call list with one odd value
        if not offered and ctx.has_tools and not all(names_offered_tool(raw.name, ctx) for raw in raws):
            return None
        return self._extraction(text, pos, end, raws, repairs, ctx, failures)

    def _quoted_call_list(self, text: str, pos: int, ctx: ParseContext) -> Extraction | None:
        """``['find_hotel(location="Miami")']``: see :func:`utp.parsers.quotedcalls.quoted_calls`."""
        if not _opens_answer(text, pos) or (read := quoted_calls(text, pos, ctx)) is None:
            return None
        end, raws, repairs = read
        return self._extraction(text, pos, end, raws, repairs, ctx)

    def _code_fence(self, text: str, pos: int, ctx: ParseContext) -> Extraction | None:
        """A ```` ```python ```` (or ```` ```py ````, or unlabeled) fence holding only calls of offered tools.

        Models prompted with Google's ```` ```tool_code ```` convention drift to
        a Python label or none (``print(default_api.get_weather(...))``). Code
        in a fence is usually a sample, so the body must be nothing but calls
        (one per line, ``print(...)`` around one allowed, or a call list) and
        every name an offered tool's; anything else is code, left as content.
        """
        close = find_forward(text, "\n" + FENCE_CLOSE, pos + len(CODE_FENCE))
        if close < 0 or not ctx.has_tools:
            return None  # unclosed: a sample cut off, or (streaming) the rest is still coming
        opening = CODE_FENCE_OPENING.match(text, pos, close + 1)
        if opening is None or close - opening.end() > MAX_SPAN:
            return None
        body_start = opening.end()
        first = _CODE_FIRST_CALL.match(text, body_start, close)
        if first is None or (first.group(1) != "print" and not names_offered_tool(first.group(1), ctx)):
            return None
        try:
            # (the names must be offered tools' in any case: Python's quoting may then be bent, as models bend it)
            raws, repairs, failures = read_calls(text[body_start:close], one_per_line=True, lenient=lambda name: names_offered_tool(name, ctx))
        except LiteralError:
            return None
        if failures or not raws or not all(names_offered_tool(raw.name, ctx) for raw in raws):
            return None
        if _VARIABLES_READ & set(repairs):
            return None  # ``f(city=city)``: a bare word in code is a variable, not a value
        if (opening.group("label") or "p")[0] in "jJtT" and any(raw.keywords for raw in raws):
            return None  # JavaScript has no keyword arguments: ``f(city="Paris")`` there is other code
        return self._extraction(text, pos, close + 1 + len(FENCE_CLOSE), raws, repairs, ctx)

    def _bracketless(self, text: str, pos: int, ctx: ParseContext) -> Extraction | None:
        """The whole response as a call list without its brackets (BFCL's decoder adds them)."""
        if not begins_call_lines(text, pos):
            return None  # only the answer's first word (or the first after a lead-in or prose) can begin a bracketless call list
        end = len(text.rstrip())  # the answer's end, before trailing blanks
        if end - pos > MAX_SPAN:
            return None
        body = text[pos:end]
        headless = _HEADLESS_LIST_END.search(body)
        if headless is not None:  # ``f(a=1)]<|tool_call_end|>``: LFM2's list whose opening the server stripped
            body = body[: headless.start()]
        read = _bracketless_calls(body, ctx)
        if read is None:
            return self._call_before_prose(text, pos, ctx)
        raws, repairs, failures = read
        if failures or not raws or not all(names_offered_tool(raw.name, ctx) for raw in raws):
            return None
        if headless is not None:
            repairs = [f"{LFM_OPEN}[ missing before the call list (stripped?)", *repairs]
        return self._extraction(text, pos, len(text), raws, repairs, ctx)

    def _call_before_prose(self, text: str, pos: int, ctx: ParseContext) -> Extraction | None:
        """One call of an offered tool opening the answer, then prose (``f(a=1) I have done it.``).

        The model acted first and went on talking: the call is its first words,
        closed, literal, and followed by a new sentence (a capital) or a new
        line; not by more code (``f(x).y``), nor by the rest of a sentence the
        call is the subject of (``f(a=1) should tell us``). Or the model said it
        acts first ("I will run the command:", see ``introduces_a_call``), as
        call JSON is read after such a lead-in and the prose after it.
        """
        if pos != answer_start(text) and not introduces_a_call(text, pos):
            return None  # code or prose that starts with a tool's name, or a call a sample's lead-in shows
        paren = find_forward(text, "(", pos)
        close = bracket_end(text, paren, MAX_SPAN) if paren >= 0 else -1
        follow = _BLANKS.match(text, close).end() if close >= 0 else -1
        if close < 0 or not (text.startswith("\n", follow) or (follow > close and text[follow : follow + 1].isupper())):
            return None
        try:
            raws, repairs, failures = read_calls("[" + text[pos:close] + "]")
        except LiteralError:
            return None
        if failures or len(raws) != 1 or not names_offered_tool(raws[0].name, ctx):
            return None
        return self._extraction(text, pos, close, raws, [*repairs, "prose after the call kept as content"], ctx)

    def _list_to_the_end(self, text: str, pos: int, ctx: ParseContext, offered: bool) -> Extraction | None:
        """A call list running to the answer's end that the bracket scan could not close, read as a whole.

        Either its last call closed where the output ended, its ``]`` never written: read with the
        closer supplied, as any call the output stopped in after a whole value is (and withheld
        when the server says the length limit stopped it: see ``ended_before``). Or, for offered
        tools, its ``]`` is there but a stray quote in an unquoted value (``body=Let's meet)]``)
        hid it from the scan.
        """
        body = text[pos:].rstrip()
        written = offered and body.endswith("]")
        if not (written or body.endswith(")")) or len(body) >= MAX_SPAN:
            return None
        try:
            raws, repairs, failures = read_calls(body if written else body + "]", lenient=(lambda name: names_offered_tool(name, ctx)) if offered else None)
        except LiteralError:
            return None
        if failures or not raws or (ctx.has_tools and not all(names_offered_tool(raw.name, ctx) for raw in raws)):
            return None
        return self._extraction(text, pos, len(text), raws, repairs if written else [*repairs, ended_before("]")], ctx)

    def _extraction(
        self,
        text: str,
        pos: int,
        end: int,
        raws: list[RawCall],
        repairs: list[str],
        ctx: ParseContext,
        failures: list[CallFailure] = (),  # type: ignore[assignment]
    ) -> Extraction:
        calls, diagnostics = build_python_calls(self.name, raws, repairs, text[pos:end], pos, ctx)
        for failure in failures:
            reason = f"{self.name}: call to {failure.name!r} not read (not run): {failure.reason}"
            diagnostics.append(Diagnostic(DiagnosticKind.UNPARSEABLE, reason, clip(failure.source), self.name, pos))
        return Extraction(end=end, calls=calls, diagnostics=diagnostics)

    def settled(self, text: str, pos: int, trigger: str) -> bool:
        if trigger == CODE_FENCE:
            opening = CODE_FENCE_OPENING.match(text, pos)
            if opening is None:
                return CODE_FENCE_PARTIAL.fullmatch(text, pos) is None
            first = _CODE_FIRST_CALL.match(text, opening.end())
            if first is None or first.end() == len(text):
                return _PARTIAL_CODE_START.fullmatch(text, opening.end()) is None
            return find_forward(text, "\n" + FENCE_CLOSE, opening.end() - 1) >= 0
        if trigger not in _STATIC_TRIGGERS:  # a bracketless answer is decided by its end: hold it
            return pos not in call_list_starts(text) and not may_open_trailing_call_lines(text, pos)
        if trigger in FENCE_OPENERS:
            start = pos + len(trigger)
            if _FENCE_HEAD_RE.match(text, start) is not None:
                return find_forward(text, FENCE_CLOSE, start) >= 0  # a call fence: decided once it closes
            return _FENCE_HEAD_PARTIAL.fullmatch(text, start) is None  # no call unless the head is still arriving
        if trigger != "[":
            body = skip_space(text, pos + len(trigger))
            if body >= len(text) or _WRAPPED_HEAD.match(text, pos + len(trigger)):
                return False  # an empty, unclosed block: more may come
            return _PARTIAL_CALL_HEAD.fullmatch(text, body) is None
        if _BARE_HEAD.match(text, pos) is None:
            if _QUOTED_LIST_START.match(text, pos) and _opens_answer(text, pos):
                return False  # a list of quoted calls is decided by the answer's end
            return _PARTIAL_HEAD.fullmatch(text, pos) is None
        return bracket_end(text, pos, MAX_SPAN) != -1

    def render(self, calls: Sequence[ToolCall]) -> str:
        rendered = ", ".join(f"{call.name}({', '.join(f'{k}={python_literal(v)}' for k, v in call.arguments.items())})" for call in calls)
        return f"[{rendered}]"


def _opens_answer(text: str, pos: int) -> bool:
    """Does ``pos`` open the answer (blanks before it at most)?"""
    return pos == 0 or (pos <= _LEADING_LIMIT and text[:pos].isspace())


#: blanks after a call on its line
_BLANKS = re.compile(r"[ \t]*")
#: the triggers watched for without tools
_UNTOOLED = tuple(t for t in PythonicFamily.declared_triggers if not t.offered_only)
_STATIC_TRIGGERS = frozenset(t.text for t in _UNTOOLED)
#: the start of a fence body that may still grow into a first call ("print(get_wea", "x = get_wea")
_PARTIAL_CODE_START = re.compile(rf"\s*{_KEPT_RESULT}(?:p(?:r(?:i(?:n(?:t(?:\s*\(\s*)?)?)?)?)?)?(?:\[\s*)?(?:[A-Za-z_][\w.]{{0,256}}\s*\(?)?")
#: what may stand before an offered tool's name in a bracketless call (see ``triggers_for``):
def _command_lines(family: str, text: str, start: int, end: int, ctx: ParseContext) -> list[ToolCall] | None:
    """A call fence's body written as command lines of offered tools (``Write --path "x.md" --content "hi"``:
    Gemma 4 E2B in a ```` ```tool_code ```` fence); None unless every line is one."""
    calls: list[ToolCall] = []
    for offset, line in _lines_of(text[start:end]):
        read = command_line(line, 0, ctx)
        if read is None or read[2] != len(line):
            return None
        calls.append(make_call(family, read[0], read[1], line, start + offset))
    return calls or None


def _lines_of(body: str) -> list[tuple[int, str]]:
    """The body's non-blank lines, trimmed, with where each starts."""
    lines, at = [], 0
    for raw in body.split("\n"):
        if raw.strip():
            lines.append((at + len(raw) - len(raw.lstrip()), raw.strip()))
        at += len(raw) + 1
    return lines


#: a namespace, or Gemini's ``print(...)`` around the call (its tool_code convention without the fence)
_NAMESPACES = ("", "functions.", "default_api.", "print(", "print(default_api.")
#: a tool name a Python-style call can spell: dotted identifiers (``math.hypot``)
_CALLABLE_NAME = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")


def python_literal(value: Any) -> str:
    """Python source for a JSON value (``True``/``None``, escaped strings)."""
    if value is None:
        return "None"
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, str):
        return python_string(value)
    if isinstance(value, (int, float)):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(python_literal(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{python_string(str(k))}: {python_literal(v)}" for k, v in value.items()) + "}"
    return python_string(str(value))


_SURROGATE = re.compile(r"[\ud800-\udfff]")


def python_string(value: str) -> str:
    """A double-quoted Python literal for ``value``.

    JSON's escapes are valid Python escapes, but Python never joins an escaped
    surrogate *pair* into one character, so characters stay literal and only
    lone surrogates (which UTF-8 source cannot hold) are escaped.
    """
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", json.dumps(value, ensure_ascii=False))


def _bracketless_calls(body: str, ctx: ParseContext) -> tuple[list[RawCall], list[str], list[CallFailure]] | None:
    """The calls of a whole answer without its brackets: as a list, else one per line; as Python
    first, then (offered tools only) with keys written the way JavaScript and Swift write them
    (``f(city: "Paris")``, ``f({a: 2})``), the one liberty taken without a marker (a bare word
    for a value, or an unescaped quote, stays code)."""
    def offered(name: str) -> bool:
        return names_offered_tool(name, ctx)

    for lenient in (None, offered):
        for source, one_per_line in (("[" + body + "]", False), (body, True)):
            try:
                raws, repairs, failures = read_calls(source, one_per_line=one_per_line, lenient=lenient)
            except LiteralError:
                continue
            if lenient is None or set(repairs) <= {COLON_KEYWORD, BARE_KEY}:
                return raws, repairs, failures
    return None
