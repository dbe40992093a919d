"""MiniMax's XML calls with every ``<`` and ``</`` lost: ``invoke name="f">`` … ``parameter>`` … ``invoke>``.

MiniMax-M2.x served from MLX quants (exo, mlx-lm) has been reported twice
writing its tool-call markup with the tag openers gone: ``<`` and ``</``
are tokens of their own there, and the detokenizer drops them::

    invoke name="get_weather">
    parameter name="location">Parisparameter>
    invoke>

(exo-explore/exo#1882, ml-explore/mlx-lm#1145). What is left is still the
markup's whole structure, so it is read as the invokes it was: a run of
``invoke name="NAME">`` blocks, each of ``parameter name="KEY">VALUE`` ending
at ``parameter>``, closed by ``invoke>`` (a ``minimax:tool_call>`` after the
last is the block's closer). Values are raw text typed by the tool's schema,
as in the intact markup.

Only where nothing else can be meant: where an answer's calls begin (its
start, or after a lead-in ending in ``:``), every name an offered tool's (so never without tools), and every block closed. An invoke
the output ends inside, or one that is not this structure, stays prose.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from utp.parsers.base import CallFamily, Extraction, ParseContext, Start, Trigger, register_family
from utp.parsers.familykit import make_call, render_value
from utp.parsers.layout import markup_text, unindented
from utp.parsers.pythoncalls import names_offered_tool
from utp.parsers.reasoning import begins_call_lines
from utp.parsers.textscan import find_forward
from utp.parsers.typedvalues import property_schema, typed_value
from utp.types import ToolCall

BLOCK = "minimax:tool_call>"
INVOKE = "invoke name="
_INVOKE = re.compile(r"""invoke name=\s*(?:"([^"\n<>]{1,256})"|'([^'\n<>]{1,256})')\s*>""")
_PARAMETER = re.compile(r"""parameter name=\s*(?:"([^"\n<>]{1,256})"|'([^'\n<>]{1,256})')\s*>""")
PARAMETER_END = "parameter>"
INVOKE_END = "invoke>"
_BLANKS = re.compile(r"\s*")
#: how far an invoke may run (its values are read whole)
MAX_SPAN = 256 * 1024


@register_family
class MinimaxStrippedFamily(CallFamily):
    name = "minimax_stripped"
    aliases = ("minimax_no_brackets",)
    summary = 'invoke name="NAME">parameter name="K">vparameter>invoke> (MiniMax XML with its < and </ lost, MLX)'

    def triggers_for(self, ctx: ParseContext | None) -> tuple[Trigger, ...]:
        """``invoke name="NAME"`` (either quote) for each offered tool, where an answer's calls may begin.

        ``invoke name=`` stands in every intact MiniMax block and in prose: searched for
        everywhere, it cost every flood of ``<minimax:tool_call>`` a second look at each unit.
        (A function of the names alone: scanners are cached by them.)
        """
        if ctx is None:
            return ()
        names = [name for name in ctx.by_name if name and '"' not in name and "'" not in name]
        return tuple(Trigger(f"{INVOKE}{quote}{name}{quote}", start=Start.ANSWER, from_tool_names=True) for name in names for quote in "\"'")

    def extract(self, text: str, pos: int, trigger: str, ctx: ParseContext) -> Extraction | None:
        if not ctx.has_tools or not begins_call_lines(text, pos):
            return None  # the answer's start, or after a lead-in (a stream watches everywhere)
        cursor = pos
        calls: list[ToolCall] = []
        end = cursor
        while (invoke := _INVOKE.match(text, cursor)) is not None:
            read = _invoke(text, invoke, ctx)
            if read is None:
                return None
            arguments, end = read
            name = invoke.group(1) or invoke.group(2)
            calls.append(make_call(self.name, name, arguments, text[invoke.start() : end], invoke.start()))
            cursor = _BLANKS.match(text, end).end()  # type: ignore[union-attr]
        if not calls:
            return None
        if text.startswith(BLOCK, cursor):  # the block token written again: its closer
            end = cursor + len(BLOCK)
        return Extraction(end, calls)

    def render(self, calls: Sequence[ToolCall]) -> str:
        return "\n".join(
            f'{INVOKE}"{call.name}">\n'
            + "".join(f'parameter name="{key}">{render_value(value)}{PARAMETER_END}\n' for key, value in call.arguments.items())
            + INVOKE_END
            for call in calls
        )


def _invoke(text: str, invoke: re.Match[str], ctx: ParseContext) -> tuple[dict[str, Any], int] | None:
    """The arguments of the invoke ``invoke`` opens and where its ``invoke>`` ends; None unless
    it names an offered tool and is that structure to its end."""
    name = invoke.group(1) or invoke.group(2)
    if not names_offered_tool(name, ctx):
        return None
    tool = ctx.tool(name)
    arguments: dict[str, Any] = {}
    cursor = invoke.end()
    limit = min(len(text), invoke.start() + MAX_SPAN)
    while True:
        cursor = _BLANKS.match(text, cursor).end()  # type: ignore[union-attr]
        if text.startswith(INVOKE_END, cursor):
            return arguments, cursor + len(INVOKE_END)
        parameter = _PARAMETER.match(text, cursor)
        if parameter is None:
            return None
        value_end = find_forward(text, PARAMETER_END, parameter.end())
        if value_end < 0 or value_end > limit:
            return None
        key = parameter.group(1) or parameter.group(2)
        raw = markup_text(unindented(text[parameter.end() : value_end]))
        arguments[key] = typed_value(raw, property_schema(tool, key), untyped="json")
        cursor = value_end + len(PARAMETER_END)
