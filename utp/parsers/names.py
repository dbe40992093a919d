"""Match the tool name a model wrote to the tools it was offered.

Models write ``Get_Weather``, ``functions.get_weather``, ``get weather``,
``to=functions.get_weather`` (gpt-oss's recipient header) or ``get_water`` for
``get_weather``. Exact matches pass; case, spacing, a ``functions.`` prefix,
Llama's built-in ``.call`` suffix and a recipient's ``to=`` are normalised; a misspelling within two edits of
exactly *one* offered tool, with the same first letter, is corrected (and
said so): a typo keeps a name's start, while ``unknown_tool`` is not
``known_tool`` misspelt. A call id where the name belongs (``call-get_weather-0``)
names the tool between its prefix and index; an id a server generated
(``chatcmpl-tool-4beb6d33…``) names nothing, so the call's arguments do, when
exactly one offered tool fits them (:func:`is_generated_id`, used by
:mod:`utp.parsers.finishing`). Names shorter than :data:`SHORT_NAME` get one edit:
two edits are half of ``test``, and ``t.test`` in a JavaScript sample is
a method of ``t``, not the ``test`` tool misspelt. A name polluted by neighbouring markup
(``tool_12</arg_value>``, ``assistant<|channel|>analysis`` before the real
recipient) is the one piece between the tags that names an offered tool, when
exactly one does. Anything else is kept
as written and flagged unknown: dropping it would hide a hallucination from
the loop, and guessing between two close names would invent a call.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from utp.parsers.base import ParseContext
from utp.parsers.callshape import CALL_WORDS

#: the largest Damerau-Levenshtein distance corrected
MAX_EDITS = 2
#: names (either side) shorter than this are corrected within one edit only
SHORT_NAME = 8
_PREFIXES = ("functions.", "function.", "tools.", "tool.", "default_api.", "api.")
#: Llama 3.1's built-in tool syntax, ``brave_search.call(query="x")``, which it writes for offered tools too
_SUFFIXES = (".call",)
#: gpt-oss's recipient header written where the name belongs (``to=functions.get_weather``)
_RECIPIENT = re.compile(r"(?:assistant\s+)?to=")
_MEMO_LIMIT = 512
#: a call id written where the name belongs (``call-get_weather-0``, as Kimi's ids are by some
#: templates): the name between the ``call`` prefix and the index, once normalised
_CALL_ID = re.compile(r"call_(.+)_\d{1,9}")
#: a tag or special token inside a written name, or one cut off at its end (``get_time</arg``)
_MARKUP = re.compile(r"<[^<>\n]{0,64}>|<[/|!?][^<>\n]{0,64}\Z")
_SEPARATORS = re.compile(r"[\s\-.]+")
#: the value of a call's name key, as a JSON (or JSON-like) call writes it near its start
#: (a whole key: ``server_name`` names a server, not the tool)
_NAME_KEY_WORDS = ("name", "tool_name", "function_name", "tool", "function", "action", "request", "service", "tool_call")
#: the words by which an object says it is a call that are no name key themselves (those are followed below)
_CALL_WORDS_ONLY = CALL_WORDS - set(_NAME_KEY_WORDS)
_NAME_VALUE = re.compile(r"(?<![\w\-])[\"']?(?:" + "|".join(_NAME_KEY_WORDS) + r")[\"']?\s*[:=,]\s*\\?[\"']([^\"'\\\n]{1,120})")


@dataclass(frozen=True)
class NameMatch:
    """The resolved name; ``how`` is exact | normalized | corrected | unknown."""

    name: str
    how: str
    known: bool


def normalize_name(name: str) -> str:
    """Case, spacing and namespace prefix removed: the key names are compared on."""
    lowered = name.strip().strip("`'\"").lower()
    recipient = _RECIPIENT.match(lowered)
    if recipient is not None:
        lowered = lowered[recipient.end() :]
    for prefix in _PREFIXES:
        if lowered.startswith(prefix):
            lowered = lowered[len(prefix) :]
            break
    for suffix in _SUFFIXES:
        if lowered.endswith(suffix) and len(lowered) > len(suffix):
            lowered = lowered[: -len(suffix)]
            break
    if ":" in lowered:  # kimi-style functions.NAME:0 ids
        head, _, tail = lowered.rpartition(":")
        if tail.isdigit():
            lowered = head
    return _SEPARATORS.sub("_", lowered).strip("_")


class _NameIndex:
    """Per-context lookup tables, built once per offered tool set."""

    def __init__(self, names: list[str]) -> None:
        self.exact = set(names)
        self.memo: dict[str, NameMatch] = {}  # an agent loop sees the same wrong names again
        self.normalized: dict[str, list[str]] = {}
        for name in names:
            self.normalized.setdefault(normalize_name(name), []).append(name)


def _index(ctx: ParseContext) -> _NameIndex:
    cached = ctx.__dict__.get("_name_index")
    if cached is None:
        cached = _NameIndex(list(ctx.by_name))
        ctx.__dict__["_name_index"] = cached
    return cached


def resolve_name(name: str, ctx: ParseContext) -> NameMatch:
    """Resolve ``name`` against ``ctx``'s tools (``known`` is meaningful only when tools exist)."""
    index = _index(ctx)
    if name in index.exact:
        return NameMatch(name, "exact", True)
    found = index.memo.get(name)
    if found is None:
        found = _resolve_inexact(name, index)
        if len(index.memo) < _MEMO_LIMIT:
            index.memo[name] = found
    return found


