"""The family contract: every opener is one frozen ``Trigger`` record from ``triggers_for``.

The scanners read nothing else, so a family that still declares a retired hook
(``triggers = (...)``, ``trigger_heads``, ``word_triggers``...) would be
silently ignored: that is an error when the class is created.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence

import pytest

from utp.parsers import family_names, get_family
from utp.parsers.base import CallFamily, Extraction, ParseContext, Start, Trigger, static_triggers
from utp.types import Tool, ToolCall

TOOLS = ParseContext([Tool("get_weather"), Tool("read_file")])


@pytest.mark.parametrize("hook", ["triggers", "trigger_heads", "offered_triggers", "word_triggers"])
def test_a_family_declaring_a_retired_hook_is_an_error_at_class_creation(hook: str) -> None:
    with pytest.raises(TypeError, match=hook):
        type("Old", (CallFamily,), {"name": "old", hook: (), "extract": lambda *a: None, "render": lambda *a: ""})


def test_a_trigger_is_frozen_and_checked() -> None:
    trigger = Trigger("<x>", r"\s*\{")
    with pytest.raises(dataclasses.FrozenInstanceError):
        trigger.text = "<y>"  # type: ignore[misc]
    with pytest.raises(ValueError, match="empty"):
        Trigger("")
    with pytest.raises(ValueError, match="answer-start"):
        Trigger("f(", start=Start.ANSWER)


def test_only_a_trigger_that_begins_with_a_word_character_is_a_word_trigger() -> None:
    assert Trigger("call:", start=Start.WORD).word
    assert Trigger("f(", start=Start.ANSWER, from_tool_names=True).word
    assert not Trigger("<call>", start=Start.WORD).word
    assert not Trigger("call:").word


class _Offered(CallFamily):
    name = "test_offered"
    declared_triggers = (*static_triggers(["<a>"], {"<a>": r"\{"}), Trigger("```", offered_only=True))

    def extract(self, text: str, pos: int, trigger: str, ctx: ParseContext) -> Extraction | None:
        return None

    def render(self, calls: Sequence[ToolCall]) -> str:
        return ""


def test_the_default_hook_watches_offered_only_triggers_only_while_a_tool_is_offered() -> None:
    family = _Offered()
    assert [t.text for t in family.triggers_for(None)] == ["<a>"]
    assert [t.text for t in family.triggers_for(ParseContext())] == ["<a>"]
    assert [t.text for t in family.triggers_for(TOOLS)] == ["<a>", "```"]
    assert family.triggers_for(None)[0].head == r"\{" and not family.names_tools


@pytest.mark.parametrize("name", family_names())
def test_without_tools_no_family_watches_a_tool_trigger(name: str) -> None:
    assert not any(t.offered_only or t.from_tool_names for t in get_family(name).triggers_for(None))


@pytest.mark.parametrize("name", family_names())
def test_triggers_made_of_tool_names_hold_a_name_and_only_overriding_families_make_them(name: str) -> None:
    family = get_family(name)
    made = [t for t in family.triggers_for(TOOLS) if t.from_tool_names]
    assert all(any(tool.name in t.text for tool in TOOLS.tools) for t in made)
    assert family.names_tools or not made
    for record in family.triggers_for(TOOLS):
        if record.head is not None:
            re.compile(record.head)
