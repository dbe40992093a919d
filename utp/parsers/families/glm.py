"""GLM-4.5 / 4.6 / 4.7 calls: ``<tool_call>NAME<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>``.

The name is bare text right after ``<tool_call>`` (GLM-4.5/4.6 put a newline
after it, 4.7 does not); each argument is a key/value tag pair whose value is
raw text typed by the tool's schema, or read as JSON when it is JSON and the
schema does not say. The opener is shared with Hermes (``<tool_call>{json}``)
and Qwen3-Coder (``<tool_call><function=...>``): this family only claims a body
that is a bare name followed by ``<arg_key>`` or the close.

GLM-4 (glm-4-9b-chat, GLM-4-0414) calls a tool with a whole answer of two
parts: the tool's name on the first line, its arguments as a JSON object after
it (its template's ``<|assistant|>NAME\n{...}``; BFCL's GLM handler reads the
same). Read only for an offered tool and only when nothing else is in the
answer, so a line naming a tool before some JSON in prose stays prose.

GLM-4.7 and GLM-5 sometimes damage the name line: a stray closing tag right
after the name (``<tool_call>tool_12</arg_value></tool_call>``, mostly on calls
without arguments), or the first key glued to the name with its opening tag
missing (``<tool_call>send_command_to_shellcommand</arg_key><arg_value>…``).
The stray tag is dropped; a glued key is split off only where an offered
tool's name is the one longest prefix of the glued word. Either is a repair,
named on the call.

``<tool_call>`` and ``</tool_call>`` are special tokens in GLM's vocabulary, so a
server that skips special tokens leaves ``NAME<arg_key>k</arg_key><arg_value>v</arg_value>``
(or the name on its own line first). For an offered tool's name followed by
its first key, the key/value pairs that follow are read as that call.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from utp.parsers.base import Extraction, ParseContext, Start, Trigger, register_family, static_triggers
from utp.parsers.callshape import ANNOUNCED_CALL, announced_call_arguments
from utp.parsers.familykit import clip, ended_before, make_call, read_json_at, unreadable
from utp.parsers.keyvalue import NAME_ELEMENT_HEAD, KeyValueFamily, KeyValueSyntax, name_pattern, render_key_value
from utp.parsers.nestedelements import ElementMarkup, ElementsBroken, ElementsCut, as_object, read_elements
from utp.parsers.reasoning import call_list_starts
from utp.parsers.textscan import find_forward, skip_space
from utp.parsers.typedvalues import property_schema, typed_value
from utp.types import Diagnostic, DiagnosticKind, ToolCall

OPEN = "<tool_call>"
CLOSE = "</tool_call>"
KEY, KEY_END = "<arg_key>", "</arg_key>"
VALUE, VALUE_END = "<arg_value>", "</arg_value>"
#: Hunyuan (HY v3) writes this between the name and the first key, and groups its calls
SEPARATOR = "<tool_sep>"
GROUP_OPEN, GROUP_CLOSE = "<tool_calls>", "</tool_calls>"

SYNTAX = KeyValueSyntax(OPEN, CLOSE, KEY, KEY_END, VALUE, VALUE_END, name_pattern(r"[ \t]*", KEY, CLOSE, SEPARATOR), separator=SEPARATOR, strip_one_line=True)
#: after the group opener, the end of the text (truncated), or a call opener and a bare name's
#: first character, or the end of the text inside the name or the tag after it (truncated); Jamba's ``<tool_calls>[...]`` and
#: Hermes' ``<tool_call>{...}`` are not ours
_GROUP_HEAD = (
    r"\s*+(?:\Z|" + re.escape(OPEN) + r"""(?:[ \t]*+[^\s<>{}\[\]"']|\s*+[^\s<>{}\[\]"']{0,256}+\s*+(?:<[^<>\s]{0,40}+)?\Z))"""
)


#: a stray closing tag (or several) between the name and the first key or the close
_STRAY_AFTER_NAME = re.compile(
    r"""[ \t]*+([^\s<>{}\[\]"']{1,256}+)((?:\s*+(?:</arg_key>|</arg_value>))+)\s*+(?=<arg_key>|</tool_call>)"""
)
#: a bare name's first character (what a damaged name line starts with too)
_NAME_START = re.compile(r"""[ \t]*+[^\s<>{}\[\]"']""")
#: the name written in an element of its own (``<function>bash</function>`` then the pairs)
_NAME_ELEMENT_START = re.compile(NAME_ELEMENT_HEAD)
#: the name, then an element named by a key (``get_weather<city>``): the key in group 2
#: the name, then a first argument element whose value is written as an attribute's: ``NAME<city="``
_NAME_THEN_BENT = re.compile(r"""[ \t]*+([^\s<>{}\[\]"']{1,256}+)\s*+(?=<[A-Za-z_][\w.\-]{0,255}+=")""")
#: one such element: ``<city="Paris"</city>`` (or closed as ``>`` or ``/>``)
_BENT_ELEMENT = re.compile(r"""\s*+<([A-Za-z_][\w.\-]{0,255}+)="([^"\n]{0,4096}+)"\s*+(?:</\1>|/?>)""")
_NAME_THEN_ELEMENT = re.compile(r"""[ \t]*+([^\s<>{}\[\]"']{1,256}+)\s*+<([A-Za-z_][\w.\-]{0,255}+)>""")
#: the name and the first key glued, the key's opening tag missing
_GLUED_KEY = re.compile(r"""[ \t]*+([^\s<>{}\[\]"']{2,256}+)</arg_key>""")
#: the name, a blank, then the first key, its opening tag missing
_SPACED_KEY = re.compile(r"""[ \t]*+([^\s<>{}\[\]"']{1,256}+)[ \t]++([^\s<>{}\[\]"']{1,256}+)</arg_key>""")


@register_family
class GlmFamily(KeyValueFamily):
    name = "glm"
    syntax = SYNTAX
    group = (GROUP_OPEN, GROUP_CLOSE)
    #: between qwen3_coder and hermes on the shared <tool_call>
    priority = 65
    #: the bare name's first character (scan lookahead)
    declared_triggers = static_triggers((GROUP_OPEN, OPEN), {OPEN: r"[ \t]*[^\s<>{}\[\]\"']|" + NAME_ELEMENT_HEAD, GROUP_OPEN: _GROUP_HEAD})
    aliases = ("glm4", "glm45", "glm47", "glm4_moe", "hunyuan_v3", "hy_v3")
    summary = "GLM-4.5+: <tool_call>NAME<arg_key>k</arg_key><arg_value>v</arg_value></tool_call> (Hunyuan: NAME<tool_sep>, in <tool_calls>)"

    def triggers_for(self, ctx: ParseContext | None) -> tuple[Trigger, ...]:
        """Also ``NAME`` and a line break, for each offered tool: GLM-4's answer begins so (the
        tool's name only as a word of its own)."""
        if ctx is None:
            return self.declared_triggers
        names = [name for name in ctx.by_name if name and not any(ch.isspace() for ch in name)]
        answers = (Trigger(f"{name}\n", start=Start.ANSWER, from_tool_names=True) for name in names)
        stripped = (Trigger(f"{name}{between}{KEY}", _STRIPPED_HEAD, Start.WORD, from_tool_names=True) for name in names for between in ("", "\n", "\r\n"))
        return (*self.declared_triggers, *answers, *stripped)

    def extract(self, text: str, pos: int, trigger: str, ctx: ParseContext) -> Extraction | None:
        if trigger.endswith(KEY):
            return self._stripped(text, pos, trigger[: -len(KEY)].rstrip("\r\n"), ctx)
        if trigger not in _OWN:
            if text.startswith(KEY, skip_space(text, pos + len(trigger))):
                return self._stripped(text, pos, trigger[:-1], ctx)
            return self._name_line_answer(text, pos, trigger, ctx)
        return super().extract(text, pos, trigger, ctx)

    def _stripped(self, text: str, pos: int, name: str, ctx: ParseContext) -> Extraction | None:
        """``NAME<arg_key>…</arg_value>`` with the call tokens stripped: the pairs that follow the name."""
        end = _pairs_end(text, pos + len(name))
        if end < 0:
            return None
        mended = OPEN + text[pos:end] + CLOSE
        found = _mended(self, mended, pos, ctx, -len(OPEN) - len(CLOSE), "the <tool_call> tokens were stripped")
        if found is not None:
            over = _run_over(text, end)
            found.final, found.provisional = over, not over  # another pair may still be coming
        return found

    def read_call(self, text: str, pos: int, ctx: ParseContext) -> Extraction | None:
        """A call; failing that, one whose name line is damaged (see the module docstring)."""
        if _NAME_START.match(text, pos + len(OPEN)) is None and _NAME_ELEMENT_START.match(text, pos + len(OPEN)) is None:
            return None  # a JSON or element body: another family's (the name pattern needs this start too)
        found = super().read_call(text, pos, ctx)
        if found is not None:
            return found
        close, reopened = find_forward(text, CLOSE, pos + len(OPEN)), find_forward(text, OPEN, pos + len(OPEN))
        body = pos + len(OPEN)
        if close < 0 and reopened < 0:
            return self._element_arguments(text, pos, body, close, ctx)  # the output ended after its last element
        if close < 0 or 0 <= reopened < close:
            return None  # only a call that closes is mended (and each is read once: linear)
        stray = _STRAY_AFTER_NAME.match(text, body, close + len(CLOSE))
        if stray is not None:
            mended = OPEN + stray.group(1) + text[stray.end() : close + len(CLOSE)]
            return _mended(self, mended, pos, ctx, stray.end() - stray.end(1), f"dropped {stray.group(2).strip()!r} after the name")
        elements = self._element_arguments(text, pos, body, close, ctx) or self._bent_elements(text, pos, body, close, ctx)
        if elements is not None:
            return elements
        split = _first_key_without_opener(text, body, close, ctx)
        if split is None:
            return None
        tool, key, key_end, repair = split
        mended = OPEN + tool + KEY + key + text[key_end : close + len(CLOSE)]
        return _mended(self, mended, pos, ctx, (key_end - body) - len(tool + KEY + key), repair)

    def _element_arguments(self, text: str, pos: int, body: int, close: int, ctx: ParseContext) -> Extraction | None:
        """``<tool_call>NAME<city>Paris</city></tool_call>``: each argument an element named by its key.

        The name line of GLM's call, then the arguments as MiniMax-M3 and Cline
        spell them; read for an offered tool whose first element is one of its
        parameters (nested elements are objects, leaves typed by the schema).
        ``close`` is the call's closer, or -1 when the output ended before one:
        then the call is read when its last element is whole (as any call cut
        after a whole value is), with that repair recorded.
        """
        cut = close < 0  # the output ended inside the call: read only up to a whole last element
        head = _NAME_THEN_ELEMENT.match(text, body, len(text) if cut else close)
        tool = ctx.tool(head.group(1)) if head is not None else None
        if head is None or tool is None or head.group(2) not in tool.properties:
            return None
        source = text.rstrip() + CLOSE if cut else text
        try:
            pairs, end = read_elements(ElementMarkup("", CLOSE), source, head.start(2) - 1, CLOSE, tool.parameters)
        except (ElementsCut, ElementsBroken):
            if cut:  # the output ended inside an element: a value cut in half is reported, never run
                return unreadable(self.name, text, pos, len(text), f"output ended inside the call to {tool.name!r}", kind=DiagnosticKind.TRUNCATED)
            return None
        diagnostics: list[Diagnostic] = []
        repairs = ["arguments written as elements named by their keys, not <arg_key>/<arg_value> pairs"]
        if cut:
            end, repairs = len(text), [*repairs, ended_before(CLOSE)]
        call = make_call(self.name, tool.name, as_object(pairs, tool.parameters), text[pos:end], pos, repairs, diagnostics)
        return Extraction(end, [call], diagnostics, final=not cut, provisional=cut)  # cut: another element may follow

    def _bent_elements(self, text: str, pos: int, body: int, close: int, ctx: ParseContext) -> Extraction | None:
        """``<tool_call>NAME<city="Paris"</city></tool_call>``: each argument an element whose value is written
        as an attribute's, its ``>`` left out (GLM-4.7-Flash's drift); for an offered tool whose parameters the keys are."""
        head = _NAME_THEN_BENT.match(text, body, close)
        tool = ctx.tool(head.group(1)) if head is not None else None
        if head is None or tool is None:
            return None
        values: dict[str, str] = {}
        at = head.end(1)
        while (pair := _BENT_ELEMENT.match(text, at, close)) is not None:
            if pair.group(1) not in tool.properties or pair.group(1) in values:
                return None
            values[pair.group(1)] = pair.group(2)
            at = pair.end()
        if not values or skip_space(text, at, close) < close:
            return None
        end = close + len(CLOSE)
        arguments = {key: typed_value(value, property_schema(tool, key)) for key, value in values.items()}
        diagnostics: list[Diagnostic] = []
        call = make_call(self.name, tool.name, arguments, text[pos:end], pos, ["arguments written as <key=\"value\"</key> elements"], diagnostics)
        return Extraction(end, [call], diagnostics, final=True)

    def _name_line_answer(self, text: str, pos: int, trigger: str, ctx: ParseContext) -> Extraction | None:
        """GLM-4's ``NAME\n{...}``: the whole answer, for an offered tool; several such pairs, one
        after another, for several calls (GLM-4-0414's parallel calls)."""
        if pos not in call_list_starts(text):
            return None
        calls: list[ToolCall] = []
        diagnostics: list[Diagnostic] = []
        name, at = trigger[:-1], pos
        while True:
            body = skip_space(text, at + len(name))
            got = read_json_at(text, body) if text.startswith("{", body) else None
            if got is None or not isinstance(got[0], dict):
                return None
            value, end, repairs = got
            inner = announced_call_arguments(value, name, ctx.tool(name))
            if inner is not None:
                value, repairs = inner, [*repairs, ANNOUNCED_CALL]
            calls.append(make_call(self.name, name, value, text[at:end], at, repairs, diagnostics))
            at = skip_space(text, end)
            if at >= len(text):
                return Extraction(len(text), calls, diagnostics)
            following = _NEXT_NAME_LINE.match(text, at)
            if following is None or ctx.tool(following.group(1)) is None:
                return None  # the answer is more than calls: prose that starts with a tool's name
            name = following.group(1)

    def settled(self, text: str, pos: int, trigger: str) -> bool:
        if trigger.endswith(KEY) or (trigger not in _OWN and text.startswith(KEY, skip_space(text, pos + len(trigger)))):
            # stripped tokens: decided once a whole pair is written and what follows cannot be another
            end = _pairs_end(text, pos + len(trigger.removesuffix(KEY).rstrip("\r\n")))
            return end >= 0 and _run_over(text, end)
        if trigger not in _OWN:  # an answer of a name and JSON is decided by its end: hold it
            return pos not in call_list_starts(text)
        if trigger == GROUP_OPEN:  # Jamba's JSON group
            body = skip_space(text, pos + len(GROUP_OPEN))
            return body < len(text) and not OPEN.startswith(text[body : body + len(OPEN)])
        body = skip_space(text, pos + len(OPEN))
        return body < len(text) and text[body] in "<>{}[]\"'"

    def render(self, calls: Sequence[ToolCall]) -> str:
        return render_key_value(calls, SYNTAX)


#: the next call's name line in an answer of GLM-4 name-and-object pairs
_NEXT_NAME_LINE = re.compile(r"([^\s<>{}\[\]\"']{1,128}+)[ \t]*+\r?\n")
#: one key/value pair (blanks around): the key's tags, then the value's
_PAIR = re.compile(r"\s*+<arg_key>[^<]{1,256}+</arg_key>\s*+<arg_value>")
#: the scan lookahead after ``NAME<arg_key>``: the rest of a first pair's opening (a flood of
#: ``f<arg_key>`` is then never visited)
_STRIPPED_HEAD = r"[^<]{1,256}+</arg_key>\s*+<arg_value>"


def _pairs_end(text: str, at: int) -> int:
    """Where the run of whole key/value pairs starting at ``at`` ends; -1 when none is whole."""
    end = -1
    while (pair := _PAIR.match(text, at)) is not None:
        close = find_forward(text, VALUE_END, pair.end())
        if close < 0:
            break
        at = end = close + len(VALUE_END)
    return end


def _run_over(text: str, end: int) -> bool:
    """Has the run of pairs ended at ``end`` for good: text follows that cannot become another key?"""
    after = skip_space(text, end)
    return after < len(text) and not KEY.startswith(text[after : after + len(KEY)])


def _first_key_without_opener(text: str, body: int, close: int, ctx: ParseContext) -> tuple[str, str, int, str] | None:
    """The first key written right after the name, its ``<arg_key>`` missing: ``(tool, key, where the key
    ends, the repair)``. Glued to the name (``send_command_to_shellcommand</arg_key>``), split where an
    offered tool's name is the longest prefix; or after a blank (``read_file path</arg_key>``,
    TensorFold's tests), the name an offered tool's."""
    glued = _GLUED_KEY.match(text, body, close)
    if glued is not None:
        tool = _longest_prefix_tool(glued.group(1), ctx)
        if tool is None:
            return None
        key = glued.group(1)[len(tool) :]
        return tool, key, glued.end(1), f"split the key {key!r} off the name {glued.group(1)!r}"
    spaced = _SPACED_KEY.match(text, body, close)
    if spaced is None or ctx.tool(spaced.group(1)) is None:
        return None
    return spaced.group(1), spaced.group(2), spaced.end(2), f"{KEY} supplied before the key {spaced.group(2)!r}"


def _longest_prefix_tool(word: str, ctx: ParseContext) -> str | None:
    """The longest offered tool name that ``word`` starts with and runs past (None if none)."""
    prefixes = [name for name in ctx.by_name if len(word) > len(name) and word.startswith(name)]
    return max(prefixes, key=len, default=None)


def _mended(family: KeyValueFamily, mended: str, pos: int, ctx: ParseContext, removed: int, repair: str) -> Extraction | None:
    """The call read from its mended text, placed back at ``pos`` (``removed`` characters fewer than written)."""
    found = KeyValueFamily.read_call(family, mended, 0, ctx)
    if found is None or not found.calls:
        return None
    for call in found.calls:
        call.repairs.append(repair)
    reported = Diagnostic(DiagnosticKind.REPAIRED, f"{family.name} call read after repair: {repair}", clip(mended), family.name, pos)
    return Extraction(pos + found.end + removed, found.calls, [*found.diagnostics, reported], final=found.final)


#: the triggers that are not an offered tool's name
_OWN = frozenset(t.text for t in GlmFamily.declared_triggers)
