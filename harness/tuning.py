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
from pathlib import Path
from typing import Any

from harness.records import TornRecordWarning
from harness.reporting import strip_separator
from harness.reporting.loading import ReportError, ensure_scores, load_records, load_scenarios
from harness.reporting.text import number, rate_ci
from harness.stats import aggregate, intervals_overlap, rank_formats
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
        if row["task_success"] is not None and row["task_success"] == row["task_success"]:
            by_model[str(row["model"])].append(row)
    return {model: [dict(r) for r in rank_formats(rows)] for model, rows in sorted(by_model.items())}


def _float(value: Any) -> float | None:
    """Evidence figures rounded to 4 places: enough to compare, readable in TOML."""
    if value is None or value != value:  # NaN from pandas
        return None
    return round(float(value), 4)


def choose_profile(model: str, ranked: Sequence[Mapping[str, Any]]) -> TunedProfile:
    """The tuned profile for one model from its ranked format rows (``ranked[0]`` wins)."""
    if not ranked:
        raise ValueError(f"no measured formats for {model!r}")
    best = ranked[0]
    runner = ranked[1] if len(ranked) > 1 else None
    evidence: dict[str, Any] = {
        "runs": int(best["runs"]),
        "task_success": _float(best["task_success"]),
        "ci_low": _float(best["ci_low"]),
        "ci_high": _float(best["ci_high"]),
        "parse_success": _float(best.get("parse_success")),
        "decode_tps": _float(best.get("decode_tps")),
    }
    if runner is not None:
        evidence["runner_up"] = str(runner["format"])
        evidence["margin"] = round(float(best["task_success"]) - float(runner["task_success"]), 4)
        evidence["overlaps_runner_up"] = intervals_overlap(best, runner)
    preset = str(best["format"])
    return TunedProfile(
        model=model,
        bundle=PRESETS[preset],
        preset=preset,
        evidence={k: v for k, v in evidence.items() if v is not None},
        fallbacks=tuple(str(r["format"]) for r in ranked[1:]),
        runner_up=str(runner["format"]) if runner is not None else None,
    )


def tune_records(records: Iterable[Mapping[str, Any]]) -> dict[str, TunedProfile]:
    """Model → tuned profile, from scored run records."""
    return {model: choose_profile(model, rows) for model, rows in ranked_formats(records).items() if rows}


def _records(results_dirs: str | Path | Iterable[str | Path], scenarios_dir: str | Path | None) -> list[dict[str, Any]]:
    records = load_records(results_dirs)
    return ensure_scores(records, load_scenarios(scenarios_dir) if scenarios_dir is not None else None)


def tune(
    results_dirs: str | Path | Iterable[str | Path] = (DEFAULT_RESULTS_DIR,),
    out_path: str | Path | None = DEFAULT_OUT,
    *,
    scenarios_dir: str | Path | None = None,
    merge: bool = False,
) -> dict[str, TunedProfile]:
    """Tune every model found in ``results_dirs`` and write the profiles to ``out_path`` (TOML).

    Nothing is written when no model has non-synthetic results (an empty
    evaluation must not wipe an existing tuned file). ``out_path=None``
    computes without writing.
    """
    profiles = tune_records(_records(results_dirs, scenarios_dir))
    if profiles and out_path is not None:
        save_tuned(profiles, out_path, merge=merge)
    return profiles


def overlap_sentence(profile: TunedProfile) -> str:
    ev = profile.evidence
    if profile.runner_up is None:
        return "only one format measured"
    margin = ev.get("margin")
    text = f"runner-up {profile.runner_up}, margin {number(margin * 100 if margin is not None else None, 0)} points"
    if ev.get("overlaps_runner_up"):
        text += "; the 95% intervals overlap, so this choice is not settled (more repeats would tell)"
    return text


def recommendation_line(profile: TunedProfile) -> str:
    ev = profile.evidence
    figures = rate_ci(ev.get("task_success"), ev.get("ci_low"), ev.get("ci_high"))
    return f"{profile.model}: use {profile.preset} (task success {figures} over {ev.get('runs')} runs; {overlap_sentence(profile)})"


def recommendations(results_dirs: str | Path | Iterable[str | Path] = (DEFAULT_RESULTS_DIR,)) -> list[str]:
    """One line per model, for the end of ``make eval`` (nothing is written)."""
    return [recommendation_line(p) for p in tune(results_dirs, None).values()]


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
            profiles = tune(results_dirs, out, scenarios_dir=getattr(ns, "scenarios_dir", None),
                            merge=bool(getattr(ns, "merge", False)))
    except ReportError as exc:
        print(f"utp tune: {exc}", file=sys.stderr)
        return 2
    for warning in caught:
        print(f"utp tune: warning: {warning.message}", file=sys.stderr)
    if not profiles:
        print("utp tune: no non-synthetic results to tune from (run `make eval` first); nothing written", file=sys.stderr)
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
    "choose_profile",
    "llmc_profile_name",
    "ranked_formats",
    "recommendation_line",
    "recommendations",
    "tune",
    "tune_main",
    "tune_records",
]
