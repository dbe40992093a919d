"""The per-model report as data: what ``compatibility.json`` holds and every renderer reads.

Markdown, CSV and HTML are views of this one dict, so they cannot disagree.
Its shape is ``harness/schemas/report.schema.json``; it contains nothing that
depends on when or where the report was built (no clock, no absolute paths),
so rebuilding from the same records gives the same bytes.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from harness.metrics import format_row_schema
from harness.outcomes import errored_by_class, results_only
from harness.reporting.constraint import constraint_lift
from harness.reporting.loading import model_slug
from harness.reporting.text import truncate_middle
from harness.reporting.verdict import build_verdict, sources_summary
from harness.runrecord import RoundRecord, RunRecord
from harness.stats import aggregate, breakdown, format_sensitivity

REPORT_VERSION = 1
SCHEMA_PATH = Path(__file__).resolve().parent.parent / "schemas" / "report.schema.json"

#: failures shown per format (the rest are counted, not shown)
FAILURES_PER_FORMAT = 3
FAILURE_TEXT_LIMIT = 1200


def _clean(value: Any) -> Any:
    """pandas NaN/numpy scalars → plain JSON values."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if hasattr(value, "item") and not isinstance(value, (list, dict, str)):
        value = value.item()
        if isinstance(value, float) and math.isnan(value):
            return None
    return value


def frame_rows(frame: pd.DataFrame, drop: Sequence[str] = ()) -> list[dict[str, Any]]:
    return [
        {k: _clean(v) for k, v in row.items() if k not in drop}
        for row in frame.to_dict(orient="records")
    ]


