"""Re-read recorded runs from their cassettes after UTP's parsing changed (``utp rescore``).

A recorded run's record holds what the model said (also kept, byte for byte,
in its cassette) and what UTP made of it when it was recorded: the parsed
calls, the registry's decisions, the answers. Scores are not in it: reports
and tuning derive them from the record every time they are built, so a
scoring change needs no rewrite at all. When a later UTP *reads* those same
outputs differently (a call format it did not know, a repair it did not
make), replaying the cassettes no longer gives the recorded reading back.
Re-recording would ask the model again; this asks nobody: it replays each
model's cassettes through the runner with the current code and rewrites only
the records whose reading changed, keeping what replay cannot measure (the
client-side clocks, the recording's provenance) and saying in the record
when it was re-read, by which UTP, and which calls it held before.

Only each run's latest record is re-read (older lines are the history of
earlier recordings, whose cassettes were since replaced). The results file is
rewritten atomically, and not at all when nothing changed.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import warnings
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from harness.records import RunKey, TornRecordWarning, read_records, results_path
from harness.runrecord import RunRecord
from utp.fileio import write_text_atomic

#: counters measured by the client's clock: a replay cannot measure them, so the recording's stay
CLIENT_CLOCK = ("wall_s", "ttft_s")
#: the per-round field measured the same way
ROUND_CLOCK = "client_wall_s"


class RescoreError(RuntimeError):
    """Nothing can be re-read as asked (no recorded runs, a replay that failed)."""


def recorded_model_names(results_dir: Path) -> list[str]:
    """Models with at least one recorded (not replayed, not live) run in ``results_dir``."""
    names: dict[str, None] = {}
    for record in read_records(results_dir, latest_only=False):
        if record.get("mode") == "record":
            names[record["model"]] = None
    return list(names)


def reading(record: dict[str, Any]) -> Any:
    """What UTP made of the model's outputs (calls, decisions, answers, errors), clocks left out.

    Scores are derived from this and the scenario whenever a report is built,
    so a run is rewritten only when the reading itself changed.
    """

    def scrub(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: scrub(v) for k, v in value.items() if k not in (*CLIENT_CLOCK, ROUND_CLOCK, "duration_s")}
        if isinstance(value, list):
            return [scrub(v) for v in value]
        return value

    return scrub({"turns": record.get("turns") or [], "error": record.get("error")})


def rescored_record(recorded: dict[str, Any], replayed: dict[str, Any], when: str, version: str) -> dict[str, Any] | None:
    """``recorded`` with the replay's reading of the same outputs; None when the reading did not change.

    The rewritten record keeps the recording's provenance and clocks and
    drops the ``scores`` an older runner stored (they judged the old reading).
    """
    if reading(recorded) == reading(replayed):
        return None
    record = {k: v for k, v in recorded.items() if k not in RunRecord.LEGACY}
    record["turns"] = _turns_with_recorded_clocks(replayed.get("turns", []), recorded.get("turns", []))
    record["error"] = replayed.get("error")
    if "outcome" in replayed:
        record["outcome"] = replayed["outcome"]
    record["rescored"] = {"at": when, "utp_version": version, "previous_calls": _calls(recorded)}
    return record


def _calls(record: dict[str, Any]) -> list[list[Any]]:
    """``[turn, round, name, decision]`` of every call a record holds: what the older reading made of the run."""
    return [[t, r, call.get("name"), call.get("decision")]
            for t, turn in enumerate(record.get("turns") or [])
            for r, round_ in enumerate(turn.get("rounds") or [])
            for call in round_.get("calls") or []]


def _turns_with_recorded_clocks(turns: list[dict[str, Any]], recorded: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The replay's turns, each round keeping the client clocks measured while recording (wall time, first token)."""
    out = []
    for t, turn in enumerate(turns):
        rounds = []
        for r, round_ in enumerate(turn.get("rounds", [])):
            try:
                then = recorded[t]["rounds"][r]
            except (IndexError, KeyError, TypeError):
                then = None
            rounds.append(_with_clocks(round_, then) if isinstance(then, dict) else round_)
        out.append({**turn, "rounds": rounds})
    return out


def _with_clocks(round_: dict[str, Any], recorded: dict[str, Any]) -> dict[str, Any]:
    out = dict(round_)
    if recorded.get(ROUND_CLOCK) is not None:
        out[ROUND_CLOCK] = recorded[ROUND_CLOCK]
    then, now = recorded.get("counters"), round_.get("counters")
    if isinstance(then, dict) and isinstance(now, dict):
        out["counters"] = {**now, **{k: then[k] for k in CLIENT_CLOCK if then.get(k) is not None}}
    return out


