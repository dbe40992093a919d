"""Shared fixtures for the parser tests: the real-output corpus and helpers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

CORPUS_DIR = Path(__file__).resolve().parents[2] / ".." / "shared" / "corpus"
ANNOTATED = CORPUS_DIR / "annotated_outputs.jsonl"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def load_annotated() -> list[dict[str, Any]]:
    """The annotated corpus records, or a skip naming the missing file."""
    if not ANNOTATED.is_file():
        pytest.skip(f"corpus not present: {ANNOTATED.resolve()} (expected ../shared/corpus relative to the project root)")
    with ANNOTATED.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def names_args(calls: Any) -> list[tuple[str, str]]:
    """Calls as sortable (name, canonical arguments) pairs, for order-insensitive comparison."""
    out = []
    for call in calls:
        if isinstance(call, dict):
            name, arguments = call["name"], call.get("arguments", {})
        else:
            name, arguments = call.name, call.arguments
        out.append((name, json.dumps(arguments, sort_keys=True)))
    return sorted(out)
