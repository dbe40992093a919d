"""Hermes-style tags around a JSON call: ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``.

The format NousResearch's Hermes models, Qwen 2.5/3 and many fine-tunes are
trained on, plus the tag names models drift to when a prompt shows them
(``<tools>`` — the SDD's P0 Qwen modelfile case —, ``<function_call>`` (or ``<function-call>``),
``<tool_use>``, ``<tool>``, ``<functioncall>``, Nemotron-Mini's ``<toolcall>``, Obsidian Copilot's
``<use_tool>``, an ``<invoke>`` with no attributes as beamclaw's prompt writes it), and the same shape under
vendor tag names: Meituan LongCat-Flash's ``<longcat_tool_call>`` and
rednote dots.llm1's ``<dots_function_call>`` (vLLM's longcat and dots
parsers; an ``<invoke name=...>`` body inside the dots tag is the
anthropic_xml family's). Several blocks are parallel
calls; the body may be a JSON list; the closing tag may be missing when the
output ends; ``"parameters"`` may stand for ``"arguments"``; arguments may be a
JSON string. A body of child elements (``<name>``, ``<arguments>`` or
``<parameters>`` holding JSON or one element per argument) is read too, and
so are a body of YAML lines naming an offered tool (``name: f`` then
``key: value``) and a call object whose opening ``{"`` was lost.

``<tool_call>`` is shared with qwen3_coder (``<function=...>`` body) and glm
(bare name + ``<arg_key>``): they have higher priority and decline bodies
that are not theirs, so what reaches this family is JSON or child elements.
A tag followed by prose, or by the tool *definitions* a model echoes from its
prompt, is not a call.

The tool may also be named by an attribute, the arguments alone in the body:
``<tool_call name="read_file">{"path": "a.txt"}</tool_call>``. Agent frameworks
write past calls into the conversation that way, and models continue in the
shape they were shown.

``<tools>``, ``<tool>`` and ``<response>`` are *weak* tags: models also use them
for prompt echoes and answers, so a JSON body there is a call only when a
name-key word (``name``, ``tool``, ``function``, any case) appears before the
tag opens again. The scanner checks the same condition in its lookahead, so a
flood of weak tags around plain JSON never reaches Python code.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from utp.parsers.base import CallFamily, Extraction, ParseContext, register_family, static_triggers
from utp.parsers.callshape import ANNOUNCED_CALL, NAME_KEYS, announced_call_arguments, build_call, calls_from_value, repaired_diagnostics, split_call_object, unparseable
from utp.parsers.elements import ARGUMENT_ELEMENTS, NAME_ELEMENTS, element_names_pattern, named_element_call
from utp.parsers.hermesbodies import (
    BARE_NAME_THEN_KEY, PYTHON_CALL_HEAD, QUOTED_JSON_START, YAML_NAME_START, absorbs_stray_text, named_element_body, python_body, quoted_json_body, yaml_body,
)
from utp.parsers.taggedjson import salvage_list, valid_json_before
from utp.parsers.families.jamba import PYTHON_CALL_LIST
from utp.parsers.families.keyword_command import attribute_call
from utp.parsers.flatcalls import flat_calls
from utp.parsers.familykit import NAME_ATTRIBUTE, NAME_ATTRIBUTE_HEAD, closer_bound, json_arguments_before, make_call, string_open_at, unreadable
from utp.parsers.jsonrepair import CLOSED_TRUNCATED, decode_json_at, loads_lenient, scan_json_value
from utp.parsers.textscan import bounded_find, find_forward, is_proper_prefix, skip_space
from utp.types import Diagnostic, DiagnosticKind, ToolCall

_DECODER = json.JSONDecoder()
#: values needing the lenient reader after a block's first call (each read runs to the closer)
_MAX_LENIENT_VALUES = 8

#: tags whose body is certainly meant as a call: unreadable JSON there is reported
#: (the underscored ones also hyphenated: ``<function-call>``, as a model recorded under arcrouter wrote it)
_STRONG = (
    "tool_call", "function_call", "tool_use", "use_tool", "functioncall", "toolcall", "longcat_tool_call", "dots_function_call",
    "tool-call", "function-call", "tool-use",
)
#: tags models also use for other things (prompt echo, answers): unreadable means "not a call"
_WEAK = ("tools", "tool", "response", "function", "tool_code", "invoke")
_TAGS = _STRONG + _WEAK
#: the name on its own line before the JSON, or glued to its object (``<tool_call>fs.read{"path": "a"}``,
#: GLM-5 behind a gateway that dropped its argument tokens)
_NAME_LINE = re.compile(r"\s*([A-Za-z_][\w.\-]{0,120})(?:\s*\n\s*(?P<fence>```[\w\-]{0,40}[ \t]*\r?\n\s*)?(?=[{\[])|[ \t]*+(?=\{))")
#: gpt-oss's recipient header where the name belongs (``<tool_call>assistant to=functions.NAME json``
#: then the JSON): a Harmony model served with a Hermes-style template
_RECIPIENT_LINE = re.compile(r"\s*(?:assistant\s+)?to=(?:functions\.)?([A-Za-z_][\w.\-]{0,120})(?:\s*<\|constrain\|>\s*json|[ \t]+json)?\s*(?=\{)")
#: every call-name key (callshape.NAME_KEYS, in any case) holds one of these words, not glued to a
#: letter and not right after ``<`` or ``/`` (that is a tag: ``<tools>``, ``</tool>``). Spelled as
#: character classes because a case-insensitive search is ~30x slower per character in ``re``
_NAME_WORD = r"(?<![A-Za-z</])(?:[Nn][Aa][Mm][Ee]|[Tt][Oo][Oo][Ll]|[Ff][Uu][Nn][Cc][Tt][Ii][Oo][Nn])(?![A-Za-z])"
_NAME_KEY_TEXT = re.compile(_NAME_WORD)
#: the same ending a double-quoted JSON key: valid JSON without one is not a call. Matched
#: against lower-cased text: a case-insensitive search is ~30x slower per character in ``re``
_QUOTED_NAME_KEY = re.compile(r'(?:name|tool|function)[^"\n]{0,40}"\s*:')
#: a call object cut right after its name key: ``{"name": `` and nothing more (the value never began)
_CUT_BEFORE_NAME = re.compile(r'\{\s*+"(?:' + "|".join(NAME_KEYS) + r')"\s*+:\s*+')
#: a call object whose opening ``{"`` (or ``{``) was lost: the body starts with a call-name key's word and
#: its closing quote (``<tool_call>name": "read", "arguments": {…}``, hipfire's Qwen captures)
_LOST_OPENING = re.compile(r'"?+(?=(?:' + "|".join(NAME_KEYS) + r')"\s*+:)')
#: ```` ```json ```` (any label, or none) and its line break, then the JSON: a call tag around a
#: fenced block (the closing fence is stray text before the closer, which the block absorbs)
_FENCE_OPENER = re.compile(r"```[\w\-]{0,40}[ \t]*\r?\n\s*(?=[{\[])")


def _body_head(tag: str) -> str:
    """The scan lookahead for ``<tag>``: what its body must start with for ``extract`` to read it.

    For a weak tag, JSON must show a name-key word before the tag opens again.
    ``[^<]`` keeps the check in the regex engine: either the word comes before
    the next ``<``, or that ``<`` does not reopen the tag (then ``extract``
    decides). Each check stops at the next ``<``, so a text full of weak tags
    is still scanned in linear time.
    """
    json_head = r"[{\[]"
    if tag in _WEAK:
        json_head += rf"(?:[^<]*?{_NAME_WORD}|[^<]*+<(?!{tag}>))"
    else:
        # a fenced block inside a call tag, a call object that lost its ``{``, or the call's JSON as a JSON string
        json_head += "|```|" + _LOST_OPENING.pattern + "|" + QUOTED_JSON_START.pattern
    # an element naming the tool is followed by a parameter element, its closer or the end (not by
    # the tag again: a flood of "<tool_call><a>" is decided here, not in Python); further on, its
    # closing tag comes before the tag opens again, or neither does (a call cut off). That check
    # stops at the next opener, so a flood of "<tool_call><f><a>x</a>" is one regex pass
    group = tag.replace("-", "_hyphen_")  # a group name is an identifier, unlike any underscored tag
    element = f"element_{group}"
    closed_in_time = rf"(?=[^<]*+(?:<(?!/(?P={element})>|{tag}>)[^<]*+)*+(?:</(?P={element})>|\Z))"
    named = rf"<(?!{tag}>)(?P<{element}>[A-Za-z_][\w.\-]{{0,100}}+)>{closed_in_time}\s*+(?:<(?!{tag}>)|\Z)"
    # a name element must hold a name and close (``<function><function>`` is a flood, not a call), or
    # be bent toward ``<function=NAME>`` and have its arguments element next (``<name=f</name><arguments>``);
    # one alternation of the element names for both, so a flood of tags tries them once
    child = f"child_{group}"
    names = element_names_pattern(NAME_ELEMENTS)  # ``<tool-name>`` too, closed in either spelling
    bent = rf"=[^<>\n]{{1,200}}+(?:</(?P={child})>|>)\s*+<(?:{element_names_pattern(ARGUMENT_ELEMENTS)})>"
    name_element = rf"<(?P<{child}>{names})(?:>[^<]{{1,200}}+</(?:{names})>|{bent})"
    return rf"\s*(?:{json_head}|[A-Za-z_]|{name_element}|{named})"


#: ``<tool_call name="f">``: a strong tag naming the tool by attribute (the arguments are the body)
_NAMED_OPENERS = tuple(f"<{tag} " for tag in _STRONG)
_NAMED_OPENER = re.compile(r"<(?P<tag>" + "|".join(_STRONG) + r")\s+" + NAME_ATTRIBUTE)


def _named_opener_head(tag: str) -> str:
    """The rest of ``_NAMED_OPENER`` after ``<tag ``, then a JSON object (perhaps fenced) or the closer."""
    return NAME_ATTRIBUTE_HEAD + rf"\s*+(?:\{{|```|</{tag}>|\Z)"


@register_family
class HermesFamily(CallFamily):
    name = "hermes"
    priority = 50
    #: a body can only be JSON, child elements or a name line (scan lookahead per tag)
    declared_triggers = static_triggers((*(f"<{tag}>" for tag in _TAGS), *_NAMED_OPENERS), {
        **{f"<{tag}>": _body_head(tag) for tag in _TAGS},
        **{f"<{tag} ": _named_opener_head(tag) for tag in _STRONG},
    })
    aliases = ("qwen_xml", "xml", "qwen", "qwen2.5", "nous", "tool_call_xml")
    summary = '<tool_call>{"name": ..., "arguments": {...}}</tool_call> (also <tools>, <function_call>, <tool_use>)'

    def extract(self, text: str, pos: int, trigger: str, ctx: ParseContext) -> Extraction | None:
        if trigger in _NAMED_OPENERS:
            return self._named_by_attribute(text, pos)
        tag = trigger[1:-1]
        closer = f"</{tag}>"
        body_start = pos + len(trigger)
        close = find_forward(text, closer, body_start)
        limit = close if close >= 0 else len(text)
        cursor = skip_space(text, body_start, limit)
        strong = tag in _STRONG
        if strong and text.startswith("```", cursor):  # a fenced block inside the tag
            fence = _FENCE_OPENER.match(text, cursor, limit)
            if fence is None:
                return None
            cursor = fence.end()
        if strong and tag == "tool_call" and PYTHON_CALL_LIST.match(text, cursor, limit) is not None:
            return None  # a Python-style call list: the pythonic family's
        if cursor < limit and text[cursor] in "{[":
            return self._json_body(text, pos, cursor, limit, close, closer, strong, trigger, ctx)
        if cursor < limit and text[cursor] == "<":
            found = self._element_body(text, pos, cursor, limit, close, closer, strong)
            return found if found is not None else named_element_body(self.name, text, pos, cursor, trigger, closer, strong, ctx)
        if strong and close >= 0 and (lost := _LOST_OPENING.match(text, cursor, close)) is not None:
            return self._lost_opening(text, lost.end(), close, closer, "{" if lost.end() > cursor else '{"')
        if strong and QUOTED_JSON_START.match(text, cursor) is not None:
            return quoted_json_body(self.name, text, pos, cursor, close, closer)
        if (written_as_yaml := yaml_body(self.name, text, pos, cursor, close, closer, ctx)) is not None:
            return written_as_yaml
        line = _NAME_LINE.match(text, body_start, limit) or _RECIPIENT_LINE.match(text, body_start, limit)
        if line is not None:
            return self._name_then_json(text, pos, line, limit, close, trigger, closer, ctx)
        if PYTHON_CALL_HEAD.match(text, cursor) is not None:
            return python_body(self.name, text, pos, cursor, close, trigger, closer, strong, ctx)
        reopened = find_forward(text, trigger, cursor) if strong else -1
        bound = reopened if 0 <= reopened < limit else limit  # the tag written again starts the next call
        if strong and (command := attribute_call(text, cursor, bound, ctx)) is not None:  # ``shell command="date" />``
            end = bound if bound < limit else close + len(closer) if close >= 0 else len(text)
            written = "arguments written as attributes" if command[1] else "the tool's name alone: a call without arguments"
            repairs = [written] + ([f"missing {closer} before the next call"] if bound < limit else [])
            diagnostics: list[Diagnostic] = []
            call = make_call(self.name, command[0], command[1], text[pos:end], pos, repairs, diagnostics)
            return Extraction(end, [call], diagnostics)
        return None

    # -- bodies

    def _json_body(
        self, text: str, pos: int, cursor: int, limit: int, close: int, closer: str, strong: bool, opener: str, ctx: ParseContext
    ) -> Extraction | None:
        if not strong:  # a weak tag's call names itself before the tag opens again (the scan's guard)
            reopened = find_forward(text, opener, cursor)
            if _NAME_KEY_TEXT.search(text, cursor, len(text) if reopened < 0 else reopened) is None:
                return None
        # valid JSON may name its own opening tag in strings: it must end before a few reopens
        bound = closer_bound(text, opener, cursor)
        if strong or _QUOTED_NAME_KEY.search(text[cursor:bound].lower()) is not None:
            whole, still_open = valid_json_before(text, cursor, bound, close)
        else:  # valid JSON here has no name key, so is no call; only the lenient reader below may see one
            whole, still_open = None, False
        if whole is not None:
            value, jend = whole
            if jend > close:  # the first closer was inside a string: find the real one
                close = find_forward(text, closer, jend)
            return self._json_calls(text, cursor, value, jend, [], close, closer, opener, ctx)
        if still_open:
            # valid so far, the closer inside an unfinished string: the call runs to the end
            # of the text (truncated output; a stream waits for the rest)
            limit, close, reopened = len(text), -1, -1
        else:
            # JSON that needs repairs is read only up to where the tag opens again, or to its
            # closer cut off by the output's end (``{…}\n</tool``: clipped while it was written)
            reopened = find_forward(text, opener, cursor)
            limit = min(limit, bound if reopened < 0 else reopened, _clipped_closer_at(text, closer))
        try:
            value, jend, repairs = decode_json_at(text, cursor, limit)
            if 0 <= reopened <= jend and CLOSED_TRUNCATED in repairs and string_open_at(text, cursor, reopened):
                # the text goes on, and the tag opening again stands inside a string: quoted, not
                # markup (a stream that has seen part of the string waits for the rest)
                raise ValueError(f"the value runs into {opener} written again")
        except ValueError as exc:
            if not strong:
                return None
            end = close + len(closer) if close >= 0 else len(text)
            # a list of calls with one broken element keeps the readable ones
            salvaged = salvage_list(self.name, text, cursor, close, require_arguments=False) if close >= 0 and text.startswith("[", cursor) else None
            if salvaged is not None:
                return Extraction(end, *salvaged)
            return Extraction(end, [], [unparseable(self.name, f"unreadable JSON in {closer[2:-1]}: {exc}", text[pos:end], pos)])
        found = self._json_calls(text, cursor, value, jend, repairs, close, closer, opener, ctx)
        if found is None and strong and CLOSED_TRUNCATED in repairs:
            if _CUT_BEFORE_NAME.fullmatch(text, cursor, jend) is not None:
                return self._cut_before_name(text, pos, cursor, jend, close, closer, opener)
            if 0 <= reopened and skip_space(text, jend, len(text)) == reopened:
                # given up before the tag opens again (``<tool_call>{"arguments": {…}`` then a whole
                # ``<tool_call>…``): this one is reported, the next read on its own
                return Extraction(jend, [], [unparseable(self.name, f"call JSON left unfinished before {opener} was written again", text[pos:jend], pos)], final=True)
        return found

    def _lost_opening(self, text: str, start: int, close: int, closer: str, lost: str) -> Extraction | None:
        """A closed strong tag whose body is a call object missing its opening ``{"``: the model (or a
        server splitting tokens) dropped it, the rest is the call. Read with the opening put back, the
        object's missing closer supplied as any cut-off object's is."""
        try:
            value, repairs = loads_lenient('{"' + text[start:close])
        except ValueError:
            return None
        repairs = [f"the call object's opening {lost} lost", *repairs]
        found = calls_from_value(value, self.name, text[start:close].strip(), repairs, require_arguments=False)
        if found is None or not found[0]:
            return None
        return Extraction(close + len(closer), *found)

    def _cut_before_name(self, text: str, pos: int, cursor: int, jend: int, close: int, closer: str, opener: str) -> Extraction:
        """A call object cut off before its name was written (``<tool_call>{"name": `` and no more).

        The repair drops the key whose value was cut, so no call is left to
        read; but a call tag holding a call key is no prose, and one more key
        of it would have made a report: say what was seen. The block ends at
        its closer if it has one, else where the cut fell (the end of the
        output, or the tag written again, which is then read on its own).
        """
        raw = text[cursor:jend]
        if jend >= len(text):
            return Extraction(len(text), [], [Diagnostic(DiagnosticKind.TRUNCATED, f"{self.name}: output ended inside a call, before its name", raw, self.name, pos)])
        reopened = find_forward(text, opener, cursor)
        closed = close >= 0 and not 0 <= reopened < close
        end = close + len(closer) if closed else jend
        reason = f"call JSON cut off before its name by {closer if closed else 'the tag written again'}"
        return Extraction(end, [], [unparseable(self.name, reason, raw, pos)], final=closed)

    def _json_calls(
        self, text: str, cursor: int, value: Any, jend: int, repairs: list[str], close: int, closer: str, opener: str, ctx: ParseContext
    ) -> Extraction | None:
        raw = text[cursor:jend]
        # an offered tool's arguments beside its name, as bare JSON may write them (Gemma 4 12B in Inferpal's captures)
        found = calls_from_value(value, self.name, raw, repairs, salvage=True) or flat_calls(value, self.name, raw, repairs, ctx)
        if found is None:
            return None
        calls, diagnostics = found
        reopened = close < 0 and bool(calls) and _reopened_at_end(text, jend, opener)
        if reopened:
            repair = f"{opener} written for {closer}"
            diagnostics = [d for d in diagnostics if d.kind is not DiagnosticKind.REPAIRED]
            for call in calls:
                call.repairs.append(repair)
                diagnostics.extend(repaired_diagnostics(call))
        if close > jend:  # several call objects may share one block: {...}\n{...}</tool_call>
            jend = self._more_values(text, jend, close, calls, diagnostics)
        elif close < 0 and calls:  # no closer (yet): further values up to the tag written again
            jend = self._unclosed_more_values(text, jend, opener, calls, diagnostics)
        after = skip_space(text, jend, len(text))
        closed = text.startswith(closer, after)
        if closed:
            end = after + len(closer)
        elif reopened:
            end = len(text)
        elif absorbs_stray_text(text, jend, close, closer, opener):
            end = close + len(closer)
        else:
            end = jend  # closing tag missing: the call ends with its JSON
        if not calls and not diagnostics:
            return None
        # the JSON ended and its closer follows: later text cannot change the read. Valid JSON
        # (no repairs) ends where it ends, so a closer arriving after it changes only the span
        pending = closer if end == jend and not closed and not repairs else ""
        return Extraction(end, calls, diagnostics, final=closed, closer=pending)

    def _more_values(self, text: str, jend: int, close: int, calls: list[ToolCall], diagnostics: list[Diagnostic]) -> int:
        """Further call values after the first, up to the block's closer; returns where they end.

        The rest of the block is copied once and values are decoded inside the
        copy, so a failing decode (whose error counts the lines before it)
        costs at most the block's length, not the text's. The lenient reader
        gets at most ``_MAX_LENIENT_VALUES`` tries a block; with that the work
        stays linear. What is not a call stops the run (stray text inside the
        block, absorbed as before); call-shaped text left unread is reported,
        never dropped silently.
        """
        block = text[jend:close]
        at = 0
        lenient_reads = 0
        while True:
            nxt = skip_space(block, at, len(block))
            if nxt < len(block) and block[nxt] in ",;":
                nxt = skip_space(block, nxt + 1, len(block))
            if nxt >= len(block) or block[nxt] not in "{[":
                return jend + at
            try:
                value, stop = _DECODER.raw_decode(block, nxt)
                repairs: list[str] = []
            except (ValueError, RecursionError):
                if lenient_reads == _MAX_LENIENT_VALUES:
                    diagnostics.append(unparseable(self.name, f"more than {_MAX_LENIENT_VALUES} values needing repair in one block; the rest was not read", block[nxt:], jend + nxt))
                    return close
                lenient_reads += 1
                try:
                    value, stop, repairs = decode_json_at(block, nxt)
                except ValueError:
                    return jend + at
            found = calls_from_value(value, self.name, block[nxt:stop], repairs, salvage=True)
            if found is None:
                return jend + at
            calls.extend(found[0])
            diagnostics.extend(found[1])
            at = stop

    def _unclosed_more_values(self, text: str, jend: int, opener: str, calls: list[ToolCall], diagnostics: list[Diagnostic]) -> int:
        """Further values after the first in a block with no closer: read, or, cut off by the end, reported.

        Streaming needs this: the text so far ends inside the second of
        ``{...}, {...}</tool_call>``, and that value must stay part of the block
        (the end of the text), not be shown as prose once enough of it arrived.
        """
        nxt = skip_space(text, jend, len(text))
        if nxt < len(text) and text[nxt] in ",;":
            nxt = skip_space(text, nxt + 1, len(text))
        if nxt >= len(text) or text[nxt] not in "{[":
            return jend
        reopened = find_forward(text, opener, nxt)
        bound = len(text) if reopened < 0 else reopened
        if reopened < 0 and scan_json_value(text, nxt) < 0:
            diagnostics.append(Diagnostic(DiagnosticKind.TRUNCATED, f"{self.name}: output ended inside a further call", text[nxt : nxt + 300], self.name, nxt))
            return len(text)
        return self._more_values(text, jend, bound, calls, diagnostics)

    def _name_then_json(
        self, text: str, pos: int, line: re.Match[str], limit: int, close: int, opener: str, closer: str, ctx: ParseContext
    ) -> Extraction | None:
        """``<tool_call>\\nNAME\\n{args}</tool_call>``: name on its own line (or glued to the object, or in a recipient
        header), then the arguments. A whole call object under a word that names no offered tool is that call, the
        word a label (``<tool_call>json`` then ``{"name": "f", "arguments": {…}}``)."""
        reopened = find_forward(text, opener, line.end())  # read no further than the tag written again: linear in a flood
        try:
            value, jend, repairs = decode_json_at(text, line.end(), limit if reopened < 0 else min(limit, reopened))
        except ValueError:
            return None
        if not isinstance(value, dict):
            return None
        name = line.group(1)
        inner = split_call_object(value, require_arguments=True) if ctx.tool(name) is None else None
        if inner is not None and inner[0] != name:
            name, value, repairs = inner[0], inner[1], [*repairs, f"the word {line.group(1)[:40]!r} before the call object read as a label"]
        elif (announced := announced_call_arguments(value, name, ctx.tool(name))) is not None:
            value, repairs = announced, [*repairs, ANNOUNCED_CALL]
        after = skip_space(text, jend, len(text))
        if line.groupdict().get("fence") and text.startswith("```", after):  # the arguments in a fence under the name (a Swift app's fixtures)
            repairs, after = [*repairs, "arguments inside a Markdown fence"], skip_space(text, after + 3, len(text))
        call, diagnostics = build_call(name, value, self.name, text[pos:jend], repairs)
        if call is None:
            return None
        closed = text.startswith(closer, after)
        return Extraction(after + len(closer) if closed else jend, [call], diagnostics, final=closed)

    def _element_body(self, text: str, pos: int, cursor: int, limit: int, close: int, closer: str, strong: bool) -> Extraction | None:
        """``<name>NAME</name><arguments>{json}</arguments>`` or one element per argument."""
        end = close + len(closer) if close >= 0 else len(text)
        try:
            named = named_element_call(text, cursor, limit, close if close >= 0 else limit)
        except ValueError as exc:
            return Extraction(end, [], [unparseable(self.name, str(exc), text[pos:end], pos)])
        if named is None:
            return None
        name, arguments, repairs = named
        call, diagnostics = build_call(name, arguments, self.name, text[pos : close if close >= 0 else len(text)], repairs)
        if call is None:
            return Extraction(end, [], diagnostics)
        if close < 0:
            diagnostics.append(Diagnostic(DiagnosticKind.TRUNCATED, f"{self.name}: missing {closer}", text[pos:end][:300], self.name, pos))
        # read up to the first closer, so once that has arrived nothing later changes the call
        return Extraction(end, [call], diagnostics, final=close >= 0)

    def _named_by_attribute(self, text: str, pos: int) -> Extraction | None:
        """``<tool_call name="f">{"a": 1}</tool_call>`` (or an empty body): the tool named by the tag itself."""
        opener = _NAMED_OPENER.match(text, pos)
        if opener is None:
            return None
        name, closer = opener.group("name").strip(), f"</{opener.group('tag')}>"
        body = skip_space(text, opener.end(), len(text))
        if text.startswith(closer, body):  # a tool without arguments
            end = body + len(closer)
            return Extraction(end, [make_call(self.name, name, {}, text[pos:end], pos)], final=True)
        if body >= len(text):
            return unreadable(self.name, text, pos, len(text), f"output ended inside <{opener.group('tag')}> naming {name!r}", kind=DiagnosticKind.TRUNCATED)
        fenced = _FENCE_OPENER.match(text, body) if text.startswith("```", body) else None
        body = fenced.end() if fenced is not None else body  # ```json then the object, inside the tag
        if text[body] != "{":
            return None  # prose after the tag: markup being shown
        read = json_arguments_before(self.name, text, pos, body, closer, name)
        if isinstance(read, Extraction):
            return read
        arguments, end, repairs = read
        diagnostics: list[Diagnostic] = []
        call = make_call(self.name, name, arguments, text[pos:end], pos, repairs, diagnostics)
        after = skip_space(text, end, len(text))
        if fenced is not None and text.startswith("```", after):
            end = after = skip_space(text, after + 3, len(text))
        if text.startswith(closer, after):
            return Extraction(after + len(closer), [call], diagnostics, final=True)
        return Extraction(end, [call], diagnostics, closer=closer)  # the closer may be missing, or still arriving

    # -- streaming and rendering

    def settled(self, text: str, pos: int, trigger: str) -> bool:
        """Decided once the block closed, or once its body is plainly prose."""
        if trigger in _NAMED_OPENERS:
            opener = _NAMED_OPENER.match(text, pos)
            if opener is None:  # decided once the tag's '>' is written, or once it is too long
                return bounded_find(text, ">", pos, 300) != -1 or len(text) - pos > 300
            body = skip_space(text, opener.end(), len(text))
            if text.startswith("```", body):  # a fence: decided once what follows its line shows
                line_end = text.find("\n", body, body + 64)  # a longer label is no fence of a call
                if line_end == -1:
                    return len(text) - body >= 64
                return skip_space(text, line_end) < len(text) and _FENCE_OPENER.match(text, body) is None
            return body < len(text) and text[body] not in "{<`"
        if find_forward(text, f"</{trigger[1:-1]}>", pos) >= 0:
            return True
        body = skip_space(text, pos + len(trigger), len(text))
        if body >= len(text) or text[body] in "{[<":
            return False
        if any(start.match(text, body) is not None for start in (PYTHON_CALL_HEAD, YAML_NAME_START, BARE_NAME_THEN_KEY, QUOTED_JSON_START)):
            return False  # a Python-style call, one written as YAML or as a JSON string: decided by the closer (or the end)
        line_end = text.find("\n", body, body + 122)
        if line_end < 0:
            return not re.match(r"[A-Za-z_][\w.\-]*[ \t]*(?:\{.*)?$", text[body : body + 121])
        return _NAME_LINE.match(text, pos + len(trigger)) is None and len(text) > line_end + 1

    def render(self, calls: Sequence[ToolCall]) -> str:
        return "\n".join(
            "<tool_call>\n" + json.dumps({"name": c.name, "arguments": c.arguments}, ensure_ascii=False) + "\n</tool_call>"
            for c in calls
        )




def _clipped_closer_at(text: str, closer: str) -> int:
    """Where the output ends with the start of ``closer`` (``</too``), else its length."""
    at = text.rfind("<", max(0, len(text) - len(closer)))
    return at if at >= 0 and is_proper_prefix(text, at, closer) else len(text)


def _reopened_at_end(text: str, jend: int, opener: str) -> bool:
    """Is the opening tag written again after the JSON where the closing one belongs, with nothing after it?"""
    last = len(text)
    while last > jend and text[last - 1].isspace():
        last -= 1
    return text.endswith(opener, jend, last) and skip_space(text, jend, last) == last - len(opener)
