"""The bodies of a Hermes-style call tag that are not JSON: a Python-style call, or an element naming the tool.

``hermes`` reads a tag's JSON itself and hands these two here: models tuned on
pythonic data keep the tags around their habit, and models shown Cline-style XML
tools write the tool as an element inside them.
"""

from __future__ import annotations

import re

from utp.parsers.base import Extraction, ParseContext
from utp.parsers.callshape import build_call, unparseable
from utp.parsers.elements import OPEN_ELEMENT, child_elements
from utp.parsers.familykit import unreadable
from utp.parsers.pyliteral import LiteralError
from utp.parsers.pythoncalls import MAX_SPAN, any_name, bracket_end, build_python_calls, names_offered_tool, read_calls
from utp.parsers.textscan import find_forward, skip_space
from utp.types import Diagnostic, DiagnosticKind

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
    name = head.group(1)
    if not strong and not names_offered_tool(name, ctx):
        return None
    call_end = bracket_end(text, head.end() - 1, MAX_SPAN)
    if call_end < 0:  # the parenthesis never closes (before the span limit)
        end = close + len(closer) if close >= 0 else len(text)
        kind = DiagnosticKind.TRUNCATED if close < 0 and call_end == -1 else DiagnosticKind.UNPARSEABLE
        return unreadable(family, text, pos, end, f"call to {name!r} is not closed", kind=kind)
    after = skip_space(text, call_end, len(text))
    if text.startswith(closer, after):
        end, final, pending = after + len(closer), True, ""
    elif close >= 0 and text.find(opener, call_end, close) < 0:
        end, final, pending = close + len(closer), True, ""  # stray text before the closer belongs to the block
    else:
        end, final, pending = call_end, False, closer
    try:
        raws, repairs, failures = read_calls(text[cursor:call_end], lenient=any_name if strong else (lambda n: names_offered_tool(n, ctx)))
    except LiteralError as exc:
        return unreadable(family, text, pos, end, str(exc)) if strong else None
    calls, diagnostics = build_python_calls(family, raws, repairs, text[pos:end], pos, ctx)
    for failure in failures:
        diagnostics.append(unparseable(family, f"call to {failure.name!r} not read (not run): {failure.reason}", failure.source, pos))
    return Extraction(end, calls, diagnostics, final=final, closer=pending)


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
    if opener == f"<{name}>" or (not strong and ctx.tool(name) is None):
        return None
    reopened = find_forward(text, opener, element.end())
    bound = len(text) if reopened < 0 else reopened
    element_close = text.find(f"</{name}>", element.end(), bound)
    if element_close < 0:
        if not strong or reopened >= 0:
            return None
        reason = f"{family}: output ended inside <{name}>"
        return Extraction(len(text), [], [Diagnostic(DiagnosticKind.TRUNCATED, reason, text[pos : pos + 300], family, pos)])
    arguments = child_elements(text[element.end() : element_close])
    if arguments is None:
        return None  # prose or markup inside the element: not arguments
    element_end = element_close + len(name) + 3
    call, diagnostics = build_call(name, arguments, family, text[pos:element_end])
    if call is None:
        return Extraction(element_end, [], diagnostics)
    after = skip_space(text, element_end, len(text))
    if text.startswith(closer, after):
        return Extraction(after + len(closer), [call], diagnostics, final=True)
    return Extraction(element_end, [call], diagnostics, closer=closer)
