"""The paragraph a reader acts on: which format to use, how sure we are, and what is unsafe.

A table of twelve columns answers every question except the one people ask
("what should I configure?"), so the verdict states the best format with its
interval and margin, says plainly when the lead is within noise, and puts a
tier-enforcement failure first because it outranks every accuracy figure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from harness.outcomes import mostly_errored
from harness.reporting.text import counted_rate, number
from harness.stats import earned_recommendation, intervals_overlap, rank_formats
from utp.formats import PRESETS

#: native presets count as "working" from this share of calls in the native field ...
NATIVE_ADHERENCE_WORKS = 0.9
#: ... and below this share the model is writing its calls as text
NATIVE_ADHERENCE_TEXT = 0.5


def is_native_format(format_name: str) -> bool:
    bundle = PRESETS.get(format_name)
    return bool(bundle and bundle.sends_native_tools)


def native_tools_status(report: Mapping[str, Any]) -> tuple[str, str]:
    """(status, sentence) for how the model handles native tool definitions.

    "works" needs the calls to arrive in the native field *and* a task success
    statistically on par with the best format; otherwise native is "partial",
    "text_calls" (calls written as text), "unsupported" or "untested".
    """
    rows = [r for r in report["formats"] if is_native_format(str(r["format"]))]
    if not rows:
        return "untested", "Native tools: not tested (no native-format runs)."
    unsupported = sum(
        e["count"] for e in report["errors"]
        if e["source"] == "backend" and e["kind"] == "tools_unsupported" and is_native_format(e["format"])
    )
    runs = sum(int(r["runs"]) for r in rows)
    best = rank_formats(rows)[0]
    figures = f"{best['format']}: call tasks {call_figures(best)}"
    if unsupported and unsupported >= runs:
        return "unsupported", "Native tools: the server refuses tool definitions for this model."
    adherence = best.get("format_adherence")
    in_field = counted_rate(best.get("adherent_calls"), best.get("adherence_calls"))
    if adherence is not None and adherence < NATIVE_ADHERENCE_TEXT:
        return (
            "text_calls",
            f"Native tools: the model gets native definitions but writes its calls as text "
            f"(only {in_field} in the tool_calls field); UTP's content parsers recover them ({figures}).",
        )
    overall, _ = best_and_runner_up(report["formats"])
    on_par = overall is None or overall is best or intervals_overlap(best, overall)
    if adherence is not None and adherence >= NATIVE_ADHERENCE_WORKS and earned_recommendation(best) and on_par:
        return "works", f"Native tools work ({figures}; calls in the tool_calls field: {in_field})."
    lag = "" if on_par else f", behind {overall['format']}" if overall else ""
    return "partial", (
        f"Native tools work partly ({figures}{lag}; calls in the tool_calls field: {in_field})."
    )


def content_only_sentence(report: Mapping[str, Any]) -> str | None:
    """The seeds' P0 symptom, measured: native calls that arrived only in ``content``, per native format.

    An agent that reads only ``tool_calls`` prints these instead of running them; UTP reads them.
    """
    parts = []
    for row in rank_formats(report["formats"]):
        total = int(row.get("adherence_calls") or 0)
        if not is_native_format(str(row["format"])) or not total:
            continue
        in_content = total - int(row.get("adherent_calls") or 0)
        parts.append(f"{row['format']}: {in_content} of {total} calls")
    if not parts:
        return None
    return ("Calls that arrived only in the message text, which an agent reading only tool_calls would have "
            "printed instead of running: " + "; ".join(parts) + ".")


def tier_status(report: Mapping[str, Any]) -> tuple[str, str]:
    """Whether any out-of-tier call ran, and how the others were refused (the tier check, or earlier as repeats)."""
    def total(field: str) -> int:
        return sum(int(r.get(field) or 0) for r in report["formats"])

    attempts, blocked, executed = total("escalation_attempts"), total("blocked"), total("executed_violations")
    repeats = total("stopped_as_repeats")
    if executed:
        return (
            "violated",
            f"Tier enforcement FAILED: {executed} out-of-tier call(s) were executed "
            f"({attempts} attempts, {blocked} blocked). This is a UTP conformance failure.",
        )
    if attempts:
        how = [f"{blocked} refused by the tier check"]
        if repeats:
            how.append(f"{repeats} stopped before it as repeats of a refused call")
        other = attempts - blocked - repeats
        if other:
            how.append(f"{other} refused otherwise")
        return "enforced", f"Tier enforcement held: {attempts} out-of-tier attempt(s), none executed ({', '.join(how)})."
    return "not_exercised", "Tier enforcement: no out-of-tier attempts in these runs."


def sources_summary(runs: int, provenance: Mapping[str, Any], synthetic_excluded: int = 0) -> str:
    """``"48 runs recorded from ollama 0.12.10 on <hardware>"``, or replayed, or live."""
    versions = list(provenance.get("server_versions") or [])
    # an engine its version string already names ("llama-server b1-…") is said once
    engines = [e for e in provenance.get("engines") or [] if not any(v.startswith(e) for v in versions)]
    engine = " ".join(part for part in (", ".join(engines), ", ".join(versions)) if part) or "an unrecorded engine"
    hardware = ", ".join(provenance.get("hardware") or []) or "unrecorded hardware"
    modes: Mapping[str, int] = provenance.get("modes") or {}
    phrases = {
        "record": "recorded from {engine} on {hardware}",
        "replay": "replayed from cassettes of {engine} on {hardware}",
        "live": "live against {engine} on {hardware}",
    }
    parts = []
    for mode in ("record", "replay", "live"):
        n = modes.get(mode, 0) if mode != "live" else runs - modes.get("record", 0) - modes.get("replay", 0)
        if n > 0:
            parts.append(f"{n} run{'s' if n != 1 else ''} " + phrases[mode].format(engine=engine, hardware=hardware))
    text = "; ".join(parts) if parts else "no runs"
    if synthetic_excluded:
        text += f" ({synthetic_excluded} synthetic run{'s' if synthetic_excluded != 1 else ''} excluded)"
    return text


def call_figures(row: Mapping[str, Any]) -> str:
    """``12/40 (30% [18–45%])``: a format's call-task success with its count and interval."""
    return counted_rate(row.get("call_passed"), row.get("call_tasks"), row.get("call_ci_low"), row.get("call_ci_high"))


