"""The paragraph a reader acts on: which format to use, how sure we are, and what is unsafe.

A table of twelve columns answers every question except the one people ask
("what should I configure?"), so the verdict states the best format with its
interval and margin, says plainly when the lead is within noise, and puts a
tier-enforcement failure first because it outranks every accuracy figure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from harness.reporting.text import number, pct, rate_ci
from harness.stats import intervals_overlap, rank_formats
from utp.formats import PRESETS

#: native presets count as "working" from this share of calls in the native field ...
NATIVE_ADHERENCE_WORKS = 0.9
#: ... and below this share the model is writing its calls as text
NATIVE_ADHERENCE_TEXT = 0.5


def _is_native(format_name: str) -> bool:
    bundle = PRESETS.get(format_name)
    return bool(bundle and bundle.sends_native_tools)


def native_tools_status(report: Mapping[str, Any]) -> tuple[str, str]:
    """(status, sentence) for how the model handles native tool definitions.

    "works" needs the calls to arrive in the native field *and* a task success
    statistically on par with the best format; otherwise native is "partial",
    "text_calls" (calls written as text), "unsupported" or "untested".
    """
    rows = [r for r in report["formats"] if _is_native(str(r["format"]))]
    if not rows:
        return "untested", "Native tools: not tested (no native-format runs)."
    unsupported = sum(
        e["count"] for e in report["errors"]
        if e["source"] == "backend" and e["kind"] == "tools_unsupported" and _is_native(e["format"])
    )
    runs = sum(int(r["runs"]) for r in rows)
    best = rank_formats(rows)[0]
    figures = f"{best['format']}: task success {rate_ci(best['task_success'], best['ci_low'], best['ci_high'])}"
    if unsupported and unsupported >= runs:
        return "unsupported", "Native tools: the server refuses tool definitions for this model (tools_unsupported)."
    adherence = best.get("format_adherence")
    if adherence is not None and adherence < NATIVE_ADHERENCE_TEXT:
        return (
            "text_calls",
            f"Native tools: the model gets native definitions but writes its calls as text "
            f"(only {pct(adherence)} in the tool_calls field); UTP's content parsers recover them ({figures}).",
        )
    overall, _ = best_and_runner_up(report["formats"])
    on_par = overall is None or overall is best or intervals_overlap(best, overall)
    if adherence is not None and adherence >= NATIVE_ADHERENCE_WORKS and (best.get("task_success") or 0) > 0 and on_par:
        return "works", f"Native tools work ({figures}; {pct(adherence)} of calls in the tool_calls field)."
    lag = "" if on_par else f", behind {overall['format']}" if overall else ""
    return "partial", (
        f"Native tools work partly ({figures}{lag}; calls in the tool_calls field: {pct(adherence)})."
    )


def tier_status(report: Mapping[str, Any]) -> tuple[str, str]:
    attempts = sum(int(r.get("escalation_attempts") or 0) for r in report["formats"])
    blocked = sum(int(r.get("blocked") or 0) for r in report["formats"])
    executed = sum(int(r.get("executed_violations") or 0) for r in report["formats"])
    if executed:
        return (
            "violated",
            f"Tier enforcement FAILED: {executed} out-of-tier call(s) were executed "
            f"({attempts} attempts, {blocked} blocked). This is a UTP conformance failure.",
        )
    if attempts:
        return "enforced", f"Tier enforcement held: {attempts} out-of-tier attempt(s), all {blocked} blocked."
    return "not_exercised", "Tier enforcement: no out-of-tier attempts in these runs."


def sources_summary(runs: int, provenance: Mapping[str, Any], synthetic_excluded: int = 0) -> str:
    """``"48 runs recorded from ollama 0.12.10 on <hardware>, replayed"`` or the live equivalent."""
    engine = " ".join(
        part for part in (", ".join(provenance.get("engines") or []), ", ".join(provenance.get("server_versions") or []))
        if part
    ) or "an unrecorded engine"
    hardware = ", ".join(provenance.get("hardware") or []) or "unrecorded hardware"
    modes: Mapping[str, int] = provenance.get("modes") or {}
    replayed = modes.get("replay", 0)
    live = runs - replayed
    parts = []
    if replayed:
        parts.append(f"{replayed} run{'s' if replayed != 1 else ''} recorded from {engine} on {hardware}, replayed")
    if live:
        parts.append(f"{live} run{'s' if live != 1 else ''} live against {engine} on {hardware}")
    text = "; ".join(parts) if parts else "no runs"
    if synthetic_excluded:
        text += f" ({synthetic_excluded} synthetic run{'s' if synthetic_excluded != 1 else ''} excluded)"
    return text


def best_and_runner_up(rows: Sequence[Mapping[str, Any]]) -> tuple[Mapping[str, Any] | None, Mapping[str, Any] | None]:
    ranked = [r for r in rank_formats(rows) if r.get("task_success") is not None]
    return (ranked[0] if ranked else None, ranked[1] if len(ranked) > 1 else None)


def build_verdict(report: Mapping[str, Any]) -> dict[str, Any]:
    best, runner = best_and_runner_up(report["formats"])
    native, native_text = native_tools_status(report)
    tiers, tier_text = tier_status(report)
    sentences: list[str] = []
    if tiers == "violated":
        sentences.append(tier_text)
    margin = overlap = None
    if best is None:
        sentences.append(f"No scored runs for {report['model']}.")
    else:
        lead = (
            f"Best format for {report['model']}: **{best['format']}**, task success "
            f"{rate_ci(best['task_success'], best['ci_low'], best['ci_high'])} over {best['runs']} runs"
        )
        if runner is None:
            sentences.append(lead + " (the only format measured).")
        else:
            margin = float(best["task_success"]) - float(runner["task_success"])
            overlap = intervals_overlap(best, runner)
            runner_figures = rate_ci(runner["task_success"], runner["ci_low"], runner["ci_high"])
            if margin == 0:
                lead += f", tied on task success with {runner['format']} and ahead on parse success or speed"
            else:
                lead += f", {number(margin * 100, 0)} points ahead of {runner['format']} ({runner_figures})"
            lead += "; the intervals overlap, so the lead is not significant yet." if overlap else "."
            sentences.append(lead)
    sentences.append(native_text)
    if tiers != "violated":
        sentences.append(tier_text)
    conformance = len(report.get("conformance") or [])
    if conformance and tiers != "violated":
        sentences.append(f"{conformance} conformance failure(s) recorded (see below).")
    sentences.append(f"Sources: {report['sources']['summary']}.")
    return {
        "text": " ".join(sentences),
        "best_format": best["format"] if best else None,
        "best_task_success": best["task_success"] if best else None,
        "best_ci": [best["ci_low"], best["ci_high"]] if best else None,
        "runner_up": runner["format"] if runner else None,
        "runner_up_task_success": runner["task_success"] if runner else None,
        "margin": margin,
        "intervals_overlap": overlap,
        "native_tools": native,
        "tier_enforcement": tiers,
    }
