"""The bodies of a Hermes-style call tag that are not JSON: a Python-style call, an element naming the tool,
YAML lines, or the call's JSON serialised once more as a JSON string.

``hermes`` reads a tag's JSON itself and hands these two here: models tuned on
pythonic data keep the tags around their habit, and models shown Cline-style XML
tools write the tool as an element inside them.
"""

from __future__ import annotations

import json
import re
import textwrap

from utp.parsers.base import STREAM_LOOKAHEAD, Extraction, ParseContext
from utp.parsers.callshape import build_call, calls_from_value, unparseable
from utp.parsers.elements import NAME_ELEMENTS, OPEN_ELEMENT, child_elements, named_element_call
from utp.parsers.familykit import make_call, unreadable
from utp.parsers.jsonrepairnames import DOUBLE_ENCODED
from utp.parsers.pyliteral import LiteralError
from utp.parsers.pythoncalls import MAX_SPAN, any_name, bracket_end, build_python_calls, names_offered_tool, read_calls
from utp.parsers.textscan import find_forward, skip_space
from utp.parsers.yamlarguments import yaml_arguments
from utp.types import Diagnostic, DiagnosticKind, ToolCall

#: a Python-style call opening a tag's body: ``get_weather(``
PYTHON_CALL_HEAD = re.compile(r"([A-Za-z_][\w.]{0,256})[ \t]*\(")
#: after the element naming the tool: a parameter element, the element's closer, or the end
_PARAMETERS_NEXT = re.compile(r"\s*+(?:<|\Z)")


def python_body(family: str, text: str, pos: int, cursor: int, close: int, opener: str, closer: str, strong: bool, ctx: ParseContext) -> Extraction | None:
    """``<tool_call>get_weather(city="Paris")</tool_call>``: a Python-style call in the tag.

    Small models tuned on pythonic data keep the Hermes tags around their
    habit (so do several published fine-tuning formats). The call is read
    as the pythonic family reads one: literals only, nothing evaluated,
    positional arguments mapped by the tool's schema. Under a weak tag it
    must name an offered tool.
    """
    head = PYTHON_CALL_HEAD.match(text, cursor)
    assert head is not None
    name = _called_name(text, head)
    if not strong and not names_offered_tool(name, ctx):
        return None
    call_end = bracket_end(text, head.end() - 1, MAX_SPAN)
    if call_end < 0:  # the parenthesis never closes (before the span limit)
        end = close + len(closer) if close >= 0 else len(text)
        kind = DiagnosticKind.TRUNCATED if close < 0 and call_end == -1 else DiagnosticKind.UNPARSEABLE
        return unreadable(family, text, pos, end, f"call to {name!r} is not closed", kind=kind)
    call_end, one_per_line, line_open = _more_call_lines(text, call_end, close, opener)
    after = skip_space(text, call_end, len(text))
    if text.startswith(closer, after):
        end, final, pending = after + len(closer), True, ""
    elif absorbs_stray_text(text, call_end, close, closer, opener):
        end, final, pending = close + len(closer), True, ""
    else:
        end, final, pending = call_end, False, closer
    try:
        raws, repairs, failures = read_calls(
            text[cursor:call_end], one_per_line, lenient=any_name if strong else (lambda n: names_offered_tool(n, ctx))
        )
    except LiteralError as exc:
        return unreadable(family, text, pos, end, str(exc)) if strong else None
    calls, diagnostics = build_python_calls(family, raws, repairs, text[pos:end], pos, ctx)
    for failure in failures:
        diagnostics.append(unparseable(family, f"call to {failure.name!r} not read (not run): {failure.reason}", failure.source, pos))
    # an open tag whose text may still grow another call line: a stream reads it again as it grows
    provisional = close < 0 and (line_open or _CALL_LINE_SO_FAR.match(text, call_end) is not None)
    return Extraction(end, calls, diagnostics, final=final, closer=pending, provisional=provisional)


def absorbs_stray_text(text: str, body_end: int, close: int, closer: str, opener: str) -> bool:
    """Does the block's closer end it after stray text (``{…}<|im_end|></tool_call>``)?

    Only when the closer is complete within a stream's lookahead of the body's
    end and the tag does not open again first: a stream decides the call once
    the lookahead has passed, so a closer further on would be read one-shot but
    not streamed. Past that bound the call ends with its body and the rest is
    the answer's text.
    """
    return 0 <= close and close + len(closer) - body_end <= STREAM_LOOKAHEAD and text.find(opener, body_end, close) < 0


