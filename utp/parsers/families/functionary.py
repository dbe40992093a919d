"""MeetKai Functionary: v3.1 ``<function=NAME>{json}</function>`` and v3.2 ``>>>NAME\\n{json}``.

v3.1 (Llama-3.1 based) shares ``<function=`` with Qwen3-Coder; the body
decides (``{`` here, ``<parameter=`` there), which is why Qwen3-Coder runs
first and passes on a JSON body. In v3.2 every message starts with
``>>>recipient``: ``>>>all`` is prose for the user (kept as content), any
other recipient followed by a JSON object is a call. ``<|python_tag|>`` is the
Llama family's, not this one's.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from utp.parsers.base import CallFamily, Extraction, ParseContext, register_family
from utp.parsers.familykit import closer_bound, make_call, read_json_at, unreadable
from utp.parsers.textscan import find_forward, skip_space
from utp.types import Diagnostic, DiagnosticKind, ToolCall

from utp.parsers.families.qwen3_coder import MAX_NAME, name_settled, read_name

FUNCTION, FUNCTION_END = "<function=", "</function>"
RECIPIENT = ">>>"
#: v3.2 header: >>>name then a newline (no space: a REPL prompt is ">>> code")
_RECIPIENT_HEADER = re.compile(r">>>([A-Za-z_][\w.\-]{0,255})[ \t]*\r?\n")
#: what a header looks like while it is still arriving
_PARTIAL_HEADER = re.compile(r">{1,3}(?:[A-Za-z_][\w.\-]{0,255}[ \t]*\r?)?")
#: scan lookahead after ``<function=``: ``read_name`` needs a ``>`` within MAX_NAME characters
#: with no ``<`` before it (the name would hold one), then at most MAX_NAME whitespace and
#: ``{``. Possessive runs: the first ``>`` ends the name, so nothing is given back.
FUNCTION_HEAD = rf"[^<>]{{0,{MAX_NAME}}}+>\s{{0,{MAX_NAME}}}+\{{"
#: scan lookahead after ``>>>``: ``_RECIPIENT_HEADER`` must match (nothing else is read), and
#: then the message is either ``all``'s (content) or must open a JSON object within MAX_NAME
#: whitespace. Possessive runs give back nothing the header could use: a shorter name would
#: leave a name character where ``[ \t]``/newline must be.
RECIPIENT_HEAD = rf"all[ \t]*+\r?\n|[A-Za-z_][\w.\-]{{0,255}}+[ \t]*+\r?\n\s{{0,{MAX_NAME}}}+\{{"


@register_family
class FunctionaryFamily(CallFamily):
    name = "functionary"
    triggers = (FUNCTION, RECIPIENT)
    #: below qwen3_coder, which shares <function= and passes on JSON bodies
    priority = 60
    #: a call needs its header and then a JSON object (see FUNCTION_HEAD, RECIPIENT_HEAD)
    trigger_heads = {FUNCTION: FUNCTION_HEAD, RECIPIENT: RECIPIENT_HEAD}
    aliases = ("functionary_v3", "meetkai")
    summary = "Functionary: <function=NAME>{json}</function> (v3.1) and >>>NAME\\n{json} (v3.2)"

    def extract(self, text: str, pos: int, trigger: str, ctx: ParseContext) -> Extraction | None:
        if trigger == RECIPIENT:
            return self._recipient_message(text, pos)
        header = read_name(text, pos + len(FUNCTION))
        if header is None:
            return None
        name, cursor = header
        body = skip_space(text, cursor, cursor + MAX_NAME)
        if not text.startswith("{", body):
            return None
        diagnostics: list[Diagnostic] = []
        close = find_forward(text, FUNCTION_END, body)
        read = read_json_at(text, body, None if close == -1 else close, closer_bound(text, FUNCTION_END, body))
        if read is None or not isinstance(read[0], dict):
            if close == -1:
                return unreadable(self.name, text, pos, len(text), f"arguments of {name!r} are not a complete JSON object", kind=DiagnosticKind.TRUNCATED)
            return unreadable(self.name, text, pos, close + len(FUNCTION_END), f"arguments of {name!r} are not a JSON object")
        arguments, end, repairs = read
        after = skip_space(text, end)
        if text.startswith(FUNCTION_END, after):
            end = after + len(FUNCTION_END)
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

