"""A call in a Markdown code fence: ```` ```json\\n{"name": ..., "arguments": ...}\\n``` ````.

Chat-tuned models wrap JSON in a fence out of habit, and some templates ask
for ```` ```tool_call ```` / ```` ```tool_code ```` blocks. A fence in an
answer is usually a code sample, so a fence is a call only when its body is
call-shaped JSON (one object or a list) *and* the label says so
(``tool_call``, ``tool_code``, ``function_call``...) or the fence is the whole
response's point: it starts or ends the content. Under any other label
(```` ```xml ````) call JSON is a call only when the fence ends the
answer (a line of preamble may come first) and every name is an offered tool's.
Several call objects in one body (a line each, or separated by ``;`` or ``,``)
are each a call. A ```` ```yaml ```` fence (camel-ai's
MCP agent reads calls written so) is a call, placed as a JSON fence, when its
body is a YAML mapping (or list of them) shaped like call JSON, with its
arguments key, and every name is an offered tool's. A fence labelled ``tool NAME``
(xAI's Grok models) or ``tool_call:NAME`` holding an arguments object is NAME's call, for an offered
tool whose parameters the object's keys are. Python-style bodies in
```` ```tool_code ```` fences belong to the pythonic family, not here.
"""

from __future__ import annotations

import json
import re

import yaml
from collections.abc import Sequence

from utp.parsers.base import CallFamily, Extraction, ParseContext, register_family, static_triggers
from utp.parsers.callshape import calls_from_value, skip_ws
from utp.parsers.familykit import declares_all, make_call, read_json_at
from utp.parsers.flatcalls import flat_calls
from utp.parsers.leadins import ends_with_colon, introduces_a_call
from utp.parsers.names import NAMED_BY_ARGUMENTS, tool_fitting, tool_named_before
from utp.parsers.pythoncalls import names_offered_tool
from utp.parsers.jsonrepair import loads_lenient, strict_json_at
from utp.parsers.reasoning import REASONING_CLOSERS
from utp.parsers.textscan import find_forward, search_forward
from utp.parsers.yamlarguments import load_yaml
from utp.types import ToolCall

FENCE = "```"
#: labels that declare the fence a call
CALL_LABELS = frozenset({"tool_call", "tool_calls", "tool_code", "function_call", "function_calls", "tool_use", "tool", "functions"})
#: a call label however its words are joined (``tool-call``, ``toolcall``: browser-ai's parser accepts them)
_CALL_LABEL_SPELLINGS = {label.replace("_", ""): label for label in CALL_LABELS}
#: labels that allow a call when the placement says so
DATA_LABELS = frozenset({"", "json", "json5", "jsonc"})
#: labels of a YAML body: read as the same call shapes, only for offered tools
YAML_LABELS = frozenset({"yaml", "yml"})

#: a fence right after reasoning opens the answer