#: a line that opens another call in the same tag (``print(default_api.run_app())`` under the first)
_CALL_LINE_START = re.compile(r"[ \t]*+\r?\n\s*+([A-Za-z_][\w.]{0,256})[ \t]*\(")
#: what may still become such a line as the text grows: the text ends before its parenthesis
_CALL_LINE_SO_FAR = re.compile(r"[ \t]*+(?:\r?\n\s{0,64}+(?:[A-Za-z_][\w.]{0,256}+[ \t]*+)?)?\Z")


def _called_name(text: str, head: re.Match[str]) -> str:
    """The name a call head calls: inside ``print(…)`` (Gemini's tool_code), the call it prints."""
    if head.group(1) == "print" and (inner := PYTHON_CALL_HEAD.match(text, skip_space(text, head.end()))) is not None:
        return inner.group(1)
    return head.group(1)


def _more_call_lines(text: str, call_end: int, close: int, opener: str) -> tuple[int, bool, bool]:
    """Where the tag's calls end when more follow on lines of their own (``tool_code`` writes one per line),
    whether there are several, and whether the text ends inside the next one's parentheses. Each line
    closes its parenthesis before the tag's closer, or before the tag written again when it is left
    open (so over a flood of open tags the scans never overlap)."""
    limit = close if close >= 0 else len(text)
    reopened = find_forward(text, opener, call_end)
    if 0 <= reopened < limit:
        limit = reopened
    several = False
    while (line := _CALL_LINE_START.match(text, call_end, limit)) is not None:
        paren = line.end() - 1
        end = bracket_end(text, paren, min(MAX_SPAN, limit - paren))
        if end < 0 or end > limit:
            return call_end, several, end == -1 and limit == len(text)
        call_end, several = end, True
    return call_end, several, False


def named_element_body(family: str, text: str, pos: int, cursor: int, opener: str, closer: str, strong: bool, ctx: ParseContext) -> Extraction | None:
    """``<tool_call><get_weather><city>Paris</city></get_weather></tool_call>``: the tool named by an element.

    What models write after seeing Cline-style XML tools in a Hermes
    template: the element is the tool, its children the arguments. Under
    a weak tag the element must name an offered tool. The element's
    closing tag is looked for only up to where the opener comes again,
    so a flood of openers costs linear time.
    """
    element = OPEN_ELEMENT.match(text, cursor)
    if element is None or _PARAMETERS_NEXT.match(text, element.end()) is None:
        return None
    name = element.group(1)
    if opener == f"<{name}>" or name in NAME_ELEMENTS or (not strong and ctx.tool(name) is None):
        return None  # (``<name></name>`` left empty names no tool called "name")
    reopened = find_forward(text, opener, element.end())
    bound = len(text) if reopened < 0 else reopened
    element_close = text.find(f"</{name}>", element.end(), bound)
    if element_close < 0:
        if not strong or reopened >= 0:
            return None
        reason = f"{family}: output ended inside <{name}>"
        return Extraction(len(text), [], [Diagnostic(DiagnosticKind.TRUNCATED, reason, text[pos : pos + 300], family, pos)])
    element_end = element_close + len(name) + 3
    if name in _CALL_WRAPPERS:  # ``<tool_call><function_call><name>f</name><arguments>…``: the call wrapped twice
        try:
            wrapped = named_element_call(text, element.end(), element_close, element_close)
        except ValueError as exc:
            return Extraction(element_end, [], [unparseable(family, str(exc), text[pos:element_end], pos)])
        if wrapped is not None:
            return _closed_by(closer, text, element_end, *build_call(wrapped[0], wrapped[1], family, text[pos:element_end], [*wrapped[2], f"the call wrapped again in <{name}>"]))
    arguments = child_elements(text[element.end() : element_close])
    if arguments is None:
        return None  # prose or markup inside the element: not arguments
    call, diagnostics = build_call(name, arguments, family, text[pos:element_end])
    return _closed_by(closer, text, element_end, call, diagnostics)


#: call tags a model may write inside another call tag, the name and arguments as their elements
_CALL_WRAPPERS = frozenset(("function_call", "tool_call", "tool_use", "invoke", "call"))


def _closed_by(closer: str, text: str, element_end: int, call: ToolCall | None, diagnostics: list[Diagnostic]) -> Extraction:
    """The call read from an element inside a call tag, its span taking the tag's closer when it follows."""
    if call is None:
        return Extraction(element_end, [], diagnostics)
    after = skip_space(text, element_end, len(text))
    if text.startswith(closer, after):
        return Extraction(after + len(closer), [call], diagnostics, final=True)
    return Extraction(element_end, [call], diagnostics, closer=closer)


