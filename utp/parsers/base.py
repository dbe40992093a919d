"""What a call family is, and the registry families join by being imported.

A *family* is one way models write calls in text (``<tool_call>{json}``,
``[TOOL_CALLS]name[ARGS]{json}``, ``[f(a=1)]``...). It declares the literal
*triggers* that can start one of its calls, each a :class:`Trigger` record
(returned by the one hook :meth:`CallFamily.triggers_for`); the composite parser finds every
trigger of every family in one pass over the text and asks the family at each
position to ``extract`` what is there. A family also ``render``s calls the way
its models write them, which is what prompt adapters show a model and what the
round-trip property tests feed back in.

Adding a format is adding a module under ``utp/parsers/families/`` whose class
is decorated with :func:`register_family`; nothing else changes.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, ClassVar

from utp.types import Diagnostic, Tool, ToolCall

#: characters a stream waits for after an extraction that is not final before accepting it (an
#: optional closer may still come); a reading that later text can extend must be decided within it
STREAM_LOOKAHEAD = 32


@dataclass
class ParseContext:
    """What a family may consult while extracting: the offered tools and options."""

    tools: Sequence[Tool] = ()
    options: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.by_name: dict[str, Tool] = {t.name: t for t in self.tools}

    @property
    def has_tools(self) -> bool:
        return bool(self.by_name)

    def tool(self, name: str) -> Tool | None:
        return self.by_name.get(name)


@dataclass
class Extraction:
    """What a family found at one trigger position.

    ``end`` is the index just past the text the family consumed (that span is
    removed from ``content``). ``start`` may move the span's start before the
    trigger (e.g. to swallow an opening fence); by default it is the trigger.
    A family that finds call-shaped text it cannot read returns an Extraction
    with no calls and an UNPARSEABLE diagnostic, consuming the span, so the
    broken markup is reported rather than shown to the user as prose.
    ``thinking`` is reasoning text found inside the span (Harmony's analysis
    channel); the composite appends it to ``ParsedResponse.thinking``.
    ``final`` says that no text after ``end`` could change this extraction (the
    family consumed an explicit closing marker): a stream announces the calls
    the moment they close instead of waiting to see whether a closer follows.
    ``closer`` is for an extraction that is not final because an optional
    closing marker may still follow: when only whitespace and then ``closer``
    come after ``end``, ``extract`` on that longer text gives this same
    extraction, final, ending after the closer. A stream completes it that way
    instead of reading the span again.
    ``provisional`` says the reading rests on a marker *not* coming later in
    the text (a Qwen3-Coder block closer inside an open value ends the call
    only when no ``</function>`` follows): a stream holds such a span and
    reads it again as the text grows, accepting it only at the end or once
    the reading no longer rests on what is still to come.
    ``shown`` says the span holds calls shown as a sample, not made: it stays
    content and its calls are reported, not run (set by the scan loop).
    """

    end: int
    calls: list[ToolCall] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    start: int | None = None
    thinking: str = ""
    final: bool = False
    closer: str = ""
    provisional: bool = False
    shown: bool = False


class Start(Enum):
    """Where a trigger may begin a call."""

    #: at any position, glued to the text before it or not (``<tool_call>``, Harmony's stripped
    #: ``assistantcommentary to=functions.f``)
    ANYWHERE = "anywhere"
    #: only where a word starts, when the trigger begins with a word character: ``myfunctools[``
    #: and ``forget_weather(`` are other words, so the scan never stops there and a stream need
    #: not hold back the ``d`` ending "read" as the start of ``default_api.``
    WORD = "word"
    #: only where an answer's call list may begin (its first word, after a lead-in, or its last
    #: lines): one-shot parsing tries such a trigger there once instead of searching for it; a
    #: stream watches for it like any word trigger and ``extract`` declines anywhere else
    ANSWER = "answer"


@dataclass(frozen=True, slots=True)
class Trigger:
    """One literal that may begin a call of a family, and the conditions on it.

    ``head`` is a regex the text right after ``text`` must match (at its start)
    for ``extract`` to return anything there: a necessary condition only (it may
    accept more than the family does). One-shot parsing compiles it into the
    scan pattern as a lookahead, so floods of ``{`` or ``[`` never reach Python
    code; ``None`` means no condition. ``offered_only`` triggers are watched
    for only while some tool is offered, whatever its name (a Python code fence
    may hold calls of offered tools; without tools it is code being shown).
    ``from_tool_names`` says the text is made of an offered tool's name
    (``<read_file>``): scanners holding such triggers are cached by the names.
    """

    text: str
    head: str | None = None
    start: Start = Start.ANYWHERE
    offered_only: bool = False
    from_tool_names: bool = False

    def __post_init__(self) -> None:
        if not self.text:
            raise ValueError("a trigger's text must not be empty")
        if self.start is Start.ANSWER and not self.from_tool_names:
            raise ValueError(f"trigger {self.text!r}: only a trigger made of a tool's name can be an answer-start trigger")

    @property
    def word(self) -> bool:
        """Does this trigger begin a call only where a word starts? (It begins with a word character.)"""
        return self.start is not Start.ANYWHERE and WORD_CHARACTER.match(self.text) is not None


def static_triggers(texts: Iterable[str], heads: dict[str, str] | None = None, start: Start = Start.ANYWHERE) -> tuple[Trigger, ...]:
    """Fixed triggers from their texts and a text → head map (a text without a head has no condition)."""
    heads = heads or {}
    return tuple(Trigger(text, heads.get(text), start) for text in texts)


#: what ``\w`` matches: a word trigger cannot start right after one
WORD_CHARACTER = re.compile(r"\w")
#: the hooks the trigger records replaced: a family defining one would be silently ignored, so it is an error
_RETIRED_HOOKS = ("triggers", "offered_triggers", "trigger_heads", "trigger_head", "tool_triggers", "context_triggers", "word_triggers")


class CallFamily(ABC):
    """One registered tool-call text format."""

    #: registry name, also recorded as ``ToolCall.format``
    name: ClassVar[str]
    #: the triggers fixed by the format (a family whose triggers come from the tools'
    #: names adds those in :meth:`triggers_for`)
    declared_triggers: ClassVar[tuple[Trigger, ...]] = ()
    #: when two families' triggers start at the same index, higher wins
    priority: ClassVar[int] = 50
    #: included when parsing with ``format="auto"``
    in_auto: ClassVar[bool] = True
    #: one-line description for docs and ``utp formats``
    summary: ClassVar[str] = ""
    #: other names configuration may use for this family (e.g. the seeds' "qwen_xml")
    aliases: ClassVar[tuple[str, ...]] = ()
    #: does this family override :meth:`triggers_for` (it may make triggers of the tools' names)?
    #: Set for each subclass; lets a parse skip asking the others.
    names_tools: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        retired = [hook for hook in _RETIRED_HOOKS if hook in cls.__dict__]
        if retired:
            raise TypeError(f"{cls.__name__} defines {', '.join(retired)}: declare Trigger records (declared_triggers, triggers_for) instead")
        cls.names_tools = cls.triggers_for is not CallFamily.triggers_for

    def triggers_for(self, ctx: ParseContext | None) -> tuple[Trigger, ...]:
        """Every trigger this family watches for while ``ctx``'s tools are offered (``None``: no tools).

        The one hook the scanners read. The default is the declared triggers,
        the offered-only ones only while some tool is offered. A family that
        makes triggers of the tools' names overrides it to add those (marked
        ``from_tool_names``); it must be a function of the names alone.
        """
        declared = type(self).declared_triggers
        if ctx is not None and ctx.has_tools:
            return declared
        return tuple(t for t in declared if not t.offered_only)

    @property
    def triggers(self) -> tuple[str, ...]:
        """The texts of the declared triggers watched for without tools (a view for tools and tests)."""
        return tuple(t.text for t in type(self).declared_triggers if not t.offered_only)

    @property
    def offered_triggers(self) -> tuple[str, ...]:
        """The texts of the declared offered-only triggers (a view)."""
        return tuple(t.text for t in type(self).declared_triggers if t.offered_only)

    @property
    def trigger_heads(self) -> dict[str, str]:
        """Declared trigger text → its head, for those that have one (a view)."""
        return {t.text: t.head for t in type(self).declared_triggers if t.head is not None}

    def tool_triggers(self, ctx: ParseContext) -> tuple[str, ...]:
        """The texts of the triggers made of ``ctx``'s tool names that may stand anywhere (a view)."""
        return tuple(t.text for t in self.triggers_for(ctx) if t.from_tool_names and t.start is not Start.ANSWER)

    @property
    def word_triggers(self) -> bool:
        """Does some trigger of this family, with a tool offered, begin a call only at a word start? (a view)"""
        return any(t.word for t in self.triggers_for(_PROBE))

    @abstractmethod
    def extract(self, text: str, pos: int, trigger: str, ctx: ParseContext) -> Extraction | None:
        """Read the call(s) starting at ``text[pos:]`` (where ``trigger`` matched).

        Return ``None`` when this is not a call after all (the text stays
        content). Must not raise and must run in time linear in what it reads.
        """

    @abstractmethod
    def render(self, calls: Sequence[ToolCall]) -> str:
        """The text a model of this family writes to make ``calls``."""

    def settled(self, text: str, pos: int, trigger: str) -> bool:
        """Streaming: is a ``None`` from ``extract`` at ``pos`` final, whatever text follows?

        The stream parser holds back text from an undecided trigger until this
        says yes (then it is released as content) or the stream ends. The
        default holds until the end, which is always correct; families whose
        triggers are common in prose (``{``, a code fence) answer sooner.
        """
        return False


#: the tool list the :attr:`CallFamily.word_triggers` view looks at (word triggers may be made of
#: the tools' names: any one name shows whether a family makes such)
_PROBE = ParseContext([Tool("f")])

_FAMILIES: dict[str, CallFamily] = {}


def register_family(cls: type[CallFamily]) -> type[CallFamily]:
    """Class decorator: make ``cls`` available under ``cls.name``."""
    name = getattr(cls, "name", None)
    if not isinstance(name, str) or not name:
        raise TypeError(f"{cls.__name__} must set a non-empty class attribute 'name'")
    if name in _FAMILIES and type(_FAMILIES[name]) is not cls:
        raise ValueError(f"call family {name!r} is registered twice ({type(_FAMILIES[name]).__name__}, {cls.__name__})")
    _check_names(name, tuple(getattr(cls, "aliases", ())), cls)
    _FAMILIES[name] = cls()
    return cls


def _check_names(name: str, aliases: tuple[str, ...], cls: type) -> None:
    """A name or alias means one family: a clash is an error at import, never settled by import order."""
    for other_name, other in _FAMILIES.items():
        if type(other) is cls:
            continue
        taken = {other_name, *other.aliases}
        for claimed in (name, *aliases):
            if claimed in taken:
                raise ValueError(
                    f"call family {name!r} ({cls.__name__}) claims {claimed!r}, which already names family "
                    f"{other_name!r}; aliases must be unique"
                )


def registered_families() -> dict[str, CallFamily]:
    """Name → family instance, in registration order."""
    return dict(_FAMILIES)
