"""Run records: one JSON line per finished run, appended so nothing finished is ever lost.

An evaluation can take hours on a slow machine and be interrupted at any
point. Each record is written with a single ``write`` + ``fsync`` on an
``O_APPEND`` file, so after a crash the file holds every finished run and at
worst one torn last line, which readers skip with a warning. ``--resume`` then
runs only what is missing or errored, and only when the scenario did not change
since (a different ``scenario_hash`` means the old result answers another question).
"""

from __future__ import annotations

import json
import os
import re
import warnings
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.outcomes import Outcome, is_errored, outcome_of
from harness.runrecord import RecordError, RunRecord

RECORD_SCHEMA = 1
DEFAULT_RESULTS_DIR = Path("reports") / "results"


#: the fields that name a run (one record per run and repeat is the newest one)
RUN_KEY_FIELDS = frozenset({"model", "format", "suite", "scenario", "repeat"})


class TornRecordWarning(UserWarning):
    """A line of a results file that is not a complete JSON record (an interrupted write)."""


@dataclass(frozen=True, order=True)
class RunKey:
    model: str
    format: str
    suite: str
    scenario: str
    repeat: int

    @classmethod
    def of(cls, record: dict[str, Any]) -> "RunKey":
        return cls(record["model"], record["format"], record["suite"], record["scenario"], int(record["repeat"]))


def model_slug(model: str) -> str:
    """A filesystem-safe name: ``local:smollm2-135m`` → ``local_smollm2-135m``, ``llama3.2:3b`` → ``llama3.2_3b``."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", model.strip()).strip("_.")
    return slug or "model"


def results_path(results_dir: str | Path, model: str) -> Path:
    return Path(results_dir) / f"{model_slug(model)}.jsonl"


def append_record(results_dir: str | Path, record: dict[str, Any]) -> Path:
    """Append one record durably (one write, flush, fsync); returns the file written."""
    path = results_path(results_dir, record["model"])
    path.parent.mkdir(parents=True, exist_ok=True)
    line = (json.dumps(record, ensure_ascii=False, separators=(",", ":"), default=str) + "\n").encode("utf-8")
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        _heal_torn_tail(fd)
        written = os.write(fd, line)
        while written < len(line):  # short writes are rare, but a record must be whole
            written += os.write(fd, line[written:])
        os.fsync(fd)
    finally:
        os.close(fd)
    return path


def _heal_torn_tail(fd: int) -> None:
    """After an interrupted write, start the next record on a fresh line so only the torn one is lost."""
    size = os.fstat(fd).st_size
    if size == 0:
        return
    if os.pread(fd, 1, size - 1) != b"\n":
        os.write(fd, b"\n")


def iter_records(path: str | Path, *, strict: bool = False) -> Iterator[dict[str, Any]]:
    """Records of one results file in write order.

    A line that is not JSON (a torn append) is skipped with a
    :class:`TornRecordWarning`. A JSON line that is not a run record is
    skipped with a warning too, unless ``strict`` (reports and tuning), where
    it is a :class:`~harness.runrecord.RecordError` naming file, line and field.
    """
    path = Path(path)
    try:
        handle = path.open("rb")
    except OSError as exc:
        raise RecordError(f"{path}: cannot read results file: {exc}") from None
    with handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            try:
                record = json.loads(raw.decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError):
                warnings.warn(f"{path}:{number}: skipped an incomplete record (interrupted write?)", TornRecordWarning, stacklevel=2)
                continue
            if strict:
                RunRecord.from_dict(record, f"{path}:{number}:")  # raises, naming the field
            elif not isinstance(record, dict) or not RUN_KEY_FIELDS <= record.keys():
                warnings.warn(f"{path}:{number}: skipped a line that is not a run record", TornRecordWarning, stacklevel=2)
                continue
            yield record


def result_files(results_dir: str | Path) -> list[Path]:
    directory = Path(results_dir)
    return sorted(directory.glob("*.jsonl")) if directory.is_dir() else []


def read_records(
    results_dir: str | Path, *, latest_only: bool = True, models: Iterable[str] | None = None, strict: bool = False
) -> list[dict[str, Any]]:
    """All records under ``results_dir``.

    With ``latest_only`` (the default) a run evaluated again replaces its older
    record, so evaluating twice never counts a run twice in a report.
    """
    wanted = {model_slug(m) for m in models} if models is not None else None
    records: list[dict[str, Any]] = []
    for path in result_files(results_dir):
        if wanted is not None and path.stem not in wanted:
            continue
        records.extend(iter_records(path, strict=strict))
    if not latest_only:
        return records
    return latest_per_run(records)


def latest_per_run(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The newest record of each run, except that a run that errored never hides an earlier result.

    Re-recording a model while its server dies must not replace good results
    with connection errors; an errored record is kept only when the run has
    no result at all (so its error is still counted).
    """
    latest: dict[RunKey, dict[str, Any]] = {}
    for record in records:
        key = RunKey.of(record)
        if key in latest and is_errored(record) and not is_errored(latest[key]):
            continue
        latest.pop(key, None)  # re-insert so order follows the latest write
        latest[key] = record
    return list(latest.values())


def completed_keys(results_dir: str | Path, models: Iterable[str] | None = None) -> dict[RunKey, str]:
    """Runs that completed, and the scenario hash each was run with (for ``--resume``).

    Errored runs (and runs a server refused as unsupported, which a proxy or a
    later server version may accept) are not done: ``--resume`` runs them again.
    """
    return {
        RunKey.of(r): r.get("scenario_hash", "")
        for r in read_records(results_dir, models=models)
        if outcome_of(r) is Outcome.COMPLETED
    }


def is_done(done: dict[RunKey, str], key: RunKey, scenario_hash: str) -> bool:
    return done.get(key) == scenario_hash
