"""JSON Schema fragments for summary fields (the report schema's format rows are assembled from them)."""

from __future__ import annotations

from typing import Any

#: a count of runs, calls or tasks
COUNT: dict[str, Any] = {"type": "integer", "minimum": 0}
#: a fraction in [0, 1]; null when nothing was measured
RATE: dict[str, Any] = {"type": ["number", "null"], "minimum": 0, "maximum": 1}
#: an interval bound (always present: (0, 1) when nothing was measured)
BOUND: dict[str, Any] = {"type": "number", "minimum": 0, "maximum": 1}
#: a non-negative measurement; null when not measured
MEASURE: dict[str, Any] = {"type": ["number", "null"], "minimum": 0}

__all__ = ["BOUND", "COUNT", "MEASURE", "RATE"]
