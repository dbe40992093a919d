"""What a call family is, and the registry families join by being imported.

A *family* is one way models write calls in text (``<tool_call>{json}``,
``[TOOL_CALLS]name[ARGS]{json}``, ``[f(a=1)]``...). It declares the literal
*triggers* that can start one of its calls; the composite parser finds every
trigger of every family in one pass over the text and asks the family at each
position to ``extract`` what is there. A family also ``render``s calls the way
its models write them, which is what prompt adapters show a model and what the
round-trip property tests feed back in.

Adding a format is adding a module under ``utp/parsers/families/`` whose class
is decorated with :func:`register_family`; nothing else changes.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from utp.types import Diagnostic, Tool, ToolCall


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
    """

    end: int
    calls: list[ToolCall] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    start: int | None = None
    thinking: str = ""
    final: bool = False
    closer: str = ""
    provisional: bool = False


class CallFamily(ABC):
    """One registered tool-call text format."""

    #: registry name, also recorded as ``ToolCall.format``
    name: ClassVar[str]
    #: literal strings that may begin a call of this family
    triggers: ClassVar[tuple[str, ...]] = ()
    #: more such strings, watched for only while some tool is offered, whatever its name (a
    #: Python code fence may hold calls of offered tools; without tools it is code being shown)
    offered_triggers: ClassVar[tuple[str, ...]] = ()
    #: when two families' triggers start at the same index, higher wins
    priority: ClassVar[int] = 50
    #: included when parsing with ``format="auto"``
    in_auto: ClassVar[bool] = True
    #: one-line description for docs and ``utp formats``
    summary: ClassVar[str] = ""
    #: other names configuration may use for this family (e.g. the seeds' "qwen_xml")
    aliases: ClassVar[tuple[str, ...]] = ()
    #: trigger → regex the text right after that trigger must match (at its start) for
    #: ``extract`` to return anything there. A necessary condition only (it may accept
    #: more than the family does): the one-shot scan compiles it into its single
    #: pattern as a lookahead, so floods of ``{`` or ``[`` never reach Python code.
    trigger_heads: ClassVar[dict[str, str]] = {}
    #: do this family's triggers that begin with a word character (``functools[``, ``call:``,
    #: an offered tool's ``get_weather(``) start a call only where a word starts? Then
    #: ``myfunctools[`` and ``forget_weather(`` are other words, and the scan never stops
    #: there. It matters most to streams: the ``d`` ending "read" need not be held back as
    #: the start of ``default_api.``. Leave it False where a call may be glued to the text
    #: before it (Harmony's ``…done.assistantcommentary`` once its tokens are stripped).
    word_triggers: ClassVar[bool] = False

    @abstractmethod
    def extract(self, text: str, pos: int, trigger: str, ctx: ParseContext) -> Extraction | None:
        """Read the call(s) starting at ``text[pos:]`` (where ``trigger`` matched).

        Return ``None`` when this is not a call after all (the text stays
        content). Must not raise and must run in time linear in what it reads.
        """

    @abstractmethod
    def render(self, calls: Sequence[ToolCall]) -> str:
        """The text a model of this family writes to make ``calls``."""

    def context_triggers(self, ctx: ParseContext) -> tuple[str, ...]:
        """Triggers that exist only for these offered tools (a bare ``get_weather(`` call).

        Only the answer's first word can be one: one-shot parsing tries them
        there alone; a stream watches for them like ``triggers`` and ``extract``
        declines anywhere else. Most families have none.
        """
        return ()

    def trigger_head(self, trigger: str) -> str | None:
        """The scan lookahead for ``trigger`` (see ``trigger_heads``); a family whose triggers come from the tools builds it."""
        return self.trigger_heads.get(trigger)

    def tool_triggers(self, ctx: ParseContext) -> tuple[str, ...]:
        """Triggers made of the offered tools' names, which may stand anywhere.

        Cline-style ``<read_file>`` for an offered ``read_file``: without that
        tool such text is markup, so the trigger is not watched for at all (and
        a stream does not hold it back). One-shot parsing and streams search
        for these like ``triggers``, in a small pattern of their own (the
        families' shared one is not compiled again for every tool list). Most
        families have none.
        """
        return ()

    def settled(self, text: str, pos: int, trigger: str) -> bool:
        """Streaming: is a ``None`` from ``extract`` at ``pos`` final, whatever text follows?

        The stream parser holds back text from an undecided trigger until this
        says yes (then it is released as content) or the stream ends. The
        default holds until the end, which is always correct; families whose
        triggers are common in prose (``{``, a code fence) answer sooner.
        """
        return False


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
