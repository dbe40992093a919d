"""An invoke written as a parameter: ``<parameter name="bash">`` where ``<invoke name="bash">`` belongs.

DeepSeek V4.1-Flash's DSML calls (see :mod:`utp.parsers.families.deepseek_dsml`)
collapse so in long agent sessions (pi-tool-repair's recorded session logs):
the invoke's opener comes out as a plain parameter tag naming the tool, the
arguments still follow as parameter elements, in DSML's spelling or without its
token, and the invoke's or the tool's closer may follow::

    <parameter name="bash">
    <｜DSML｜ parameter name="command" string="true">ls -la</｜DSML｜ parameter>
    </｜DSML｜ invoke>

Read for an offered tool, each argument element closed (a parameter tag inside a
real invoke is read with that invoke first: those families come earlier), or
with nothing in it but the invoke's closer (a call without arguments).
When raw text follows instead of elements (``<parameter name="bash">ls</｜DSML｜ parameter>``),
it is the tool's argument only when the tool has exactly one parameter; for a
tool with more, which one the text is for would be a guess, so it is reported.
An element never closed is reported as cut off; nothing of it runs.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from utp.parsers.base import CallFamily, Extraction, ParseContext, Trigger, register_family
from utp.parsers.families.anthropic_xml import STRING_ATTRIBUTE, flagged_value
from utp.parsers.families.deepseek_dsml import MARKS
from utp.parsers.familykit import make_call, sole_parameter, unreadable
from utp.parsers.textscan import skip_space
from utp.types import Diagnostic, DiagnosticKind, ToolCall

#: the DSML token before a tag name, as DeepSeek spells it (with V4.1's blank after it), or none
_PREFIX = "(?:(?:" + "|".join(re.escape(mark) for mark in MARKS) + ") ?)?"
#: an argument element's opener: its key, and DeepSeek's ``string`` attribute before or after it
_ELEMENT = re.compile(
    rf"<{_PREFIX}parameter(?:{STRING_ATTRIBUTE.format(n=1)})?\s+name\s*=\s*([\"'])(?P<key>(?:(?!\3)[^\n<>]){{1,256}})\3"
    rf"(?:{STRING_ATTRIBUTE.format(n=2)})?\s*>"
)
_ELEMENT_CLOSER = re.compile(rf"</{_PREFIX}parameter>")
#: what may close the collapsed call after its arguments: the invoke's closer, the tool's, the stray
#: parameter closer its opener would take, then the block's (``</｜DSML｜ calls>``)
_INVOKE_CLOSER = re.compile(rf"</{_PREFIX}invoke>|</parameter>")
#: the invoke's closer right after its opener: a call without arguments
_EMPTY_INVOKE_CLOSER = re.compile(rf"</{_PREFIX}invoke>")
_BLOCK_CLOSER = re.compile(rf"</{_PREFIX}(?! ?(?:invoke|parameter)>) ?[A-Za-z_]{{1,32}}>")
#: a tool name a trigger can be made of
_NAME = re.compile(r"[A-Za-z_][\w.\-]{0,127}")
#: the repair every such call records
COLLAPSED = "invoke written as a parameter tag naming the tool"


@register_family
class CollapsedInvokeFamily(CallFamily):
    name = "collapsed_invoke"
    #: below the invoke families: a parameter tag inside a real invoke is read with it first
    priority = 20
    summary = '<parameter name="TOOL"> where <invoke name="TOOL"> belongs, its arguments as parameter elements (DeepSeek V4.1 DSML collapsed)'

    def triggers_for(self, ctx: ParseContext | None) -> tuple[Trigger, ...]:
        """``<parameter name="NAME">`` for each offered tool named like an identifier."""
        if ctx is None or not ctx.has_tools:
            return ()
        names = [name for name in ctx.by_name if _NAME.fullmatch(name)]
        return tuple(Trigger(f'<parameter name="{name}">', from_tool_names=True) for name in names)

    def extract(self, text: str, pos: int, trigger: str, ctx: ParseContext) -> Extraction | None:
        name = trigger[len('<parameter name="') : -len('">')]
        tool = ctx.tool(name)
        if tool is None:
            return None
        cursor = skip_space(text, pos + len(trigger))
        arguments: dict = {}
        diagnostics: list[Diagnostic] = []
        repairs = [COLLAPSED]
        while (element := _ELEMENT.match(text, cursor)) is not None:
            closer = _ELEMENT_CLOSER.search(text, element.end())
            if closer is None:
                return unreadable(self.name, text, pos, len(text), f"output ended inside an argument of {name!r}", kind=DiagnosticKind.TRUNCATED)
            value, repair = flagged_value(text[element.end() : closer.start()], element, tool)
            arguments[element.group("key")] = value
            if repair:
                repairs.append(repair)
            cursor = skip_space(text, closer.end())
        emptied = _EMPTY_INVOKE_CLOSER.match(text, cursor) if not arguments else None
        if not arguments and emptied is None:
            return self._raw_text(text, pos, cursor, name, ctx)
        end = cursor if emptied is None else emptied.end()
        for closing in (_INVOKE_CLOSER, _BLOCK_CLOSER):
            matched = closing.match(text, skip_space(text, end))
            if matched is not None:
                end = matched.end()
        call = make_call(self.name, name, arguments, text[pos:end], pos, repairs, diagnostics)
        rest = text[skip_space(text, end) :]
        # more arguments or a closer may still be arriving: a stream reads the span again as it grows
        return Extraction(end, [call], diagnostics, provisional=not rest or rest.startswith("<") and ">" not in rest)

    def _raw_text(self, text: str, pos: int, at: int, name: str, ctx: ParseContext) -> Extraction | None:
        """The tool's one argument as raw text up to a parameter closer; reported when it cannot be placed."""
        closer = _ELEMENT_CLOSER.search(text, at)
        if closer is None:
            return None  # no closer: prose quoting the tag, or a call cut off before anything could run
        value = text[at : closer.start()].strip()
        parameter = sole_parameter(ctx, name)
        if not value or parameter is None:
            reason = "no arguments" if not value else "raw text, and the tool has more than one parameter to give it to"
            return unreadable(self.name, text, pos, closer.end(), f"{name!r} written as a parameter tag holding {reason}")
        diagnostics: list[Diagnostic] = []
        call = make_call(self.name, name, {parameter: value}, text[pos : closer.end()], pos, [COLLAPSED], diagnostics)
        return Extraction(closer.end(), [call], diagnostics)

    def settled(self, text: str, pos: int, trigger: str) -> bool:
        """No call (for an offered tool) only while no parameter closer has come: once one has, that is final."""
        return _ELEMENT_CLOSER.search(text, pos) is not None

    def render(self, calls: Sequence[ToolCall]) -> str:
        """The collapsed shape as DeepSeek V4.1 writes it: DSML arguments (text as is, anything else JSON), its invoke closer."""
        mark, blocks = MARKS[0], []
        for call in calls:
            elements = []
            for key, value in call.arguments.items():
                quote = "'" if '"' in key else '"'
                shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
                elements.append(f'<{mark}parameter name={quote}{key}{quote} string="{str(isinstance(value, str)).lower()}">{shown}</{mark}parameter>\n')
            blocks.append(f'<parameter name="{call.name}">\n{"".join(elements)}</{mark}invoke>')
        return "\n".join(blocks)
