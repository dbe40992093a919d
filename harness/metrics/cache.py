"""Scores remembered by (what the run recorded, the scenario's hash, every metric's version).

``utp eval`` derives the scores of its runs for the summary table, then builds
the reports and the tuning profile from the same records, each of which
derives every run's scores again.
Scoring is pure, so a run whose record, scenario and metrics are unchanged
gets the same figures: they are computed once per process and handed out
again. The key leaves out what a record carries about earlier scoring
(the ``scores`` an older runner stored, ``rescored``) and its derived
``outcome``; the scores are always computed from the record, never read from it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from typing import Any

from harness.metrics.base import metrics_version
from harness.metrics.judge import SCORER_VERSION
from harness.metrics.markup import leak_triggers
from harness.runrecord import RunRecord
from harness.scenario_model import Scenario

#: keys of a record that are not what happened in the run (an older runner's stored scores among them)
_DERIVED = RunRecord.LEGACY | {"rescored", "outcome"}
#: runs remembered at most (a full matrix is a few thousand)
MAX_ENTRIES = 50_000

_cache: dict[tuple[Any, ...], Mapping[str, Any]] = {}


def _identity(record: Mapping[str, Any]) -> str:
    happened = {k: v for k, v in record.items() if k not in _DERIVED}
    text = json.dumps(happened, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()


def cached_scores(
    record: Mapping[str, Any],
    scenario: Scenario | None,
    score: Callable[[Mapping[str, Any], Scenario | None], dict[str, Any]],
) -> dict[str, Any]:
    """``score(record, scenario)``, computed once per (record, scenario hash, metric versions, leak triggers).

    Each caller gets its own copy of the top level, so adding a key to one
    result never changes another's.
    """
    key = (_identity(record), scenario.scenario_hash if scenario is not None else None, SCORER_VERSION,
           metrics_version(), tuple(leak_triggers()))
    found = _cache.get(key)
    if found is None:
        if len(_cache) >= MAX_ENTRIES:
            _cache.clear()
        found = _cache[key] = score(record, scenario)
    return dict(found)


def clear() -> None:
    _cache.clear()


__all__ = ["MAX_ENTRIES", "cached_scores", "clear"]