@register_family
class FencedFamily(CallFamily):
    name = "fenced"
    priority = 20
    #: an info string on the fence's line, then a body opening with ``{`` or ``[`` (scan lookahead)
    #: possessive: giving back cannot make a newline; no backtick, as in CommonMark's info string
    #: (``_label`` refuses one), checked first, so a run of backticks fails at its first character
    #: without trying each alternative
    declared_triggers = static_triggers((FENCE,), {FENCE: r"(?!`)(?:[^\n`]{0,60}+\n\s*+[{\[]|[ \t]*+(?i:ya?ml)[ \t]*+\n|[ \t]*+(?i:json)?[ \t]*+[{\[])"})
    aliases = ("markdown", "fenced_json", "code_block")
    summary = "```json fenced call JSON (also ```tool_call / ```tool_code labels)"

    def extract(self, text: str, pos: int, trigger: str, ctx: ParseContext) -> Extraction | None:
        if text.startswith("`", pos + len(FENCE)):
            return None  # a longer run of backticks: its last three open the fence, as the head says
        label, body_start, glued = _opening(text, pos)
        if label is None:
            return None
        close = _close(text, body_start, glued)
        if close >= 0:
            body_end, end = close, close + len(FENCE)
        else:  # never closed: the body runs to the end, or to a fence written again (a flood reads linearly)
            again = find_forward(text, FENCE, body_start)
            body_end = end = len(text) if again < 0 else again
        named = _TOOL_NAMED_LABEL.match(text, pos + len(FENCE))
        if named is not None and ctx.tool(named.group(1)) is not None:  # (``tool_call json``: a label, no tool)
            return _named_fence_call(self.name, text, pos, named.group(1), body_start, body_end, close >= 0, end, ctx)
        # any other label (``xml``, ``text``): only a fence that ends the answer, calling offered tools
        mislabelled = label not in CALL_LABELS and label not in DATA_LABELS and label not in YAML_LABELS
        # (an info string that is not one word, or backticks run on: only as the whole answer)
        if mislabelled and not (ctx.has_tools and _blank_after(text, end) and (label != "-" or _starts_content(text, pos))):
            return None
        body = text[body_start:body_end]
        if label in YAML_LABELS:
            return self._yaml_calls(text, pos, body, end, ctx) if close >= 0 else None
        first = skip_ws(body, 0)
        if first >= len(body) or body[first] not in "{[":
            return None
        # a fence a lead-in line introduces, prose after it: a call only of offered tools (else a sample shown)
        introduced = False
        if label not in CALL_LABELS and not (_starts_content(text, pos) or _blank_after(text, end) or _between_sentences(text, pos, end)):
            if not (ctx.has_tools and _introduced_as_used(text, pos, end)):
                return None
            introduced = True
        offered_only = mislabelled or introduced
        sequence = _call_sequence(self.name, body, require_arguments=label not in CALL_LABELS)
        if sequence is not None:
            if offered_only and not all(names_offered_tool(call.name, ctx) for call in sequence[0]):
                return None
            return Extraction(end, *sequence)
        try:
            value, repairs = loads_lenient(body)
        except ValueError:
            return None
        if value == [] and not repairs and (_starts_content(text, pos) or _blank_after(text, end)):
            return Extraction(end)  # "no calls" written as an empty fenced list: markup, not prose
        found = calls_from_value(value, self.name, body.strip(), repairs, require_arguments=label not in CALL_LABELS)
        if found is None and ctx.has_tools:  # an offered tool's call written flat (``{"service": "light.turn_on", …}``)
            found = flat_calls(value, self.name, body.strip(), repairs, ctx)
        if found is None and label in DATA_LABELS:
            found = _named_arguments(self.name, text, pos, value, repairs, body, close >= 0 and _blank_after(text, end), ctx)
        if found is None or (not found[0] and not found[1]):
            return None
        if offered_only and not (found[0] and all(names_offered_tool(call.name, ctx) for call in found[0])):
            return None
        return Extraction(end, found[0], found[1])

    def _yaml_calls(self, text: str, pos: int, body: str, end: int, ctx: ParseContext) -> Extraction | None:
        """A closed YAML fence placed as a call, whose mapping is call-shaped and names offered tools."""
        if not (_starts_content(text, pos) or _blank_after(text, end) or _between_sentences(text, pos, end)):
            return None
        try:
            value = load_yaml(body)
            json.dumps(value)  # dates and other non-JSON scalars: not arguments as written
        except (yaml.YAMLError, TypeError, ValueError):
            return None
        found = calls_from_value(value, self.name, body.strip(), [], require_arguments=True)
        if found is None or not found[0] or not all(names_offered_tool(call.name, ctx) for call in found[0]):
            return None
        return Extraction(end, found[0], found[1])

    def settled(self, text: str, pos: int, trigger: str) -> bool:
        label, body_start, glued = _opening(text, pos)
        if label is None:
            return "\n" in text[pos : pos + 64] or len(text) - pos > 64
        first = skip_ws(text, body_start)
        if label in YAML_LABELS:
            close = _closing_fence(text, body_start)
            return close >= 0 and not _blank_after(text, close + len(FENCE))
        if first < len(text) and text[first] not in "{[":
            return True
        close = _close(text, body_start, glued)
        return close >= 0 and not _blank_after(text, close + len(FENCE))

    def render(self, calls: Sequence[ToolCall]) -> str:
        items = [{"name": c.name, "arguments": c.arguments} for c in calls]
        body = json.dumps(items[0] if len(items) == 1 else items, ensure_ascii=False, indent=2)
        return f"```json\n{body}\n```"