def _provenance(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    engines: set[str] = set()
    versions: set[str] = set()
    digests: set[str] = set()
    templates: set[str] = set()
    parsers: set[str] = set()
    hardware: set[str] = set()
    options: dict[str, Any] = {}
    dates: list[str] = []
    modes: Counter[str] = Counter()
    cassettes = 0
    for record in records:
        prov = record.get("provenance") or {}
        info = prov.get("model") or {}
        modes[str(record.get("mode") or "unknown")] += 1
        engine = info.get("engine") or prov.get("backend")
        if engine:
            engines.add(str(engine))
        version = info.get("engine_version") or prov.get("server_version")
        if version:
            versions.add(str(version))
        if info.get("digest"):
            digests.add(str(info["digest"]))
        if info.get("template_hash"):
            templates.add(str(info["template_hash"]))
        if info.get("parser"):
            parsers.add(str(info["parser"]))
        if prov.get("hardware"):
            hardware.add(str(prov["hardware"]))
        if prov.get("options"):
            options[json.dumps(prov["options"], sort_keys=True)] = prov["options"]
        if prov.get("cassette"):
            cassettes += 1
        for key in ("recorded_at", "started_at", "date"):
            stamp = prov.get(key) or record.get(key)
            if isinstance(stamp, str) and stamp:
                dates.append(stamp)
    return {
        "engines": sorted(engines),
        "server_versions": sorted(versions),
        "model_digests": sorted(digests),
        "template_hashes": sorted(templates),
        "server_tool_parsers": sorted(parsers),
        "hardware": sorted(hardware),
        "options": [options[k] for k in sorted(options)],
        "modes": dict(sorted(modes.items())),
        "from_cassettes": cassettes,
        "dates": {"first": min(dates) if dates else None, "last": max(dates) if dates else None},
    }


def _round_text(rnd: RoundRecord) -> str:
    text = str(rnd.raw_text or rnd.content or "")
    calls = [
        f"→ {c.name}({json.dumps(c.arguments, ensure_ascii=False, sort_keys=True)}) "
        f"[{c.format or '?'}; {c.decision or '?'}]"
        for c in rnd.calls
    ]
    return "\n".join(part for part in (text, *calls) if part) or "(empty response)"


def _failure_text(record: Mapping[str, Any]) -> str:
    """The raw text where the run went wrong.

    A parse failure shows the round that could not be read; a leak shows the
    final answer; a task failure shows the whole turn, round by round, with
    the calls as extracted, because the mistake may be in any of them.
    """
    where = (record.get("scores") or {}).get("failure_at") or {}
    run = RunRecord.of(record)
    if not run.turns:
        return str(run.error or "(no turns recorded)")
    t = where.get("turn", len(run.turns) - 1)
    turn = run.turns[t] if isinstance(t, int) and 0 <= t < len(run.turns) else run.turns[-1]
    chosen = next((rnd for rnd in turn.rounds if rnd.index == where.get("round")), None)
    if where.get("kind") == "parse" and chosen is not None:
        return _round_text(chosen)
    if where.get("kind") == "leak" and turn.final_answer:
        return str(turn.final_answer)
    parts = [f"── round {rnd.index if rnd.index is not None else i} ──\n{_round_text(rnd)}"
             for i, rnd in enumerate(turn.rounds)]
    error = turn.error or run.error
    if error:
        parts.append(f"── error ──\n{error}")
    return "\n".join(parts) or "(no rounds recorded)"


def _failures(records: Sequence[Mapping[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, int]]:
    shown: list[dict[str, Any]] = []
    counts: Counter[str] = Counter()
    for record in records:
        scores = record.get("scores") or {}
        failed = scores.get("task_success") is False or scores.get("conformance_failures")
        if not failed:
            continue
        fmt = str(record.get("format"))
        counts[fmt] += 1
        if counts[fmt] > FAILURES_PER_FORMAT:
            continue
        reasons = [reason for turn in scores.get("turns") or [] for reason in turn.get("reasons") or []]
        reasons += [f"{c['kind']}: {c['detail']}" for c in scores.get("conformance_failures") or []]
        text, truncated = truncate_middle(_failure_text(record), FAILURE_TEXT_LIMIT)
        shown.append(
            {
                "format": fmt,
                "suite": str(record.get("suite")),
                "scenario": str(record.get("scenario")),
                "repeat": int(record.get("repeat") or 0),
                "reasons": reasons or ["task not completed"],
                "text": text,
                "truncated": truncated,
            }
        )
    return shown, dict(sorted(counts.items()))


def _errors(records: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    counts: Counter[tuple[str, str, str]] = Counter()
    for record in records:
        scores = record.get("scores") or {}
        fmt = str(record.get("format"))
        for kind, n in (scores.get("errors") or {}).items():
            counts[(fmt, "call", str(kind))] += int(n)
        for kind, n in (scores.get("backend_errors") or {}).items():
            counts[(fmt, "backend", str(kind))] += int(n)
    return [{"format": f, "source": s, "kind": k, "count": counts[(f, s, k)]} for f, s, k in sorted(counts)]


def _conformance(records: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for record in records:
        for item in (record.get("scores") or {}).get("conformance_failures") or []:
            out.append(
                {"format": str(record.get("format")), "suite": str(record.get("suite")),
                 "scenario": str(record.get("scenario")), "repeat": int(record.get("repeat") or 0),
                 "kind": str(item.get("kind")), "detail": str(item.get("detail"))}
            )
    return out


def _rescored(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Recorded runs whose scores a later UTP re-derived from the same cassettes (``utp rescore``)."""
    notes = [r["rescored"] for r in records if isinstance(r.get("rescored"), Mapping)]
    return {
        "runs": len(notes),
        "by": sorted({str(n.get("utp_version")) for n in notes}),
        "dates": sorted({str(n.get("at", ""))[:10] for n in notes}),
    }


def model_report(model: str, records: Sequence[Mapping[str, Any]], synthetic_excluded: int = 0) -> dict[str, Any]:
    """Everything the reports say about one model, from its (non-synthetic, scored) records.

    Errored runs are counted in ``sources`` and left out of every figure.
    """
    table = aggregate(records)
    errored = errored_by_class(records)
    records = results_only(records)
    formats = frame_rows(table, drop=("model",))
    sensitivity_rows = frame_rows(format_sensitivity(table), drop=("model",))
    suites = frame_rows(breakdown(records, "suite"), drop=("model",))
    categories = frame_rows(breakdown(records, "category"), drop=("model",))
    provenance = _provenance(records)
    failures, failure_counts = _failures(records)
    errors = _errors(records)
    report: dict[str, Any] = {
        "report_version": REPORT_VERSION,
        "model": model,
        "slug": model_slug(model),
        "sources": {
            "runs": len(records),
            "errored": sum(errored.values()),
            "errored_by_class": errored,
            "synthetic_excluded": synthetic_excluded,
            "summary": sources_summary(len(records), provenance, synthetic_excluded),
            "rescored": _rescored(records),
        },
        "provenance": provenance,
        "formats": formats,
        "sensitivity": sensitivity_rows[0] if sensitivity_rows else None,
        "suites": suites,
        "bfcl_categories": categories,
        "errors": errors,
        "conformance": _conformance(records),
        "failure_counts": failure_counts,
        "failures": failures,
    }
    lift = constraint_lift(records)
    report["constraint_lift"] = lift.as_dict() if lift is not None else None
    report["verdict"] = build_verdict(report)
    return report


def render_json(report: Mapping[str, Any]) -> str:
    return json.dumps(report, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def load_schema() -> dict[str, Any]:
    """The report's JSON Schema; the rows of ``formats`` are the registered metrics' summary fields."""
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    schema["properties"]["formats"]["items"] = format_row_schema()
    return schema
