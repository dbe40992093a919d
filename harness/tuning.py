"""Format auto-tuning: pick each model's best format from stored evaluation results.

The same model can go from useless to reliable by changing how tools are
described and how calls are read, and which format wins differs per model, so
the choice is measured, not guessed. Formats rank by task success, then parse
success, then decode speed; the next-best formats become runtime fallbacks.
When the winner's 95% interval overlaps the runner-up's, the data cannot tell
them apart: the profile says so (``overlaps_runner_up``) instead of claiming a
win it has not shown. Synthetic runs never vote.
"""

from __future__ import annotations

import argparse
import re
import sys
import warnings
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.outcomes import mostly_errored
from harness.metrics import UnjudgedRunsWarning
from harness.records import TornRecordWarning
from harness.reporting import strip_separator
from harness.reporting.loading import ReportError, ensure_scores, load_records, load_scenarios
from harness.reporting.text import counted_rate, number
from harness.scenario_model import Scenario
from harness.scenarios import SCENARIOS_ROOT
from harness.stats import aggregate, earned_recommendation, intervals_overlap, rank_formats
from utp.formats import PRESETS
from utp.tuned import TunedProfile, render_llmc_snippet, save_tuned

DEFAULT_RESULTS_DIR = Path("reports/results")
DEFAULT_OUT = Path("reports/tuned_profiles.toml")


