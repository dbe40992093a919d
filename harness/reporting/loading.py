"""Reading stored run records for reports and tuning, with errors that say where.

Reports are rebuilt from ``reports/results/*.jsonl`` without running a model,
so a hand-edited or half-written results file must produce a message naming
the file and line, not a traceback. A scenario re-run with ``--resume`` or
again later appends a newer record for the same key; the newest one wins.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from harness import records as run_files
from harness.metrics import ensure_scores
from harness.records import model_slug
from harness.runrecord import RecordError
from utp.fileio import write_text_atomic


class ReportError(Exception):
    """Stored results that cannot be read (message names file, line and field)."""


def record_key(record: Mapping[str, Any]) -> tuple[str, str, str, str, int]:
    return (
        str(record.get("model")),
        str(record.get("format")),
        str(record.get("suite")),
        str(record.get("scenario")),
        int(record.get("repeat") or 0),
    )


def result_files(results_dir: str | Path) -> list[Path]:
    directory = Path(results_dir)
    if not directory.is_dir():
        raise ReportError(f"{directory}: results directory does not exist (run `utp eval` first)")
    return run_files.result_files(directory)


def read_records(path: str | Path) -> list[dict[str, Any]]:
    """Every record of one JSONL file (:func:`harness.records.iter_records`, strict: a bad record is an error)."""
    try:
        return list(run_files.iter_records(path, strict=True))
    except RecordError as exc:
        raise ReportError(str(exc)) from None


def load_records(results_dirs: str | Path | Iterable[str | Path]) -> list[dict[str, Any]]:
    """Records of one or more results directories, newest per run (an errored run never hides a result)."""
    dirs = [results_dirs] if isinstance(results_dirs, (str, Path)) else list(results_dirs)
    found = [record for directory in dirs for path in result_files(directory) for record in read_records(path)]
    return sorted(run_files.latest_per_run(found), key=record_key)


def load_scenarios(scenarios_dir: str | Path) -> dict[tuple[str, str], Any]:
    """(suite id, scenario id) → Scenario for every suite file under a directory."""
    from harness.scenarios import ScenarioError, load_suite, suite_files

    root = Path(scenarios_dir)
    if not root.is_dir():
        raise ReportError(f"{root}: scenarios directory does not exist")
    found: dict[tuple[str, str], Any] = {}
    problems: list[str] = []
    for path in suite_files(root, include_examples=True):
        try:
            suite = load_suite(path)
        except ScenarioError as exc:
            problems.append(str(exc))
            continue
        for scenario in suite.scenarios:
            found[(suite.id, scenario.id)] = scenario
    if problems:
        raise ReportError("cannot load scenarios:\n" + "\n".join(problems))
    return found


__all__ = [
    "ReportError",
    "ensure_scores",
    "load_records",
    "load_scenarios",
    "model_slug",
    "read_records",
    "record_key",
    "result_files",
    "write_text_atomic",
]
