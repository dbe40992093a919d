"""``best_presets``: what a recording plan records next, ranked by the reports' own rule."""

from __future__ import annotations

import json
from pathlib import Path

from harness.stats import rank_formats
from harness.tuning import best_presets
from utp.formats import PRESETS

ROOT = Path(__file__).resolve().parents[2]


def test_ranks_like_the_committed_report() -> None:
    report = json.loads((ROOT / "reports" / "local_smollm2-135m" / "compatibility.json").read_text())
    ranked = [row["format"] for row in rank_formats(report["formats"])]
    assert best_presets("local:smollm2-135m", 4, suite_prefix="", results_dirs=ROOT / "reports" / "results") == ranked[:4]


def test_excluded_presets_and_other_suites_are_left_out() -> None:
    results = ROOT / "reports" / "results"
    everything = best_presets("local:smollm2-135m", len(PRESETS), suite_prefix="", results_dirs=results)
    first = everything[0]
    without = best_presets("local:smollm2-135m", len(PRESETS), suite_prefix="", exclude=[first], results_dirs=results)
    assert first not in without and without == everything[1:]
    assert best_presets("local:smollm2-135m", 3, suite_prefix="no-such-suite/", results_dirs=results) == []
