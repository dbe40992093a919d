"""Scores of the runs in a results directory, derived from the records as reports derive them.

Records hold what happened, never scores; a test that compares two evaluations
by their figures derives them the same way ``utp report`` does, with the
client's clocks left out (a replay cannot measure them).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.metrics import ensure_scores
from harness.records import read_records
from harness.reporting.loading import load_scenarios

#: scores measured by the client's clock, never by a replay
CLOCK_SCORES = ("wall_s", "ttft_s")


def derived_scores(results_dir: Path, scenarios_dir: Path) -> dict[tuple[str, str, str, int], dict[str, Any]]:
    """(format, suite, scenario, repeat) → the run's derived scores without the client's clocks."""
    records = ensure_scores(read_records(results_dir), load_scenarios(scenarios_dir))
    return {
        (r["format"], r["suite"], r["scenario"], r["repeat"]): {k: v for k, v in r["scores"].items() if k not in CLOCK_SCORES}
        for r in records
    }
