"""A live Qwen run reproduces its committed recording (opt-in: ``make test-local`` / ``-m local``).

The committed cassettes are what `make eval` replays with no server; they are
only worth trusting if the same engine, model and options give the same text
again. This runs the 0.5B live on the single-call suite under one preset with
the recording's options and compares every round's raw text with the
committed run record's.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from harness.cli import main as utp_main
from utp.backends.base import BackendError
from utp.backends.models import LOCAL_MODELS

ROOT = Path(__file__).resolve().parents[1]
MODEL = "local:qwen2.5-coder-0.5b"
PRESET = "prompt-hermes"

pytestmark = [
    pytest.mark.local,
    pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None, reason="llama-cpp-python not installed: run `make local-models`"),
]


def round_texts(record: dict) -> list[str]:
    return [r["raw_text"] for turn in record["turns"] for r in turn["rounds"]]


def committed_runs() -> dict[str, dict]:
    path = ROOT / "reports" / "results" / "local_qwen2.5-coder-0.5b.jsonl"
    runs = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record["format"] == PRESET and record["suite"] == "core/single_call" and not record.get("error"):
            runs[record["scenario"]] = record
    return runs


def test_live_single_call_matches_the_recording(tmp_path: Path) -> None:
    try:
        LOCAL_MODELS["qwen2.5-coder-0.5b"].loader()
    except BackendError as exc:
        pytest.skip(str(exc))
    recorded = committed_runs()
    assert recorded, "no committed prompt-hermes single-call runs for the 0.5B"
    options = {k: v for k, v in next(iter(recorded.values()))["provenance"]["options"].items()}
    status = utp_main([
        "eval", "--model", MODEL, "--suite", "core/01_single_call", "--formats", PRESET,
        "--options", ",".join(f"{k}={v}" for k, v in options.items()),
        "--results-dir", str(tmp_path / "results"), "--reports-dir", str(tmp_path / "reports"), "--no-reports",
    ])
    assert status == 0
    live = [json.loads(line) for line in (tmp_path / "results" / "local_qwen2.5-coder-0.5b.jsonl").read_text().splitlines()]
    assert {r["scenario"] for r in live} == set(recorded)
    for record in live:
        assert round_texts(record) == round_texts(recorded[record["scenario"]]), record["scenario"]