def offered_under_namespace(name: str, ctx: ParseContext) -> str | None:
    """The offered tool a name means when written under a namespace of the model's own: the part after
    the last dot (``attest.list_notes``, Kimi's ``ns.get_weather``), when no offered tool has the whole name.

    Only for names inside call markup: in prose or code ``t.test(…)`` is a method, not the ``test`` tool.
    """
    namespace, dot, rest = name.rpartition(".")
    if not dot or not namespace or not ctx.has_tools or ctx.tool(name) is not None:
        return None
    tool = ctx.tool(rest)
    return tool.name if tool is not None else None


def namespace_dropped(written: str) -> str:
    """The repair :func:`offered_under_namespace` records: the namespace dropped from ``written``."""
    return f"namespace {written.rpartition('.')[0] + '.'!r} before the offered tool's name dropped"


def _resolve_inexact(name: str, index: "_NameIndex") -> NameMatch:
    found = _resolve_words(name, index)
    if found.known or ("<" not in name and "to=" not in name):
        return found
    pieces = [piece for piece in _MARKUP.split(name) if piece.strip()]
    # a recipient header's words before its ``to=`` (``analysis to=functions.f``) are the channel's
    pieces += [piece.rpartition("to=")[2] for piece in pieces if "to=" in piece]
    known = {match.name for piece in pieces if (match := _resolve_words(piece, index)).known}
    return NameMatch(known.pop(), "normalized", True) if len(known) == 1 else found


def _resolve_words(name: str, index: "_NameIndex") -> NameMatch:
    """A name without markup: normalised, or corrected when within two edits of exactly one tool."""
    if name in index.exact:
        return NameMatch(name, "exact", True)
    key = normalize_name(name)
    found = index.normalized.get(key)
    if found and len(found) == 1:
        return NameMatch(found[0], "normalized", True)
    call_id = _CALL_ID.fullmatch(key)
    if call_id is not None and len(found := index.normalized.get(call_id.group(1), [])) == 1:
        return NameMatch(found[0], "normalized", True)  # a call id where the name belongs
    if ":" in key and len(found := index.normalized.get(key.rpartition(":")[2], [])) == 1:
        return NameMatch(found[0], "normalized", True)  # an MCP server's name before the tool's (``ide:read_file``)
    if key and len(key) > MAX_EDITS + 1:
        close = [
            candidates[0]
            for norm, candidates in index.normalized.items()
            if len(candidates) == 1
            and norm[0] == key[0]
            and abs(len(norm) - len(key)) <= (budget := _edit_budget(norm, key))
            and edit_distance(key, norm, budget) <= budget
        ]
        if len(close) == 1:
            return NameMatch(close[0], "corrected", True)
    return NameMatch(name, "unknown", False)


def _edit_budget(a: str, b: str) -> int:
    """How many edits a misspelling of this length may carry: one for short names, else :data:`MAX_EDITS`."""
    return MAX_EDITS if min(len(a), len(b)) >= SHORT_NAME else 1