def replay_recorded(model: str, cassette_dir: Path, scratch: Path) -> list[dict[str, Any]]:
    """Every recorded run of ``model`` replayed from its cassette by the runner, nothing written but ``scratch``.

    Runs that errored when recorded error again and stay as they were; a
    cassette that cannot be replayed or a conformance failure stops the
    re-reading, since the replay would not be the recorded run.
    """
    from harness.runner import run_matrix
    from harness.runplan import RunnerConfig, recorded_formats, recorded_repeats
    from harness.scenarios import load_suites

    formats = recorded_formats(cassette_dir, [model])
    if not formats:
        raise RescoreError(f"no cassettes for {model} under {cassette_dir}")
    config = RunnerConfig(models=[model], formats=formats, suites=load_suites(None), mode="replay",
                          results_dir=scratch, cassette_dir=cassette_dir, only_recorded=True, concurrency=2,
                          show_progress=False, repeats=recorded_repeats(cassette_dir, [model]))
    result = run_matrix(config)
    broken = result.cassette_errors()
    if broken or result.conformance_failures:
        first = (broken[0].get("error") or {}).get("message", "") if broken else result.conformance_failures[0]
        raise RescoreError(f"replaying {model}'s cassettes failed ({first.splitlines()[0]}); "
                           "its results were left as they were")
    return result.records


def rescore_model(model: str, results_dir: Path, cassette_dir: Path, when: str | None = None) -> int:
    """Replay ``model``'s cassettes and rewrite its recorded runs read differently now; returns how many."""
    from utp import __version__

    path = results_path(results_dir, model)
    if not path.exists():
        raise RescoreError(f"{path}: no results file for {model}")
    with tempfile.TemporaryDirectory(prefix="utp-rescore-") as scratch:
        replayed = {RunKey.of(r): r for r in replay_recorded(model, cassette_dir, Path(scratch))}
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    latest: dict[RunKey, int] = {}
    parsed: dict[int, dict[str, Any]] = {}
    for number, line in enumerate(lines):
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue  # a torn line stays as it is; readers skip it with a warning
        if isinstance(record, dict) and record.get("mode") == "record" and {"model", "format", "suite", "scenario", "repeat"} <= record.keys():
            latest[RunKey.of(record)] = number
            parsed[number] = record
    stamp = when or datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    changed = 0
    for key, number in latest.items():
        replay = replayed.get(key)
        recorded = parsed[number]
        if replay is None or replay.get("scenario_hash") != recorded.get("scenario_hash"):
            continue  # no cassette for it now, or the scenario changed since: replay would not be this run
        new = rescored_record(recorded, replay, stamp, __version__)
        if new is not None:
            lines[number] = json.dumps(new, ensure_ascii=False, separators=(",", ":"), default=str) + "\n"
            changed += 1
    if changed:
        write_text_atomic(path, "".join(lines))
    return changed


def add_rescore_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument("--model", action="append", help="model spec (repeatable or comma list; default: every model with recorded runs)")
    parser.add_argument("--results-dir", default="reports/results", help="run records (default: %(default)s)")
    parser.add_argument("--cassette-dir", default="scenarios/cassettes", help="cassettes (default: %(default)s)")
    parser.add_argument("--reports-dir", default="reports", help="reports (default: %(default)s)")
    parser.add_argument("--no-reports", action="store_true", help="do not rebuild reports or tuned profiles afterwards")
    parser.add_argument("--tuned", default="reports/tuned_profiles.toml",
                        help="tuned profiles to re-derive when they exist (default: %(default)s)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """``utp rescore``: re-read recorded runs with this UTP; prints what changed per model."""
    ns = add_rescore_arguments(argparse.ArgumentParser(prog="utp rescore", description=__doc__.splitlines()[0])).parse_args(argv)
    results_dir = Path(ns.results_dir)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TornRecordWarning)
        models = [m.strip() for value in ns.model or [] for m in value.split(",") if m.strip()] or recorded_model_names(results_dir)
    if not models:
        print(f"utp rescore: no recorded runs under {results_dir}; record some with `utp eval --record`", file=sys.stderr)
        return 2
    try:
        counts = {model: rescore_model(model, results_dir, Path(ns.cassette_dir)) for model in models}
    except RescoreError as exc:
        print(f"utp rescore: {exc}", file=sys.stderr)
        return 2
    for model, count in counts.items():
        print(f"{model}: {count} recorded run(s) re-read differently and rewritten" if count
              else f"{model}: every recorded reading stands")
    if any(counts.values()) and not ns.no_reports:
        from harness.reporting import build_reports

        build_reports(results_dir, ns.reports_dir)
        print(f"Reports rebuilt in {ns.reports_dir}")
        _retune(results_dir, Path(ns.tuned))
    return 0


def _retune(results_dir: Path, tuned: Path) -> None:
    """Re-derive tuned profiles a changed reading feeds, so their evidence is the reports' evidence.

    Only a file that exists is rewritten: rescoring must not start steering a
    negotiator that was never tuned.
    """
    if not tuned.is_file():
        return
    from harness.tuning import retune

    retune([results_dir], tuned)
    print(f"Tuned profiles re-derived in {tuned}")
