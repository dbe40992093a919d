"""Decide from the user's request how much capability the session needs.

Progressive disclosure (HLD §3.2): a question like "what does auth.py do?"
should never put ``write_file`` in front of a small model, because offered
tools get called. The user's own words are the trust signal: asking to
*read* or *search* unlocks WALK, asking to *write*, *run* or *fix* unlocks
RUN. Rules are data, so a deployment can add its own vocabulary or replace
the defaults entirely.

Matching is case-insensitive on whole words (``fix`` does not fire on
"fixture", ``run`` not on "runtime"); inflected forms are listed explicitly
rather than stemmed, so what unlocks a tier is always readable in one place.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from utp.types import ToolTier


@dataclass(frozen=True)
class IntentRule:
    """Unlock ``tier`` when any of ``words`` (whole words) or ``pattern`` (a regex) occurs."""

    tier: ToolTier
    words: tuple[str, ...] = ()
    pattern: str | None = None
    name: str = ""
    #: the words named when telling a model what unlocks this tier (default: the first few words)
    examples: tuple[str, ...] = ()
    _regex: re.Pattern[str] | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "tier", ToolTier.parse(self.tier))
        words = tuple(w.strip() for w in self.words if w and w.strip())
        object.__setattr__(self, "words", words)
        object.__setattr__(self, "examples", tuple(self.examples) or words[:6])
        if not words and not self.pattern:
            raise ValueError(f"intent rule {self.name or self.tier.name!r} has neither words nor a pattern")
        parts = []
        if words:
            alternatives = "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))
            parts.append(rf"(?<!\w)(?:{alternatives})(?!\w)")
        if self.pattern:
            try:
                re.compile(self.pattern)
            except re.error as exc:
                raise ValueError(f"intent rule {self.name or self.tier.name!r}: bad pattern {self.pattern!r}: {exc}") from None
            parts.append(f"(?:{self.pattern})")
        object.__setattr__(self, "_regex", re.compile("|".join(parts), re.IGNORECASE))

    def match(self, text: str) -> str | None:
        """The text that triggered the rule, or ``None``."""
        assert self._regex is not None
        found = self._regex.search(text)
        return found.group(0) if found else None


def _forms(*groups: str) -> tuple[str, ...]:
    return tuple(w for group in groups for w in group.split())


def _bases(*groups: str) -> tuple[str, ...]:
    return tuple(group.split()[0] for group in groups)


_INSPECT_WORDS = (
    "read reads reading",
    "search searches searching searched",
    "find finds finding",
    "show shows showing",
    "list lists listing",
    "look looks looking",
    "explain explains explaining",
    "open opens",
    "grep",
)
_CHANGE_WORDS = (
    "write writes writing",
    "edit edits editing",
    "create creates creating",
    "delete deletes deleting remove",
    "run runs running",
    "execute executes executing",
    "commit commits committing",
    "install installs installing",
    "fix fixes fixing",
    "modify modifies rename refactor",
)


DEFAULT_RULES: tuple[IntentRule, ...] = (
    IntentRule(ToolTier.WALK, _forms(*_INSPECT_WORDS), name="inspect", examples=_bases(*_INSPECT_WORDS)),
    IntentRule(ToolTier.RUN, _forms(*_CHANGE_WORDS), name="change", examples=_bases(*_CHANGE_WORDS)),
)


def matching_rules(text: str, rules: Iterable[IntentRule] = DEFAULT_RULES) -> list[tuple[IntentRule, str]]:
    """Every rule that fires on ``text`` with the words that fired it (for transcripts)."""
    hits = []
    for rule in rules:
        trigger = rule.match(text or "")
        if trigger is not None:
            hits.append((rule, trigger))
    return hits


def detect_intent_tier(text: str, rules: Sequence[IntentRule] = DEFAULT_RULES) -> ToolTier:
    """The highest tier any rule grants for ``text``; CRAWL when none fires."""
    tiers = [rule.tier for rule, _ in matching_rules(text, rules)]
    return max(tiers, default=ToolTier.CRAWL)
