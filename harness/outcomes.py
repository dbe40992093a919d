"""What kind of result a run is: the model answered, the server refused the format, or nothing happened.

A run that died on a refused connection says nothing about the model or the
format, yet scored as "task failed" it drags a format to 0 % and hands the
recommendation to whichever format happened to run before the server went
away. So every run record is classified once, here, and everything that
aggregates (screen summary, reports, tuning, ``--resume``, cassette writing)
asks this module instead of reading error strings itself:

* ``completed``: the model answered (whatever it answered); scored.
* ``unsupported``: the server answered that this model cannot take the
  format (``tools_unsupported``, ``thinking_unsupported``,
  ``structured_output_unsupported``): a real, recordable fact about the
  format, shown as such, never a task failure of the model.
* ``errored``: transport, server, timeout, harness or cassette failure: never
  scored, never in a denominator, never written as a cassette, never "done"
  for ``--resume``; counted by class so people see it.
"""

from __future__ import annotations

import enum
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any


class Outcome(str, enum.Enum):
    COMPLETED = "completed"
    UNSUPPORTED = "unsupported"
    ERRORED = "errored"


class ErrorClass(str, enum.Enum):
    """Why an errored run produced no result, in the words a person acts on."""

    CONNECTION = "connection"  # nothing answered: start the server, check the host
    TIMEOUT = "timeout"  # something answered too slowly: raise --timeout, check the server's load
    SERVER = "server"  # the server answered with an error (5xx, 404 model, bad request, broken stream)
    CASSETTE = "cassette"  # a replay had no (or a corrupt) recording: record with RECORD=1
    HARNESS = "harness"  # UTP's harness raised: a bug to report


#: error kind (a BackendErrorKind value, or the runner's own) → class; a kind not listed is SERVER
ERROR_CLASSES: dict[str, ErrorClass] = {
    "connect_error": ErrorClass.CONNECTION,
    "not_installed": ErrorClass.CONNECTION,
    "timeout": ErrorClass.TIMEOUT,
    "missing_cassette": ErrorClass.CASSETTE,
    "cassette_mismatch": ErrorClass.CASSETTE,
    "cassette_error": ErrorClass.CASSETTE,
    "harness_error": ErrorClass.HARNESS,
}

#: server answers that mean "this model cannot take this format", not "the server failed"
UNSUPPORTED_KINDS = frozenset({"tools_unsupported", "thinking_unsupported", "structured_output_unsupported"})

#: kinds that fail every later run on the same host the same way: a few in a row stop the eval
HOST_FATAL_KINDS = frozenset({"connect_error", "timeout", "model_not_found", "not_installed"})

#: a model whose runs errored more often than this gets a warning, never a recommendation
MAX_ERRORED_SHARE = 0.5


def mostly_errored(errored: int, results: int) -> bool:
    """Too many runs errored for the results to be trusted (the rule tuning and reports share)."""
    return errored > MAX_ERRORED_SHARE * (errored + results)

_KIND_AT_START = re.compile(r"\s*([a-z_]+)\b")


def error_kind(error: Any) -> str | None:
    """The kind of a record's ``{"kind", "message"}`` error or a loop's ``"kind (HTTP 400): message"`` string."""
    if error is None or error == "":
        return None
    if isinstance(error, Mapping):
        return str(error.get("kind") or error.get("type") or "error")
    match = _KIND_AT_START.match(str(error))
    return match.group(1) if match else "error"


def error_text(error: Any) -> str:
    if isinstance(error, Mapping):
        return str(error.get("message") or error.get("kind") or error)
    return str(error or "")


@dataclass(frozen=True)
class RunOutcome:
    outcome: Outcome
    #: the failure's kind ("connect_error", "tools_unsupported", "missing_cassette"...); None when completed
    kind: str | None = None
    #: for errored runs only
    error_class: ErrorClass | None = None
    message: str = ""

    @property
    def is_result(self) -> bool:
        """Does this run say something about the model and format (scored or shown as unsupported)?"""
        return self.outcome is not Outcome.ERRORED

    def to_dict(self) -> dict[str, Any]:
        return {
            "outcome": self.outcome.value,
            "kind": self.kind,
            "error_class": self.error_class.value if self.error_class else None,
            "message": self.message,
        }


def _failures(record: Mapping[str, Any]) -> Iterable[Any]:
    """The run's own error, then each turn the server ended (a turn's other errors, such as an
    unreadable call, are the model's doing and part of a completed run)."""
    yield record.get("error")
    for turn in record.get("turns") or []:
        if turn.get("termination") == "backend_error":
            yield turn.get("error") or "error"


def classify(record: Mapping[str, Any]) -> RunOutcome:
    """The outcome of one run record (new records carry it; older ones are classified from their errors)."""
    for failure in _failures(record):
        kind = error_kind(failure)
        if kind is None:
            continue
        message = error_text(failure)
        if kind in UNSUPPORTED_KINDS:
            return RunOutcome(Outcome.UNSUPPORTED, kind, None, message)
        return RunOutcome(Outcome.ERRORED, kind, ERROR_CLASSES.get(kind, ErrorClass.SERVER), message)
    return RunOutcome(Outcome.COMPLETED)


def outcome_of(record: Mapping[str, Any]) -> Outcome:
    return classify(record).outcome


def is_errored(record: Mapping[str, Any]) -> bool:
    return outcome_of(record) is Outcome.ERRORED


def results_only(records: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Records that are results (completed or unsupported); errored runs left out."""
    return [r for r in records if not is_errored(r)]


def errored_by_class(records: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """Errored runs counted by class, largest first (``{"connection": 1706}``)."""
    counts: Counter[str] = Counter()
    for record in records:
        outcome = classify(record)
        if outcome.error_class is not None:
            counts[outcome.error_class.value] += 1
    return dict(counts.most_common())


#: what to do about each class, for the one line that explains a stopped eval or a failed exit code
ADVICE: dict[ErrorClass, str] = {
    ErrorClass.CONNECTION: "is the server running at that host? (set OLLAMA_HOST / --host, or replay with REPLAY=1)",
    ErrorClass.TIMEOUT: "the server is overloaded or the model too slow: raise --timeout or check the server",
    ErrorClass.SERVER: "see the server's log; `--resume` runs these again once it is fixed",
    ErrorClass.CASSETTE: "record them with RECORD=1 (`make eval MODEL=... RECORD=1`); this is not a UTP failure",
    ErrorClass.HARNESS: "a bug in UTP's harness: please report it with the message above (UTP_DEBUG=1 for a traceback)",
}


__all__ = [
    "ADVICE",
    "ERROR_CLASSES",
    "ErrorClass",
    "HOST_FATAL_KINDS",
    "MAX_ERRORED_SHARE",
    "mostly_errored",
    "Outcome",
    "RunOutcome",
    "UNSUPPORTED_KINDS",
    "classify",
    "error_kind",
    "error_text",
    "errored_by_class",
    "is_errored",
    "outcome_of",
    "results_only",
]