def restraint_figures(row: Mapping[str, Any]) -> str:
    return counted_rate(row.get("restraint_passed"), row.get("restraint_tasks"))


def best_and_runner_up(rows: Sequence[Mapping[str, Any]]) -> tuple[Mapping[str, Any] | None, Mapping[str, Any] | None]:
    """The two best formats that earned a recommendation (passed at least one call task)."""
    ranked = [r for r in rank_formats(rows) if earned_recommendation(r)]
    return (ranked[0] if ranked else None, ranked[1] if len(ranked) > 1 else None)


def no_recommendation_reason(report: Mapping[str, Any]) -> str | None:
    """Why no format may be recommended, or None when one may."""
    errored = int(report["sources"].get("errored") or 0)
    runs = int(report["sources"].get("runs") or 0)
    if mostly_errored(errored, runs):
        classes = ", ".join(f"{n} {c}" for c, n in (report["sources"].get("errored_by_class") or {}).items())
        return (f"{errored} of {errored + runs} runs errored ({classes}): these figures cannot be trusted; "
                "fix the cause and continue with --resume")
    if not any(earned_recommendation(r) for r in report["formats"]):
        calls = sum(int(r.get("call_tasks") or 0) for r in report["formats"])
        return (f"no format passed any task that needs a call (0 of {calls} call-task runs over "
                f"{len(report['formats'])} formats), so none is recommended")
    return None


def build_verdict(report: Mapping[str, Any]) -> dict[str, Any]:
    reason = no_recommendation_reason(report)
    best, runner = (None, None) if reason else best_and_runner_up(report["formats"])
    native, native_text = native_tools_status(report)
    tiers, tier_text = tier_status(report)
    sentences: list[str] = []
    if tiers == "violated":
        sentences.append(tier_text)
    margin = overlap = None
    if best is None:
        sentences.append(f"No recommendation for {report['model']}: {reason or 'no scored runs'}.")
    else:
        lead = (
            f"Best format for {report['model']}: **{best['format']}**, call tasks {call_figures(best)}, "
            f"restraint {restraint_figures(best)}"
        )
        if runner is None:
            sentences.append(lead + " (the only format that passed a call task).")
        else:
            margin = float(best["call_task_success"]) - float(runner["call_task_success"])
            overlap = intervals_overlap(best, runner)
            if margin == 0:
                lead += f", tied on call tasks with {runner['format']} and ahead on restraint, parse success or speed"
            else:
                lead += f", {number(margin * 100, 0)} points ahead of {runner['format']} ({call_figures(runner)})"
            lead += "; the intervals overlap, so the lead is not significant yet." if overlap else "."
            sentences.append(lead)
    sentences.append(native_text)
    content_only = content_only_sentence(report)
    if content_only:
        sentences.append(content_only)
    lift = report.get("constraint_lift")
    if lift is not None:
        sentences.append(lift["text"])
    if tiers != "violated":
        sentences.append(tier_text)
    conformance = len(report.get("conformance") or [])
    if conformance and tiers != "violated":
        sentences.append(f"{conformance} conformance failure(s) recorded (see below).")
    sentences.append(f"Sources: {report['sources']['summary']}.")
    return {
        "text": " ".join(sentences),
        "recommended": best is not None,
        "no_recommendation_reason": reason if best is None else None,
        "best_format": best["format"] if best else None,
        "best_task_success": best["call_task_success"] if best else None,
        "best_ci": [best["call_ci_low"], best["call_ci_high"]] if best else None,
        "best_call_passed": int(best["call_passed"]) if best else None,
        "best_call_tasks": int(best["call_tasks"]) if best else None,
        "runner_up": runner["format"] if runner else None,
        "runner_up_task_success": runner["call_task_success"] if runner else None,
        "margin": margin,
        "intervals_overlap": overlap,
        "native_tools": native,
        "tier_enforcement": tiers,
    }
