"""DeepSeek V3.2 / V4 / V4.1 "DSML" calls: Claude-style invoke markup behind a ``｜DSML｜`` tag prefix.

DeepSeek's reference encoders (``encoding/encoding_dsv32.py`` of
deepseek-ai/DeepSeek-V3.2, ``encoding/encoding_dsv4.py`` of DeepSeek-V4 and
``encoding/encoding.py`` of DeepSeek-V4.1-Flash) write::

    <｜DSML｜function_calls>
    <｜DSML｜invoke name="get_weather">
    <｜DSML｜parameter name="city" string="true">Paris</｜DSML｜parameter>
    <｜DSML｜parameter name="days" string="false">3</｜DSML｜parameter>
    </｜DSML｜invoke>
    </｜DSML｜function_calls>

V3.2 names the block ``function_calls``, V4 ``tool_calls``, V4.1 `` calls``
and spaces its tags too (``<｜DSML｜ invoke name=...>``, ``</｜DSML｜ parameter>``).
``string="true"`` marks a value written as is (kept verbatim unless the
tool's schema gives the property another type); ``string="false"`` a JSON value (numbers, booleans, arrays,
objects). The bars are U+FF5C. Real outputs also spell the token with ASCII
bars (``<|DSML|``, the "legacy" spelling vLLM accepts) and with doubled bars
(``<｜｜DSML｜｜``, seen from the chat.deepseek.com models) or spaced out (``< | DSML | invoke``), drop the block
wrapper (bare invokes) or misspell it (``<｜DSML｜toolcalls>``, ``<｜DSML｜tool>``
from DeepSeek-V4-Flash with speculative decoding, vLLM #56141); all of those
are read. SGLang's V3.2 detector and its V4.1 structural tag also put a JSON
object straight inside the invoke (``<｜DSML｜invoke name="f">{"a": 1}</｜DSML｜invoke>``);
that is read too. The invoke and parameter reading is Claude-style XML's
(:mod:`utp.parsers.families.anthropic_xml`), with this prefix and the
``string`` attribute.

GigaChat 3.5 writes the same markup behind ``｜GCML｜``
(``<｜GCML｜tool_calls><｜GCML｜invoke name="f"><｜GCML｜parameter name="k" string="true">…``,
vLLM's ``gigachat35`` parser); its token is read as DSML's.

A block is a call only with an invoke tag in it: a wrapper token followed by
anything else (prose quoting ``<｜DSML｜tool_calls>``, or DeepSeek-V4's
malformed ``<｜DSML｜toolcall>NAME`` + fenced JSON) stays content.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from utp.parsers.base import CallFamily, Extraction, ParseContext, Trigger, register_family
from utp.parsers.families.anthropic_xml import _INVOKE_TAIL, STRING_ATTRIBUTE, InvokeSyntax, flagged_value, json_invoke_body, read_invoke_block
from utp.parsers.textscan import is_proper_prefix, skip_space
from utp.types import ToolCall

#: the DSML token with each bar real outputs use: U+FF5C (the tokenizer's), ASCII, doubled, ASCII with a
#: blank each side (``< | DSML | invoke``, as a client that spaces the token out shows it) or inside
#: the bars only (``<| DSML | invoke``, a Hermes Agent gateway's log of DeepSeek; with the tokenizer's
#: bars too, ``<｜ DSML ｜invoke``, as Module-Engine's guide tests record it), doubled before and one
#: spaced after (``<｜｜DSML ｜ invoke``, deepseek-v4-flash's reply in rust_tools' tests), ASCII doubled
#: with a blank between every two (``< | | DSML | | invoke``, youqiAgent's tests); and
#: GigaChat 3.5's GCML token, which prefixes the same markup
MARKS = (
    "\uff5cDSML\uff5c", "|DSML|", "\uff5c\uff5cDSML\uff5c\uff5c", "||DSML||", " | DSML | ", "| DSML |", "\uff5c DSML \uff5c",
    "\uff5c\uff5cDSML \uff5c", " | | DSML | | ",
    "\uff5cGCML\uff5c", "|GCML|",
)
_MARK = "(?:" + "|".join(re.escape(mark) for mark in MARKS) + ")"
#: how much whitespace may sit between the block token and the first invoke
_LEADING_SPACE = 256
#: V4.1 puts one space between the token and each tag name
_INVOKE = re.compile(rf"<(?P<prefix>{_MARK} ?)invoke\s+name\s*=\s*([\"'])(?P<name>[^\"'\n<>]{{1,256}})\2\s*>")
#: ``name`` and an optional ``string`` attribute, in either order (a key may hold the other quote)
_PARAMETER = re.compile(
    rf"<{_MARK} ?parameter(?:{STRING_ATTRIBUTE.format(n=1)})?\s+name\s*=\s*([\"'])(?P<key>(?:(?!\3)[^\n<>]){{1,256}})\3"
    rf"(?:{STRING_ATTRIBUTE.format(n=2)})?\s*>"
)
#: the block token's name: ``function_calls`` (V3.2), ``tool_calls`` (V4), `` calls`` (V4.1) or a
#: misspelling of them; never a tag name (an invoke or parameter token without attributes)
_BLOCK = r"(?! ?(?:invoke|parameter)>) ?[A-Za-z_]{1,32}"
_WRAPPER = re.compile(_BLOCK + ">")
_CLOSER = re.compile(rf"</{_MARK}{_BLOCK}>")
#: scan lookahead after a trigger (``<`` and the token): ``extract`` returns None unless an invoke
#: tag (``_INVOKE``) starts at the trigger, or a block token does and an invoke tag follows it after
#: at most ``_LEADING_SPACE`` whitespace (``\s`` is ``str.isspace``); possessive, groups spelled
#: out (as in anthropic_xml's heads)
HEAD = (
    rf"(?:\x20?invoke\s{_INVOKE_TAIL}"
    rf"|(?!\x20?(?:invoke|parameter)>)\x20?[A-Za-z_]{{1,32}}+>\s{{0,{_LEADING_SPACE}}}+<{_MARK}\x20?invoke\s{_INVOKE_TAIL})"
)
#: streaming: text that an invoke tag may still grow from (``_INVOKE``'s proper prefixes past ``invoke``)
_INVOKE_PARTIAL = re.compile(
    rf"<{_MARK} ?invoke(?:\s++(?:n(?:a(?:m(?:e(?:\s*+(?:=(?:\s*+(?:([\"'])[^\"'\n<>]{{0,256}}+(?:\1\s*+)?)?)?)?)?)?)?)?)?)?\Z"
)
_INVOKE_STARTS = tuple(f"<{mark}{space}invoke" for mark in MARKS for space in ("", " "))
#: streaming: a block token's name still being written
_BLOCK_PARTIAL = re.compile(r" ?[A-Za-z_]{0,32}\Z")


SYNTAX = InvokeSyntax(_INVOKE, _PARAMETER, flagged_value, json_invoke_body)


@register_family
class DeepseekDsmlFamily(CallFamily):
    name = "deepseek_dsml"
    aliases = ("dsml", "deepseek_v32", "deepseek_v3_2", "deepseek_v4", "deepseek_v41")
    declared_triggers = tuple(Trigger(f"<{mark}", HEAD) for mark in MARKS)
    summary = '<｜DSML｜tool_calls><｜DSML｜invoke name="N"><｜DSML｜parameter name="K" string="true">v</｜DSML｜parameter></｜DSML｜invoke></｜DSML｜tool_calls>'

    def extract(self, text: str, pos: int, trigger: str, ctx: ParseContext) -> Extraction | None:
        wrapper = _WRAPPER.match(text, pos + len(trigger))
        cursor = pos if wrapper is None else skip_space(text, wrapper.end(), wrapper.end() + _LEADING_SPACE)

        def closed_at(at: int) -> int:  # also after bare invokes: the block token is never prose
            closer = _CLOSER.match(text, at)
            return -1 if closer is None else closer.end()

        return read_invoke_block(self.name, text, cursor, ctx, SYNTAX, closed_at)

    def settled(self, text: str, pos: int, trigger: str) -> bool:
        if _INVOKE.match(text, pos):
            return True
        if _may_become_invoke(text, pos):
            return False
        after = pos + len(trigger)
        wrapper = _WRAPPER.match(text, after)
        if wrapper is None:
            return _BLOCK_PARTIAL.match(text, after) is None
        cursor = skip_space(text, wrapper.end(), wrapper.end() + _LEADING_SPACE)
        if cursor >= len(text):
            return False
        return _INVOKE.match(text, cursor) is not None or not _may_become_invoke(text, cursor)

    def render(self, calls: Sequence[ToolCall]) -> str:
        """V4's block, laid out as ``encoding_dsv4.py`` writes it (newlines between tags only)."""
        mark = MARKS[0]
        invokes = []
        for call in calls:
            parameters = []
            for key, value in call.arguments.items():
                quote = "'" if '"' in key else '"'
                is_text = isinstance(value, str)
                shown = value if is_text else json.dumps(value, ensure_ascii=False)
                parameters.append(
                    f"<{mark}parameter name={quote}{key}{quote} string=\"{str(is_text).lower()}\">{shown}</{mark}parameter>"
                )
            invokes.append(f'<{mark}invoke name="{call.name}">\n' + "\n".join(parameters) + f"\n</{mark}invoke>")
        return f"<{mark}tool_calls>\n" + "\n".join(invokes) + f"\n</{mark}tool_calls>"


def _may_become_invoke(text: str, at: int) -> bool:
    """Streaming: could more text make an invoke tag match at ``at``?"""
    return any(is_proper_prefix(text, at, start) for start in _INVOKE_STARTS) or _INVOKE_PARTIAL.match(text, at) is not None