def ranked_formats(records: Iterable[Mapping[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Model → its measured preset formats, best first (synthetic runs and unknown formats left out)."""
    real = [r for r in records if not r.get("synthetic") and r.get("format") in PRESETS]
    table = aggregate(real)
    by_model: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in table.to_dict(orient="records"):
        by_model[str(row["model"])].append(row)
    return {model: [dict(r) for r in rank_formats(rows)] for model, rows in sorted(by_model.items())}


def _float(value: Any) -> float | None:
    """Evidence figures rounded to 4 places: enough to compare, readable in TOML."""
    if value is None or value != value:  # NaN from pandas
        return None
    return round(float(value), 4)


@dataclass(frozen=True)
class ModelChoice:
    """What tuning concluded for one model: a profile, or the reason there is none."""

    model: str
    profile: TunedProfile | None
    reason: str = ""


def choose_profile(model: str, ranked: Sequence[Mapping[str, Any]]) -> TunedProfile:
    """The tuned profile for one model from its ranked format rows (``ranked[0]`` wins)."""
    if not ranked:
        raise ValueError(f"no measured formats for {model!r}")
    best = ranked[0]
    runner = ranked[1] if len(ranked) > 1 else None
    evidence: dict[str, Any] = {
        "runs": int(best["runs"]),
        "call_tasks": int(best.get("call_tasks") or 0),
        "call_passed": int(best.get("call_passed") or 0),
        "call_task_success": _float(best.get("call_task_success")),
        "ci_low": _float(best.get("call_ci_low")),
        "ci_high": _float(best.get("call_ci_high")),
        "restraint_tasks": int(best.get("restraint_tasks") or 0),
        "restraint_passed": int(best.get("restraint_passed") or 0),
        "task_success": _float(best.get("task_success")),
        "parse_success": _float(best.get("parse_success")),
        "calls_meant": int(best.get("calls_meant") or 0),
        "decode_tps": _float(best.get("decode_tps")),
    }
    if runner is not None:
        evidence["runner_up"] = str(runner["format"])
        evidence["margin"] = round(float(best.get("call_task_success") or 0) - float(runner.get("call_task_success") or 0), 4)
        evidence["overlaps_runner_up"] = intervals_overlap(best, runner)
    preset = str(best["format"])
    return TunedProfile(
        model=model,
        bundle=PRESETS[preset],
        preset=preset,
        evidence={k: v for k, v in evidence.items() if v is not None},
        fallbacks=tuple(str(r["format"]) for r in ranked[1:] if earned_recommendation(r)),
        runner_up=str(runner["format"]) if runner is not None else None,
    )


def choose(model: str, ranked: Sequence[Mapping[str, Any]]) -> ModelChoice:
    """A profile only when it is earned: mostly completed runs and a passed task that needs a call."""
    results = sum(int(r.get("runs") or 0) for r in ranked)
    errored = sum(int(r.get("errored") or 0) for r in ranked)
    if results + errored == 0:
        return ModelChoice(model, None, "no runs")
    if mostly_errored(errored, results):
        return ModelChoice(
            model, None,
            f"{errored}/{results + errored} runs errored (server, connection or cassette problems), so the results "
            "cannot be trusted; fix the cause and run again with --resume",
        )
    earned = [r for r in ranked if earned_recommendation(r)]
    if not earned:
        calls = sum(int(r.get("call_tasks") or 0) for r in ranked)
        return ModelChoice(
            model, None,
            f"no format passed any task that needs a call (0 of {calls} call-task runs over {len(ranked)} formats): "
            "this model does not call tools reliably in any format tried",
        )
    return ModelChoice(model, choose_profile(model, earned))


def model_choices(records: Iterable[Mapping[str, Any]]) -> dict[str, ModelChoice]:
    return {model: choose(model, rows) for model, rows in ranked_formats(records).items()}


def tune_records(records: Iterable[Mapping[str, Any]]) -> dict[str, TunedProfile]:
    """Model → tuned profile, from scored run records; models without an earned choice are left out."""
    return {m: c.profile for m, c in model_choices(records).items() if c.profile is not None}


def _records(
    results_dirs: str | Path | Iterable[str | Path], scenarios_dir: str | Path | None,
    scenarios: Mapping[tuple[str, str], Scenario] | None = None,
) -> list[dict[str, Any]]:
    """Records with scores derived against the scenarios of ``scenarios_dir`` (the project's) and ``scenarios``."""
    records = load_records(results_dirs)
    return ensure_scores(records, {**load_scenarios(scenarios_dir or SCENARIOS_ROOT), **(scenarios or {})})


def best_presets(
    model: str,
    count: int,
    *,
    suite_prefix: str = "core/",
    exclude: Iterable[str] = (),
    results_dirs: str | Path | Iterable[str | Path] = (DEFAULT_RESULTS_DIR,),
) -> list[str]:
    """The model's ``count`` best presets on the suites under ``suite_prefix``, by the rule ``utp tune`` uses.

    What a recording plan asks before spending hours ("record BFCL under the
    three formats that did best on core"), ranked the same way as the reports.
    """
    excluded = set(exclude)
    records = [r for r in load_records(results_dirs)
               if r.get("model") == model and str(r.get("suite", "")).startswith(suite_prefix) and r.get("format") not in excluded]
    records = ensure_scores(records, load_scenarios(SCENARIOS_ROOT))
    return [str(row["format"]) for row in ranked_formats(records).get(model, [])[:count]]


def tune(
    results_dirs: str | Path | Iterable[str | Path] = (DEFAULT_RESULTS_DIR,),
    out_path: str | Path | None = DEFAULT_OUT,
    *,
    scenarios_dir: str | Path | None = None,
    scenarios: Mapping[tuple[str, str], Scenario] | None = None,
    merge: bool = False,
) -> dict[str, TunedProfile]:
    """Tune every model found in ``results_dirs`` and write the profiles to ``out_path`` (TOML).

    Runs are judged against the scenarios of ``scenarios_dir`` and
    ``scenarios`` (suites outside the project's, by (suite id, scenario id)).
    Nothing is written when no model has earned a profile (an empty or failed
    evaluation must not wipe an existing tuned file). ``out_path=None``
    computes without writing.
    """
    profiles = tune_records(_records(results_dirs, scenarios_dir, scenarios))
    if profiles and out_path is not None:
        save_tuned(profiles, out_path, merge=merge)
    return profiles


def retune(results_dirs: str | Path | Iterable[str | Path], out_path: str | Path) -> dict[str, TunedProfile]:
    """Re-derive an existing tuned file's profiles for the models ``results_dirs`` hold (after a rescore).

    Unlike ``tune``, a model these results hold that no longer earns a
    profile loses the one it had: its evidence was re-read, and the old
    choice rested on a reading that is gone. Models the results lack are kept.
    """
    records = _records(results_dirs, None)
    profiles = tune_records(records)
    covered = {str(record["model"]) for record in records}
    save_tuned(profiles, out_path, merge=True, drop=covered - set(profiles))
    return profiles


def overlap_sentence(profile: TunedProfile) -> str:
    ev = profile.evidence
    if profile.runner_up is None:
        return "the only format that passed a call task"
    margin = ev.get("margin")
    text = f"runner-up {profile.runner_up}, margin {number(margin * 100 if margin is not None else None, 0)} points"
    if ev.get("overlaps_runner_up"):
        text += "; the 95% intervals overlap, so this choice is not settled (more repeats would tell)"
    return text


def recommendation_line(profile: TunedProfile) -> str:
    ev = profile.evidence
    figures = counted_rate(ev.get("call_passed"), ev.get("call_tasks"), ev.get("ci_low"), ev.get("ci_high"))
    restraint = counted_rate(ev.get("restraint_passed"), ev.get("restraint_tasks"))
    return (f"{profile.model}: use {profile.preset} (call tasks {figures}, restraint {restraint}; "
            f"{overlap_sentence(profile)})")


def choice_line(choice: ModelChoice) -> str:
    if choice.profile is not None:
        return recommendation_line(choice.profile)
    return f"{choice.model}: no recommendation: {choice.reason}"


def recommendations(
    results_dirs: str | Path | Iterable[str | Path] = (DEFAULT_RESULTS_DIR,), models: Iterable[str] | None = None,
    scenarios: Mapping[tuple[str, str], Scenario] | None = None,
) -> list[str]:
    """One line per model (only ``models`` when given), for the end of ``make eval`` (nothing is written)."""
    choices = model_choices(_records(results_dirs, None, scenarios))
    wanted = None if models is None else set(models)
    return [choice_line(c) for m, c in choices.items() if wanted is None or m in wanted]


def llmc_profile_name(model: str) -> str:
    """A profile name for llmc.toml derived from the model (``qwen3:4b`` → ``qwen3-4b``)."""
    return re.sub(r"[^A-Za-z0-9_-]+", "-", model).strip("-") or "model"


def add_tune_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument("--results-dir", action="append", dest="results_dirs", default=None,
                        help=f"directory of run records; repeat to combine evals (default: {DEFAULT_RESULTS_DIR})")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="tuned-profile TOML to write (default: %(default)s)")
    parser.add_argument("--scenarios-dir", default=None, help="rescore records against these scenarios first")
    parser.add_argument("--merge", action="store_true", help="keep models already in --out that these results lack")
    return parser


def tune_main(args: argparse.Namespace | Sequence[str] | None = None) -> int:
    """``utp tune``: write tuned profiles and print, per model, the choice and an llmc.toml snippet."""
    if isinstance(args, argparse.Namespace):
        ns = args
    else:
        ns = add_tune_arguments(argparse.ArgumentParser(prog="utp tune")).parse_args(strip_separator(args))
    results_dirs = getattr(ns, "results_dirs", None) or getattr(ns, "results_dir", None) or [DEFAULT_RESULTS_DIR]
    if isinstance(results_dirs, (str, Path)):
        results_dirs = [results_dirs]
    out = getattr(ns, "out", None) or DEFAULT_OUT
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", TornRecordWarning)
            warnings.simplefilter("always", UnjudgedRunsWarning)
            profiles = tune(results_dirs, out, scenarios_dir=getattr(ns, "scenarios_dir", None),
                            merge=bool(getattr(ns, "merge", False)))
    except ReportError as exc:
        print(f"utp tune: {exc}", file=sys.stderr)
        return 2
    for warning in caught:
        print(f"utp tune: warning: {warning.message}", file=sys.stderr)
    if not profiles:
        print("utp tune: no model earned a recommendation (no format passed a task that needs a call, or the runs "
              "errored); nothing written", file=sys.stderr)
        return 1
    for profile in profiles.values():
        print(recommendation_line(profile))
        fallbacks = ", ".join(profile.fallbacks) or "none"
        print(f"  fallbacks (best first): {fallbacks}")
        print("  paste into llmc.toml:")
        print()
        print(render_llmc_snippet(llmc_profile_name(profile.model), profile))
    print(f"wrote {out}")
    return 0


__all__ = [
    "add_tune_arguments",
    "ModelChoice",
    "choice_line",
    "choose",
    "choose_profile",
    "model_choices",
    "llmc_profile_name",
    "ranked_formats",
    "recommendation_line",
    "recommendations",
    "retune",
    "tune",
    "tune_main",
    "tune_records",
]
