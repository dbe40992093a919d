"""``openai:NAME`` reaches the server ``OPENAI_BASE_URL`` names; ``--host`` still names every model's server.

Before, the CLI always resolved a host from ``OLLAMA_HOST`` (or Ollama's
default) and gave it to every backend, so a user who started an
OpenAI-compatible server (llama-server, vLLM) and set ``OPENAI_BASE_URL`` had
their requests sent to Ollama's port instead.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli import main
from harness.records import read_records
from tests.harness.conftest import EXAMPLES
from tests.support.scripted_server import ScriptedServer, closed_port_url

MODEL = "openai:scripted"


def eval_args(tmp_path: Path, *extra: str) -> list[str]:
    return ["eval", "--model", MODEL, "--formats", "native-openai", "--suite", str(EXAMPLES), "--limit", "1",
            "--results-dir", str(tmp_path / "results"), "--reports-dir", str(tmp_path / "reports"),
            "--cassette-dir", str(tmp_path / "cassettes"), "--hardware", "test rig", "--no-reports", *extra]


def test_openai_models_use_openai_base_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           scripted_server: ScriptedServer) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", f"{scripted_server.url}/v1")
    monkeypatch.setenv("OLLAMA_HOST", closed_port_url())  # nothing listens there: using it would fail the run
    assert main(eval_args(tmp_path)) == 0
    assert scripted_server.chat_bodies, "the OpenAI-compatible server was never asked"
    records = read_records(tmp_path / "results")
    assert records and all(not r.get("error") for r in records)
    assert {r["provenance"]["host"] for r in records} == {scripted_server.url}  # the root; the client adds /v1


def test_an_explicit_host_wins_over_openai_base_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    scripted_server: ScriptedServer) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", closed_port_url())
    assert main(eval_args(tmp_path, "--host", f"{scripted_server.url}/v1")) == 0
    assert scripted_server.chat_bodies