#: a body glued to the opener on its line (```` ```json{...}``` ````, as AutoGPT's replies come):
#: the JSON label or none, then the value
_GLUED_BODY = re.compile(r"[ \t]*+((?i:json)?)[ \t]*+(?=[{\[])")


def _opening(text: str, pos: int) -> tuple[str | None, int, bool]:
    """The fence's label, where its body starts, and whether the body is glued to the opener."""
    glued = _GLUED_BODY.match(text, pos + len(FENCE))
    if glued is not None:
        return glued.group(1).lower(), glued.end(), True
    label, body_start = _label(text, pos)
    return label, body_start, False


def _close(text: str, body_start: int, glued: bool) -> int:
    """The closing fence: a glued body's is the next fence written, wherever it stands (``}```)."""
    return find_forward(text, FENCE, body_start) if glued else _closing_fence(text, body_start)


def _label(text: str, pos: int) -> tuple[str | None, int]:
    """The fence's info string (lower-case) and where its body starts; None if the line is not complete."""
    nl = text.find("\n", pos + 3, pos + 64)
    if nl < 0:
        return None, -1
    label = text[pos + 3 : nl].strip().lower()
    if "`" in label:
        return None, -1  # backticks on the opening line: not this fence's (the head agrees)
    if " " in label:
        return "-", nl + 1
    return _CALL_LABEL_SPELLINGS.get(label.replace("-", "").replace("_", ""), label), nl + 1


#: a closing fence: at a line's start after blanks (models indent it with the block they wrote)
_CLOSING_LINE = re.compile(r"\n[ \t]*+```")


#: a character that is not white space
_NON_SPACE = re.compile(r"\S")


def _blank_after(text: str, end: int) -> bool:
    """Is there nothing but white space after ``end``? (Without copying the rest: a flood of fences asks at each.)"""
    return _NON_SPACE.search(text, end) is None


#: a fence labelled with the tool it calls, the body its arguments (``tool file_write``: xAI's Grok
#: models, per zeroclaw's parser and its issue #1420; ``tool_call:write_file``, a call label and
#: the name joined by a colon, as coding agents' prompts ask)
_TOOL_NAMED_LABEL = re.compile(r"[ \t]*(?i:(?:tool|function)(?:[_\-]?call)?)(?:[ \t]+|[ \t]*:[ \t]*)([A-Za-z_][\w.\-]{0,127})[ \t]*\r?\n")


def _named_fence_call(family: str, text: str, pos: int, name: str, body_start: int, body_end: int, closed: bool, end: int, ctx: ParseContext) -> Extraction | None:
    """```` ```tool NAME ```` and an arguments object: NAME's call, for an offered tool whose
    parameters the object's keys are (a fence closed, or one the output ends inside)."""
    tool = ctx.tool(name)
    if tool is None or (not closed and end < len(text)):
        return None
    read = read_json_at(text, skip_ws(text, body_start), body_end)
    if read is None or type(read[0]) is not dict or not declares_all(read[0], tool):
        return None
    if text[read[1] : body_end].strip():
        return None  # more than the object in the fence
    diagnostics: list = []
    call = make_call(family, tool.name, read[0], text[pos:end], pos, ["the tool named by the fence's label"], diagnostics)
    return Extraction(end, [call], diagnostics)