def edit_distance(a: str, b: str, limit: int) -> int:
    """Optimal-string-alignment (Damerau-Levenshtein) distance, capped at ``limit + 1``.

    Only a band of width ``limit`` around the diagonal is filled, so the cost
    is O(len × limit), not O(len²).
    """
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    if a == b:
        return 0
    big = limit + 1
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [big] * (len(b) + 1)
        cur[0] = i
        lo = max(1, i - limit)
        hi = min(len(b), i + limit)
        row_min = cur[0] if lo == 1 else big
        for j in range(lo, hi + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            best = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                best = min(best, prev2[j - 2] + 1)
            cur[j] = best
            row_min = min(row_min, best)
        if row_min > limit:
            return big
        prev2, prev = prev, cur
    return min(prev[len(b)], big)


def names_offered_tool_at(text: str, pos: int, ctx: ParseContext, nested: bool = False) -> bool:
    """Does the JSON call starting at ``pos`` name one of the offered tools (looking at most 200 characters on)?

    Decides whether ``{"name": "f"}`` with no argument key is a call: only
    when ``f`` was offered is a bare name certainly one (``{"name": "Paris"}``
    is an answer). ``nested`` also looks inside ``"function": {"name": "f"}``,
    for placing a call; reporting a call that cannot be read asks without it
    (an echoed tool definition has the same shape).
    """
    if not ctx.has_tools:
        return False
    match = _NAME_VALUE.search(text, pos, pos + 200)
    if match is not None and match.group(1).lower() in _CALL_WORDS_ONLY:  # ``"action": "call"``: the object's own word, the name follows
        match = _NAME_VALUE.search(text, match.end(), pos + 200)
    while match is not None and match.group(1) in _NAME_KEY_WORDS:
        # a value that is itself a key word matched first (``"type": "function", "name": "f"`` reads
        # ``function`` as a key, ``name`` as its value): read that value as the key it is, if a name
        # follows it; ``nested``, also a name further in (``"function": {"name": "f"}``)
        again = _NAME_VALUE.search if nested else _NAME_VALUE.match
        match = again(text, match.start(1) - 1, pos + 200)
    return match is not None and resolve_name(match.group(1), ctx).known


#: a word of prose that may be a tool's name (its sentence's full stop or dash trimmed when looked up)
_PROSE_WORD = re.compile(r"[A-Za-z_][\w.\-]*+")
#: how far back the naming line is looked for
_NAMING_LOOKBACK = 400


def tool_named_before(text: str, pos: int, keys: set[str], ctx: ParseContext) -> str | None:
    """The one offered tool that the last non-blank line before ``pos`` names and whose declared
    parameters include every key of ``keys`` (None: no such tool, or more than one).

    For an arguments object written alone after prose that says which tool it is for ("Use
    web_search function.\\n\\n{"query": ...}"): the object's keys must fit the tool named.
    """
    before = text[max(0, pos - _NAMING_LOOKBACK) : pos].rstrip()
    line = before[before.rfind("\n") + 1 :]
    named = {tool.name for word in _PROSE_WORD.findall(line) if (tool := ctx.tool(word.rstrip(".-"))) is not None and keys <= set(tool.properties)}
    return named.pop() if len(named) == 1 else None



#: the repair a call named by its arguments alone records
NAMED_BY_ARGUMENTS = "tool named by its arguments' keys (no name written)"


def tool_fitting(arguments: dict[str, object], ctx: ParseContext) -> str | None:
    """The one offered tool whose declared parameters include every key of ``arguments`` and whose
    required parameters are all among them (None: no such tool, or more than one).

    For an answer that is nothing but an arguments object: small models asked for a call write the
    arguments and leave the name out (gemma4:e2b answering a run_command request with ``{"command":
    "pwd"}``). Only a unique fit names the tool.
    """
    if not arguments:
        return None
    keys = set(arguments)
    fits = [tool.name for tool in ctx.by_name.values() if tool.properties and keys <= set(tool.properties) and set(tool.required) <= keys]
    return fits[0] if len(fits) == 1 else None


#: a server's or client's call id: vLLM's ``chatcmpl-tool-…`` (a prefix no tool name has), or OpenAI's
#: ``call_…`` and ``fc_…``, Anthropic's ``toolu_…`` followed by random letters and digits, at least one
#: a digit (``call_weather_api`` is a name, ``call-get_weather-0`` a name between prefix and index), or a
#: bare UUID
_GENERATED_ID = re.compile(
    r"chatcmpl-[A-Za-z0-9_\-]{1,64}(?::\d{1,9})?"
    r"|(?:call[_\-]|toolu_|fc_|tool[_\-])(?=[A-Za-z]*\d)[A-Za-z0-9]{6,64}(?::\d{1,9})?"
    r"|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
    re.I,
)
#: the repair a call named by its arguments instead of the id written as its name records
ID_AS_NAME = "a call id written where the name belongs; tool named by its arguments' keys"


def is_generated_id(name: str) -> bool:
    """Is ``name`` a call id some server or client generated, not a name anyone gave a tool?

    Kimi K2.6 behind a gateway that rewrote its history's ids copies the id
    (``chatcmpl-tool-4beb6d33f42a4b72``) where ``functions.NAME:IDX`` belongs.
    """
    return _GENERATED_ID.fullmatch(name.strip()) is not None

