"""MeetKai Functionary: v3.1 ``<function=NAME>{json}</function>`` and v3.2 ``>>>NAME\\n{json}``.

v3.1 (Llama-3.1 based) shares ``<function=`` with Qwen3-Coder; the body
decides (``{`` here, ``<parameter=`` there), which is why Qwen3-Coder runs
first and passes on a JSON body. In v3.2 every message starts with
``>>>recipient``: ``>>>all`` is prose for the user (kept as content), any
other recipient followed by a JSON object is a call. ``<|python_tag|>`` is the
Llama family's, not this one's.

Llama 3.1 writes the same ``<function=NAME>{json}</function>`` for custom
tools (Meta's Llama 3.1 prompt-format page), and Llama 3.x behind hosted
APIs (Groq's ``failed_generation`` of ``tool_use_failed`` errors) often
drops the ``>``: ``<function=NAME{json}</function>``, or writes ``=``, ``,``
or ``:`` in its place (``<function=read={"file_path": "a"}</function>``,
``<function=get_time:{}>``), sometimes closing with ``>`` or
``></function>``. That is read with a repair when NAME is an identifier
(letters, digits, ``_ . -``; at most 128 characters) followed by at most one
of those separators, at most 8 spaces or tabs either side, and then the JSON
object itself (``{`` and then, after blanks, ``"`` or ``}``): a name that runs
straight into a JSON object cannot be prose.
The standard reading is tried first.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from utp.parsers.base import CallFamily, Extraction, ParseContext, register_family, static_triggers
from utp.parsers.familykit import closer_bound, json_arguments_before, make_call, read_json_at, unreadable
from utp.parsers.textscan import find_forward, skip_space
from utp.types import Diagnostic, ToolCall

from utp.parsers.qwen3markup import MAX_NAME, name_settled, read_name

FUNCTION, FUNCTION_END = "<function=", "</function>"
#: the closer without its slash, as small models write it
_UNSLASHED_END = "<function>"
RECIPIENT = ">>>"
#: v3.2 header: >>>name then a newline (no space: a REPL prompt is ">>> code")
_RECIPIENT_HEADER = re.compile(r">>>([A-Za-z_][\w.\-]{0,255})[ \t]*\r?\n")
#: what a header looks like while it is still arriving
_PARTIAL_HEADER = re.compile(r">{1,3}(?:[A-Za-z_][\w.\-]{0,255}[ \t]*\r?)?")
#: Llama's drifted header: NAME glued to its JSON object, or joined by one of ``= , :``
#: (``<function=read={...}``); the whole header stays shorter than MAX_NAME, so while it is
#: arriving ``name_settled`` never calls it settled (it has no ``>``, ``<`` or newline)
_DRIFT_NAME = r"[A-Za-z_][\w.\-]{0,127}"
#: and a JSON object must really start there: a quoted key or the closing brace next
_DRIFT_BODY = r'\{\s{0,64}+["}]'
_DRIFT_HEADER = re.compile(rf"({_DRIFT_NAME})[ \t]{{0,8}}([=,:]?)[ \t]{{0,8}}(?={_DRIFT_BODY})")
#: scan lookahead after ``<function=``: either ``read_name`` finds a ``>`` within MAX_NAME
#: characters with no ``<`` before it (the name would hold one), then at most MAX_NAME
#: whitespace and ``{``; or the drifted header matches. Possessive runs: the first ``>``
#: ends the name, and no name character is a separator, blank or ``{``, so nothing is given back.
FUNCTION_HEAD = (
    rf"(?:[^<>]{{0,{MAX_NAME}}}+>\s{{0,{MAX_NAME}}}+"
    rf"|[A-Za-z_][\w.\-]{{0,127}}+[ \t]{{0,8}}+[=,:]?[ \t]{{0,8}}+(?={_DRIFT_BODY}))\{{"
)
#: scan lookahead after ``>>>``: ``_RECIPIENT_HEADER`` must match (nothing else is read), and
#: then the message is either ``all``'s (content) or must open a JSON object within MAX_NAME
#: whitespace. Possessive runs give back nothing the header could use: a shorter name would
#: leave a name character where ``[ \t]``/newline must be.
RECIPIENT_HEAD = rf"all[ \t]*+\r?\n|[A-Za-z_][\w.\-]{{0,255}}+[ \t]*+\r?\n\s{{0,{MAX_NAME}}}+\{{"


@register_family
class FunctionaryFamily(CallFamily):
    name = "functionary"
    #: below qwen3_coder, which shares <function= and passes on JSON bodies
    priority = 60
    #: a call needs its header and then a JSON object (see FUNCTION_HEAD, RECIPIENT_HEAD)
    declared_triggers = static_triggers((FUNCTION, RECIPIENT), {FUNCTION: FUNCTION_HEAD, RECIPIENT: RECIPIENT_HEAD})
    aliases = ("functionary_v3", "meetkai")
    summary = "Functionary: <function=NAME>{json}</function> (v3.1) and >>>NAME\\n{json} (v3.2)"

    def extract(self, text: str, pos: int, trigger: str, ctx: ParseContext) -> Extraction | None:
        if trigger == RECIPIENT:
            return self._recipient_message(text, pos)
        header = read_name(text, pos + len(FUNCTION))
        body = -1
        repairs: list[str] = []
        if header is not None:
            name, cursor = header
            body = skip_space(text, cursor, cursor + MAX_NAME)
        drifted = body == -1 or not text.startswith("{", body)
        if drifted:
            drift = _DRIFT_HEADER.match(text, pos + len(FUNCTION))
            if drift is None:
                return None
            name, body, joint = drift.group(1), drift.end(), drift.group(2)
            repairs.append(f"{joint!r} instead of '>' after the function name" if joint else "no '>' after the function name")
        diagnostics: list[Diagnostic] = []
        read = json_arguments_before(self.name, text, pos, body, FUNCTION_END, name)
        if isinstance(read, Extraction):
            return read
        arguments, end, json_repairs = read
        repairs.extend(json_repairs)
        after = skip_space(text, end)
        if drifted and text.startswith(">", after):
            # the header's '>' written after the arguments instead (``<function=f{...}>``),
            # alone or before </function>
            end = after + 1
            after = skip_space(text, end)
            if text.startswith(FUNCTION_END, after):
                end = after + len(FUNCTION_END)
            else:
                repairs.append(f"'>' after the arguments instead of {FUNCTION_END}")
        elif text.startswith(FUNCTION_END, after):
            end = after + len(FUNCTION_END)
        elif text.startswith(_UNSLASHED_END, after):  # no opener: ``<function=`` has its '='
            end = after + len(_UNSLASHED_END)
            repairs.append(f"{_UNSLASHED_END} written for {FUNCTION_END}")
        else:
            repairs.append(f"missing {FUNCTION_END}")
        call = make_call(self.name, name, arguments, text[pos:end], pos, repairs, diagnostics)
        return Extraction(end=end, calls=[call], diagnostics=diagnostics)

    def _recipient_message(self, text: str, pos: int) -> Extraction | None:
        header = _RECIPIENT_HEADER.match(text, pos)
        if header is None:
            return None
        name = header.group(1)
        if name == "all":
            return Extraction(end=header.end())  # the message to the user stays content
        body = skip_space(text, header.end(), header.end() + MAX_NAME)
        if not text.startswith("{", body):
            return None
        following = find_forward(text, RECIPIENT, body)
        read = read_json_at(text, body, None if following == -1 else following, closer_bound(text, RECIPIENT, body))
        if read is None or not isinstance(read[0], dict):
            end = len(text) if following == -1 else following
            return unreadable(self.name, text, pos, end, f"arguments of {name!r} are not a JSON object")
        arguments, end, repairs = read
        diagnostics: list[Diagnostic] = []
        call = make_call(self.name, name, arguments, text[pos:end], pos, repairs, diagnostics)
        return Extraction(end=end, calls=[call], diagnostics=diagnostics)

    def settled(self, text: str, pos: int, trigger: str) -> bool:
        if trigger == FUNCTION:
            return name_settled(text, pos + len(FUNCTION))
        if _RECIPIENT_HEADER.match(text, pos):
            return skip_space(text, _RECIPIENT_HEADER.match(text, pos).end()) < len(text)  # type: ignore[union-attr]
        return not _PARTIAL_HEADER.fullmatch(text, pos)

    def render(self, calls: Sequence[ToolCall]) -> str:
        return "".join(f"{FUNCTION}{call.name}>{json.dumps(call.arguments, ensure_ascii=False)}{FUNCTION_END}" for call in calls)

