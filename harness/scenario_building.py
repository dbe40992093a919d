"""Typed scenario records built from a suite's checked YAML data.

:mod:`harness.scenarios` reads and checks a suite file; what is built from
data that passed every check lives here, so each module keeps one job.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from utp.types import Tool, ToolTier
from harness.scenario_model import (
    DEFAULT_MATCH,
    DEFAULT_MAX_ROUNDS,
    DEFAULT_TIER,
    Expectation,
    ExpectedCall,
    FinalCheck,
    FixtureSpec,
    Scenario,
    ToolSpec,
    Turn,
)


def _acceptable(value: Any) -> list[Any]:
    """A list in YAML lists acceptable values; a scalar or mapping is the one acceptable value."""
    return list(value) if isinstance(value, list) else [value]


def _final(data: dict[str, Any] | None) -> FinalCheck | None:
    if data is None:
        return None
    contains = data.get("contains") or []
    return FinalCheck(
        contains=[contains] if isinstance(contains, str) else list(contains),
        regex=data.get("regex"),
        contains_any=list(data.get("contains_any") or []),
        icase=bool(data.get("icase", False)),
    )


def _expectation(data: dict[str, Any] | None) -> Expectation:
    if not data:
        return Expectation()
    calls = data.get("calls")
    return Expectation(
        calls=None
        if calls is None
        else [
            ExpectedCall(
                name=c["name"],
                arguments={k: _acceptable(v) for k, v in (c.get("arguments") or {}).items()},
                optional=list(c.get("optional") or []),
            )
            for c in calls
        ],
        order=data.get("order", "any"),
        no_call=bool(data.get("no_call", False)),
        escalation=list(data.get("escalation") or []),
        final=_final(data.get("final")),
    )


_FIXTURE_KINDS = ("result", "by_args", "error", "sequence", "files")


def _fixture(data: dict[str, Any], base_dir: Path) -> FixtureSpec:
    kind = next(k for k in _FIXTURE_KINDS if k in data)
    return FixtureSpec(kind=kind, config=dict(data), base_dir=str(base_dir))


def scenario_from_data(data: dict[str, Any], suite_id: str, where: str, line: int, base_dir: Path) -> Scenario:
    tools = [
        ToolSpec(
            tool=Tool(
                name=t["name"],
                description=t.get("description", ""),
                parameters=t.get("parameters") or {"type": "object", "properties": {}},
                tier=ToolTier.parse(t.get("tier", DEFAULT_TIER)),
                requires_confirmation=bool(t.get("requires_confirmation", False)),
            ),
            fixture=_fixture(t["fixture"], base_dir),
        )
        for t in data.get("tools") or []
    ]
    termination = data.get("expect_termination")
    return Scenario(
        id=data["id"],
        suite=suite_id,
        description=data.get("description", ""),
        tags=list(data.get("tags") or []),
        tier=ToolTier.parse(data.get("tier", DEFAULT_TIER)),
        max_rounds=int(data.get("max_rounds", DEFAULT_MAX_ROUNDS)),
        match=data.get("match", DEFAULT_MATCH),
        system=data.get("system"),
        tools=tools,
        turns=[Turn(user=t["user"], expect=_expectation(t.get("expect"))) for t in data["turns"]],
        source_path=where,
        line=line,
        expect_termination=[termination] if isinstance(termination, str) else (list(termination) if termination else None),
    )
