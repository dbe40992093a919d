"""`make eval` itself, as a user types it: record from a live server on loopback, then replay.

The CLI is tested through its entry point elsewhere; this proves the
Makefile's variables reach it (MODEL, OLLAMA_HOST, FORMATS, SUITE, RECORD,
REPLAY) and that replay needs no server at all.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.harness.conftest import EXAMPLES, scripted_model
from tests.support.derived import derived_scores
from tests.support.scripted_server import ScriptedServer, closed_port_url, turn_from_callable

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(
    shutil.which("make") is None or not (ROOT / ".venv" / "bin" / "utp").exists(),
    reason="needs make and the project's .venv (created by `make test`)",
)


def make_eval(tmp_path: Path, *variables: str, host: str) -> subprocess.CompletedProcess[str]:
    args = f"--results-dir {tmp_path}/results-{variables[-1].lower().split('=')[0]} --reports-dir {tmp_path}/reports --cassette-dir {tmp_path}/cassettes --hardware test-rig"
    env = {**os.environ, "OLLAMA_HOST": host}
    return subprocess.run(
        ["make", "--no-print-directory", "eval", "MODEL=scripted:latest", "FORMATS=prompt-hermes,prompt-json",
         f"SUITE={EXAMPLES}", *variables, f"EVAL_ARGS={args}"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=240,
    )


def scores(results_dir: Path) -> dict[tuple[str, str, str, int], dict[str, Any]]:
    """Each run's scores, derived from its record as reports derive them (records hold none)."""
    return derived_scores(results_dir, EXAMPLES)


def test_make_eval_records_from_a_live_server_and_replays_without_one(tmp_path: Path):
    with ScriptedServer(default_turn=turn_from_callable(scripted_model)) as server:
        recorded = make_eval(tmp_path, "RECORD=1", host=server.url)
        asked = len(server.chat_bodies)
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    assert asked > 0
    assert list((tmp_path / "cassettes").rglob("*.r0.json")), "no cassette written"

    replayed = make_eval(tmp_path, "REPLAY=1", host=closed_port_url())
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    rec, rep = scores(tmp_path / "results-record"), scores(tmp_path / "results-replay")
    assert rec and rec == rep
    assert "prompt-hermes" in replayed.stdout and "call tasks" in replayed.stdout
