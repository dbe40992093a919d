"""``best_presets``: what a recording plan records next, ranked by the reports' own rule."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from harness.stats import rank_formats
from harness.tuning import best_presets
from utp.formats import PRESETS

ROOT = Path(__file__).resolve().parents[2]


def test_ranks_like_the_committed_report() -> None:
    report = json.loads((ROOT / "reports" / "llamacpp_qwen2.5-coder-0.5b" / "compatibility.json").read_text())
    ranked = [row["format"] for row in rank_formats(report["formats"])]
    assert best_presets("llamacpp:qwen2.5-coder-0.5b", 4, suite_prefix="", results_dirs=ROOT / "reports" / "results") == ranked[:4]


def test_excluded_presets_and_other_suites_are_left_out(tmp_path: Path) -> None:
    results = tmp_path / "results"  # only this model's records: reading every model's file costs seconds a call
    results.mkdir()
    shutil.copy(ROOT / "reports" / "results" / "llamacpp_qwen2.5-coder-0.5b.jsonl", results)
    everything = best_presets("llamacpp:qwen2.5-coder-0.5b", len(PRESETS), suite_prefix="", results_dirs=results)
    first = everything[0]
    without = best_presets("llamacpp:qwen2.5-coder-0.5b", len(PRESETS), suite_prefix="", exclude=[first], results_dirs=results)
    assert first not in without and without == everything[1:]
    assert best_presets("llamacpp:qwen2.5-coder-0.5b", 3, suite_prefix="no-such-suite/", results_dirs=results) == []
