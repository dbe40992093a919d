"""Typed errors: calls the registry refused, by decision, and server failures, by kind."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from harness.metrics.base import Group, Metric, register
from harness.metrics.judge import RunJudgement
from harness.metrics.schema import COUNT
from harness.outcomes import error_kind
from utp.backends.base import BackendErrorKind
from utp.types import Decision

#: error kinds the runner records when a replay cannot be trusted
CASSETTE_ERRORS = frozenset({"missing_cassette", "cassette_mismatch", "cassette_error"})
#: error kinds recognised at the start of an error string ("tools_unsupported (HTTP 400): ...")
KNOWN_ERROR_KINDS = frozenset({k.value for k in BackendErrorKind} | CASSETTE_ERRORS | {"harness_error"})


def known_error_kind(error: Any) -> str | None:
    """A record's or turn's error kind; kinds the scorer does not know count as ``"error"``."""
    kind = error_kind(error)
    if kind is None or isinstance(error, Mapping):
        return kind
    return kind if kind in KNOWN_ERROR_KINDS else "error"


@register
class Errors(Metric):
    name = "errors"
    position = 140
    description = "Refused calls by decision (anything but executed) and backend failures by BackendErrorKind value."
    run_fields = ("errors", "backend_errors")
    summary_fields = {"errors": COUNT}

    def score(self, run: RunJudgement) -> dict[str, Any]:
        refused = Counter(str(c.call.decision) for c in run.calls
                          if c.call.decision and c.call.decision != Decision.EXECUTED)
        backend: Counter[str] = Counter()
        for turn in run.record.turns:
            kind = known_error_kind(turn.error)
            if kind:
                backend[kind] += 1
        kind = known_error_kind(run.record.error)
        if kind:
            backend[kind] += 1
        return {"errors": dict(sorted(refused.items())), "backend_errors": dict(sorted(backend.items()))}

    def summarise(self, group: Group) -> dict[str, Any]:
        return {"errors": sum(sum((s.get("errors") or {}).values()) + sum((s.get("backend_errors") or {}).values())
                              for s in group.scores)}
