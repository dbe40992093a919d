"""A call written as its name element and its arguments element, with no tag around them.

``<tool_name>get_weather</tool_name>`` then ``<arguments>{"city": "Paris"}</arguments>``
(or one element per argument inside ``<arguments>``; the name also in ``<function_name>``, or
in ``<function>`` as an identifier, koogagent's prompt format): the body of a Hermes-style
``<tool>`` call (:func:`utp.parsers.elements.named_element_call`) with its
wrapper left out, as models write when a client's prompt describes calls as
XML elements (mcp-client-for-ollama reads this shape). Several calls follow one
another, prose between them.

Arguments in JSON end where the JSON does (a value may quote the markup); the
elements' values are decoded when they are JSON (``<a>5</a>`` is 5), as in a
Hermes body.

The evidence is the name element starting its line, then either the arguments
element or, without one, the name of an offered tool (``<tool_name>X</tool_name>``
alone is a call without arguments, unless other elements follow it). In a
sentence it is prose, as it is when no arguments follow a name nobody offered,
and in a result the model made up itself (``<result>`` then ``<tool_name>``).
An arguments element the output ends inside is reported TRUNCATED, never run.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from utp.parsers.base import CallFamily, Extraction, ParseContext, register_family, static_triggers
from utp.parsers.elements import ARGUMENT_ELEMENTS, elements_to_dict, without_wrapper
from utp.parsers.familykit import json_arguments_before, make_call, unreadable
from utp.parsers.flatcalls import after_result_opener
from utp.parsers.names import resolve_name
from utp.parsers.textscan import find_forward, skip_space
from utp.types import Diagnostic, DiagnosticKind, ToolCall

#: the name elements read without a wrapper (``<name>`` alone is too common in XML data); in
#: ``<function>`` only an identifier (the tag also wraps JSON calls, Hermes-style, and GLM's pairs)
_NAME_TEXT = {"<tool_name>": r"[^<>\n]{1,200}", "<function_name>": r"[^<>\n]{1,200}", "<function>": r"[A-Za-z_][\w.:\-]{0,200}"}
TRIGGERS = tuple(_NAME_TEXT)
#: a name element's rest after its opening tag: a name and its closer
_NAME_REST = {trigger: rf"[ \t]*+{name}+[ \t]*+</{trigger[1:]}" for trigger, name in _NAME_TEXT.items()}
_NAMES = {trigger: re.compile(rf"{re.escape(trigger)}[ \t]*({name}?)[ \t]*</{trigger[1:]}") for trigger, name in _NAME_TEXT.items()}
#: the arguments element after the name (blank lines between them allowed)
_ARGUMENT_TAGS = tuple(f"<{element}>" for element in ARGUMENT_ELEMENTS)
_ARGUMENTS = re.compile(r"\s*<(" + "|".join(ARGUMENT_ELEMENTS) + r")>")
#: an element after a lone name that is neither arguments nor the next call
_OTHER_ELEMENT = re.compile(r"\s*<(?!tool_name>|function_name>|function>)")
_LINE_START = re.compile(r"(?:\A|\n)[ \t]*\Z")


@register_family
class NameElementFamily(CallFamily):
    name = "name_element"
    priority = 40
    declared_triggers = static_triggers(TRIGGERS, _NAME_REST)
    aliases = ("tool_name_xml",)
    summary = "<tool_name>NAME</tool_name><arguments>{json} or elements</arguments>, no tag around them"

    def extract(self, text: str, pos: int, trigger: str, ctx: ParseContext) -> Extraction | None:
        named = _NAMES[trigger].match(text, pos)
        if named is None or _LINE_START.search(text, max(0, pos - 200), pos) is None or after_result_opener(text, pos):
            return None  # in a sentence, or naming the tool of a result the model made up
        name = named.group(1)
        arguments = _ARGUMENTS.match(text, named.end())
        if arguments is None:
            if not resolve_name(name, ctx).known or _OTHER_ELEMENT.match(text, named.end()):
                return None  # a name beside other elements (``<stdout>``) is a record, not a call
            values, repairs, end = {}, [], named.end()
        else:
            closer = f"</{arguments.group(1)}>"
            body = skip_space(text, arguments.end())
            if text.startswith("{", body):  # JSON: its own end decides (a value may quote the closer)
                read = json_arguments_before(self.name, text, pos, body, closer, name)
                if isinstance(read, Extraction):
                    return read
                values, json_end, repairs = read
                end = skip_space(text, json_end)
                if end >= len(text):
                    return unreadable(self.name, text, pos, end, f"output ended inside the arguments of {name!r}", kind=DiagnosticKind.TRUNCATED)
                if not text.startswith(closer, end):
                    return unreadable(self.name, text, pos, json_end, f"text after the arguments of {name!r} before {closer}")
                end += len(closer)
            else:
                close = find_forward(text, closer, body)
                if close < 0:
                    return unreadable(self.name, text, pos, len(text), f"output ended inside the arguments of {name!r}", kind=DiagnosticKind.TRUNCATED)
                (values, repairs), end = without_wrapper(elements_to_dict(text[body:close])), close + len(closer)
        diagnostics: list[Diagnostic] = []
        call = make_call(self.name, name, values, text[pos:end], pos, repairs, diagnostics)
        if arguments is not None:
            return Extraction(end, [call], diagnostics, final=True)
        # a name alone rests on no arguments element coming: a stream waits while one still may
        at = skip_space(text, end)
        rest = text[at : at + max(map(len, _ARGUMENT_TAGS))]
        return Extraction(end, [call], diagnostics, provisional=any(tag.startswith(rest) for tag in _ARGUMENT_TAGS))

    def settled(self, text: str, pos: int, trigger: str) -> bool:
        """Settled once the name element closed and what follows it shows whether arguments come."""
        named = _NAMES[trigger].match(text, pos)
        if named is None:
            return find_forward(text, "\n", pos) != -1 or len(text) - pos > 240
        longest = max(map(len, _ARGUMENT_TAGS))
        return len(text) - skip_space(text, named.end()) >= longest

    def render(self, calls: Sequence[ToolCall]) -> str:
        return "\n".join(
            f"<tool_name>{call.name}</tool_name>\n<arguments>{json.dumps(call.arguments, ensure_ascii=False)}</arguments>" for call in calls
        )