def _named_arguments(family: str, text: str, pos: int, value: object, repairs: list[str], body: str, ends_answer: bool, ctx: ParseContext) -> tuple[list[ToolCall], list] | None:
    """A fence holding only an arguments object, ending the answer after a line that names the one
    offered tool those arguments fit ("I will use the get_weather tool." then a ```` ```json ```` fence of ``{"city": ...}``)."""
    if not ends_answer or repairs or type(value) is not dict or not value:
        return None
    name = tool_named_before(text, pos, set(value), ctx)
    if name is not None:
        return [make_call(family, name, value, body.strip(), pos)], []
    name = tool_fitting(value, ctx) if _starts_content(text, pos) else None  # the whole answer: the one tool it fits
    if name is None:
        return None
    diagnostics: list = []
    return [make_call(family, name, value, body.strip(), pos, [NAMED_BY_ARGUMENTS], diagnostics)], diagnostics


#: between call objects written one after another in one fence: blanks, then perhaps ``;`` or ``,``;
#: a comment may end a value's line (``{...}  # then make it executable``: Python's, the shell's, JavaScript's)
_SEQUENCE_GAP = re.compile(r"[ \t]*+(?:(?:#|//)[^\n]*+)?\s*+[;,]?+\s*+")


def _call_sequence(family: str, body: str, require_arguments: bool) -> tuple[list[ToolCall], list] | None:
    """The calls of a body holding two or more call-shaped JSON values one after another (a line
    each, or separated by ``;`` or ``,``): one value's reader would keep the first and drop the
    rest as trailing text. None unless every value is valid JSON and call-shaped."""
    calls: list[ToolCall] = []
    diagnostics: list = []
    at, count = skip_ws(body, 0), 0
    while at < len(body):
        read = strict_json_at(body, at, len(body)) if at < len(body) and body[at] in "{[" else None
        if read is None:
            return None
        found = calls_from_value(read[0], family, body[at : read[1]], [], require_arguments=require_arguments)
        if found is None or not found[0]:
            return None
        calls.extend(found[0])
        diagnostics.extend(found[1])
        at, count = _SEQUENCE_GAP.match(body, read[1]).end(), count + 1  # type: ignore[union-attr]
    return (calls, diagnostics) if count > 1 else None


def _closing_fence(text: str, body_start: int) -> int:
    """The closing fence starts a line, blanks aside (JSON strings cannot hold a raw newline, so never inside one)."""
    if text.startswith(FENCE, body_start):
        return body_start
    line = search_forward(text, _CLOSING_LINE, body_start)
    return -1 if line is None else line.end() - len(FENCE)


def _between_sentences(text: str, pos: int, end: int) -> bool:
    """A fence on its own lines after finished prose ("Sure.") is the reply's call.

    Prose ending in ``:`` introduces what follows ("The API takes:",
    "Example output:"), so such a fence is a sample being shown, not used
    (unless the lead-in says someone uses it: :func:`_introduced_as_used`).
    """
    return _on_own_lines(text, pos, end) and not ends_with_colon(text[max(0, pos - 240) : pos].rstrip())


def _introduced_as_used(text: str, pos: int, end: int) -> bool:
    """A fence on its own lines after a lead-in ending in ``:``, prose after it, where someone
    is said to act (see :func:`~utp.parsers.leadins.introduces_a_call`)."""
    return _on_own_lines(text, pos, end) and introduces_a_call(text, pos)


def _on_own_lines(text: str, pos: int, end: int) -> bool:
    """Does the fence from ``pos`` to ``end`` start a line and end one?"""
    return (pos == 0 or text[pos - 1] == "\n") and (end >= len(text) or text[end] in "\r\n")


def _starts_content(text: str, pos: int) -> bool:
    before = text[max(0, pos - 240) : pos]
    return pos == 0 or (pos <= 240 and not before.strip()) or before.rstrip().endswith(REASONING_CLOSERS)