#: a YAML body's first line naming the tool (``name: read_file``), then its ``key: value`` lines
#: (or the name alone on that line, ``Read`` then ``file_path: a.py``, as a Notion proxy's prompt asks)
_YAML_NAME_LINE = re.compile(r"(?:(?:name|tool|tool_name)[ \t]*+:[ \t]*+)?([A-Za-z_][\w.\-]{0,127}+)[ \t]*+\r?\n")
#: a bare name's line followed by a ``key:`` line, or by the start of one the text ends inside (streaming: wait for the closer)
BARE_NAME_THEN_KEY = re.compile(r"[A-Za-z_][\w.\-]{0,127}+[ \t]*+\r?\n[ \t]*+[A-Za-z_][\w\-]{0,100}+(?:[ \t]*+:|\Z)")
#: how such a body begins (streaming: a tag whose body begins so is decided by its closer)
YAML_NAME_START = re.compile(r"(?:name|tool|tool_name)[ \t]*+:")
#: the arguments under a key of their own, indented below it (``arguments:`` then ``  path: a.js``)
_YAML_ARGUMENTS_KEY = re.compile(r"[ \t]*+(?:arguments|args|parameters|params|input)[ \t]*+:[ \t]*+\r?\n")


def yaml_body(family: str, text: str, pos: int, cursor: int, close: int, closer: str, ctx: ParseContext) -> Extraction | None:
    """``<tool>\nname: read_file\npath: src/a.js\n</tool>``: the call written as YAML inside the tag.

    Agents that describe their tools in YAML get calls back in it: the name's
    line first (``name: read_file``, or the name alone followed by arguments), then the arguments as ``key: value`` lines (or indented under
    ``arguments:``). A call only of an offered tool whose parameters every key
    is, in a closed tag (a stream waits for the closer); the name alone is a
    call without arguments, but under ``<tools>``, where prompts list tools.
    """
    line = _YAML_NAME_LINE.match(text, cursor, close) if close >= 0 else None
    tool = ctx.tool(line.group(1)) if line is not None else None
    if tool is None:
        return None
    body = text[line.end() : close]
    bare = line.group().strip() == line.group(1)
    if bare and not body.strip():
        return None  # the name alone on its line: the name-alone reading decides
    if not body.strip() and closer == "</tools>":
        return None  # a tool's name alone under <tools> is how prompts list tools, not a call
    nested = _YAML_ARGUMENTS_KEY.match(body)
    if nested is not None:
        body = body[nested.end() :]
    arguments = yaml_arguments(textwrap.dedent(body), tool) if body.strip() else {}
    if arguments is None or bare and not arguments:
        return None
    end = close + len(closer)
    diagnostics: list[Diagnostic] = []
    call = make_call(family, tool.name, arguments, text[pos:end], pos, ["the call written as YAML"], diagnostics)
    return Extraction(end, [call], diagnostics)



#: how a body written as one JSON string holding the call's JSON begins (``"{\\"name\\": …``); a stream
#: decides such a tag by its closer
QUOTED_JSON_START = re.compile(r'"\s*+[{\[]')
_DECODER = json.JSONDecoder()


def quoted_json_body(family: str, text: str, pos: int, cursor: int, close: int, closer: str) -> Extraction | None:
    """``<tool_call>"{\\"name\\": \\"f\\", …}"</tool_call>``: the call's JSON serialised once more.

    A model that saw calls travel as strings (arguments are a JSON string on
    OpenAI's wire) may encode the whole call the same way. The body up to the
    closer must be exactly one JSON string whose text is call-shaped JSON; the
    decoding is recorded as a repair. Only in a closed tag: a stream waits.
    """
    if close < 0:
        return None
    try:  # decoded in place: a flood of such openers before one closer costs no copy of the text each
        inner, end = _DECODER.raw_decode(text, cursor)
        if end > close or skip_space(text, end, close) < close:
            return None
        value = json.loads(inner) if type(inner) is str and inner.lstrip()[:1] in ("{", "[") else None
    except ValueError:
        return None
    found = calls_from_value(value, family, text[cursor:end], [DOUBLE_ENCODED]) if value is not None else None
    return Extraction(close + len(closer), *found) if found is not None and found[0] else None
