"""``compatibility.csv``: the format table for spreadsheets and pandas."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from harness.stats import aggregate_columns


def render_csv(report: Mapping[str, Any]) -> str:
    """One row per format with every aggregate column (rates as fractions, not percent)."""
    columns = [c for c in aggregate_columns() if c != "errored_by_class"]  # a table cell holds one number
    rows = [{"model": report["model"], **row} for row in report["formats"]]
    frame = pd.DataFrame(rows, columns=columns)
    return frame.to_csv(index=False, lineterminator="\n", float_format="%.6g")
