"""`utp` through its entry point: record from a live (scripted) server, replay, and clear failures."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import harness.cli as cli
from harness.cli import main, normalise_host, parse_options
from harness.records import read_records
from tests.harness.conftest import EXAMPLES, scripted_model
from tests.support.derived import derived_scores
from tests.support.scripted_server import ScriptedServer, closed_port_url, turn_from_callable

MODEL = "scripted:latest"


def dirs(tmp_path: Path, name: str = "") -> list[str]:
    return [
        "--results-dir", str(tmp_path / f"results{name}"),
        "--reports-dir", str(tmp_path / f"reports{name}"),
        "--cassette-dir", str(tmp_path / "cassettes"),
        "--suite", str(EXAMPLES),
        "--hardware", "test rig",
    ]


def scores(results_dir: Path) -> dict[tuple[str, str, str, int], dict[str, Any]]:
    """Each run's scores, derived from its record as reports derive them (records hold none)."""
    return derived_scores(results_dir, EXAMPLES)


def test_record_from_a_live_server_then_replay_gives_identical_scores(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`make eval MODEL=m OLLAMA_HOST=http://127.0.0.1:PORT RECORD=1`, then `make eval MODEL=m REPLAY=1`."""
    formats = "native,prompt-hermes,prompt-json"
    with ScriptedServer(default_turn=turn_from_callable(scripted_model)) as server:
        code = main(["eval", "--model", MODEL, "--host", server.url, "--formats", formats, "--record", *dirs(tmp_path, "-rec")])
        asked = len(server.chat_bodies)
    assert code == 0 and asked > 0
    recorded_out = capsys.readouterr().out
    assert "prompt-hermes" in recorded_out and "call tasks" in recorded_out
    assert (tmp_path / "cassettes" / "scripted_latest" / "provenance.json").exists()

    code = main(["eval", "--model", MODEL, "--host", closed_port_url(), "--formats", formats, "--replay", *dirs(tmp_path, "-rep")])
    assert code == 0
    recorded, replayed = scores(tmp_path / "results-rec"), scores(tmp_path / "results-rep")
    assert len(recorded) == 9 and recorded == replayed
    assert all(s["task_success"] for s in replayed.values())
    assert {r["mode"] for r in read_records(tmp_path / "results-rep")} == {"replay"}
    assert (tmp_path / "reports-rep" / "index.md").exists()  # reports were rebuilt after the eval


def test_no_model_named_replays_every_recorded_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with ScriptedServer(default_turn=turn_from_callable(scripted_model)) as server:
        assert main(["eval", "--model", MODEL, "--host", server.url, "--formats", "native", "--record", "--no-reports", *dirs(tmp_path)]) == 0
    capsys.readouterr()
    code = main(["eval", "--host", closed_port_url(), "--no-reports", *dirs(tmp_path, "-2")])
    out = capsys.readouterr().out
    assert code == 0
    assert f"No model named: replaying recorded cassettes for: {MODEL}" in out
    assert "not reachable: replay only" in out
    records = read_records(tmp_path / "results-2")
    assert len(records) == 3 and {r["format"] for r in records} == {"native"}  # only what was recorded


def test_replay_of_a_missing_cassette_fails_ci(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["eval", "--model", "never-recorded", "--formats", "native", "--replay", "--no-reports", *dirs(tmp_path)])
    err = capsys.readouterr().err
    assert code == 4  # missing cassettes: a recording problem, not a UTP failure
    assert "missing_cassette" in err and "RECORD=1" in err and "Traceback" not in err
    assert "UTP misbehaved" not in err


def test_invalid_scenario_file_stops_everything_before_any_request(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("scenarios:\n  - id: a\n    tools: []\n    turns:\n      - user: 3\n", encoding="utf-8")
    with ScriptedServer(default_turn=turn_from_callable(scripted_model)) as server:
        code = main(["eval", "--model", MODEL, "--host", server.url, "--formats", "native",
                     "--results-dir", str(tmp_path / "results"), "--suite", str(EXAMPLES), "--suite", str(bad)])
        assert server.requests == []
    err = capsys.readouterr().err
    assert code == 2
    assert f"{bad}:5: scenarios[0].turns[0].user: expected string" in err
    assert "nothing was run" in err and "Traceback" not in err
    assert not (tmp_path / "results").exists()


@pytest.mark.parametrize(
    "argv, message",
    [
        (["eval", "--model", "m", "--record", "--replay"], "exclude each other"),
        (["eval", "--model", "m", "--formats", "native,telepathy", "--replay"], "unknown format preset(s): telepathy"),
        (["eval", "--model", "m", "--suite", "no/such/suite", "--replay"], "no such suite"),
        (["eval", "--model", "m", "--repeats", "0", "--replay"], "--repeats must be at least 1"),
        (["eval", "--model", "m", "--options", "nonsense", "--replay"], "--options expects key=value"),
        (["report", "--results-dir"], ""),
    ],
)
def test_usage_errors_exit_2_with_one_clear_line(argv: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main([*argv, *(["--cassette-dir", str(tmp_path), "--results-dir", str(tmp_path / "r")] if argv[0] == "eval" else [])])
    err = capsys.readouterr().err
    assert code == 2
    assert message in err and "Traceback" not in err


def test_no_model_and_no_cassettes_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["eval", "--host", closed_port_url(), *dirs(tmp_path)])
    assert code == 2 and "no recorded cassettes" in capsys.readouterr().err


def test_unexpected_errors_are_one_line_unless_debugging(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(config: Any) -> Any:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr("harness.runner.run_matrix", broken)
    argv = ["eval", "--model", "m", "--formats", "native", "--replay", *dirs(tmp_path)]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert "utp: error: RuntimeError: disk on fire" in err and "Traceback" not in err
    monkeypatch.setenv("UTP_DEBUG", "1")
    assert main(argv) == 1
    assert "Traceback" in capsys.readouterr().err


def test_interrupt_says_how_to_resume(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted(config: Any) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr("harness.runner.run_matrix", interrupted)
    assert main(["eval", "--model", "m", "--formats", "native", "--replay", *dirs(tmp_path)]) == 130
    assert "--resume" in capsys.readouterr().err


def test_formats_and_validate_commands(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["formats"]) == 0
    out = capsys.readouterr().out
    assert "prompt-hermes" in out and "fewshot-pythonic" in out
    assert main(["validate", str(EXAMPLES)]) == 0
    assert "ok: 2 suite(s), 3 scenario(s)" in capsys.readouterr().out
    bad = tmp_path / "bad.yaml"
    bad.write_text("scenarios:\n  - id: a\n    tools: []\n    turns: []\n", encoding="utf-8")
    assert main(["validate", str(bad)]) == 2
    assert f"{bad}:4: scenarios[0].turns:" in capsys.readouterr().err


def test_delegated_subcommands_receive_their_arguments(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[list[str]] = []

    def fake(argv: list[str]) -> int:
        seen.append(argv)
        return 0

    import harness.bfcl
    import harness.tuning

    monkeypatch.setattr(harness.tuning, "tune_main", fake)
    monkeypatch.setattr(harness.bfcl, "main", fake)
    assert main(["tune", "--results-dir", "x", "--out", "y.toml"]) == 0
    assert main(["import-bfcl", "--sample", "3"]) == 0
    assert seen == [["--results-dir", "x", "--out", "y.toml"], ["--sample", "3"]]


def test_option_and_host_parsing() -> None:
    assert parse_options(["num_ctx=8192,temperature=0.2", "stop=[\"\\n\"]", "name=plain"]) == {
        "num_ctx": 8192, "temperature": 0.2, "stop": ["\n"], "name": "plain"}
    assert normalise_host(None) == "http://127.0.0.1:11434"
    assert normalise_host("0.0.0.0:1234") == "http://127.0.0.1:1234"
    assert normalise_host("http://example.test:8080") == "http://example.test:8080"
    assert normalise_host("https://api.example.test") == "https://api.example.test:443"
    assert json.dumps(parse_options(None)) == "{}"


def test_stale_cassettes_are_skipped_when_no_model_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    suite = tmp_path / "suite.yaml"
    suite.write_text((EXAMPLES / "weather.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    common = ["--results-dir", str(tmp_path / "results"), "--cassette-dir", str(tmp_path / "cassettes"),
              "--suite", str(suite), "--no-reports", "--host", closed_port_url()]
    with ScriptedServer(default_turn=turn_from_callable(scripted_model)) as server:
        assert main(["eval", "--model", MODEL, "--formats", "native", "--record", *common, "--host", server.url]) == 0
    suite.write_text(suite.read_text(encoding="utf-8").replace("Say hello in one word.", "Say hello in two words."), encoding="utf-8")
    capsys.readouterr()
    assert main(["eval", *common]) == 0
    err = capsys.readouterr().err
    assert "Skipped 1 cassette(s) recorded for an older version of their scenario" in err
    # named explicitly, the stale cassette fails loudly and says why
    assert main(["eval", "--model", MODEL, "--formats", "native", "--replay", *common]) == 4
    assert "the scenario changed since this cassette was recorded" in capsys.readouterr().err


def test_replay_of_a_named_model_without_selection_replays_what_was_recorded(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`make eval MODEL=m REPLAY=1`: the model's cassettes alone; naming more than was recorded fails."""
    root = tmp_path / "scenarios"
    (root / "demo").mkdir(parents=True)
    (root / "demo" / "weather.yaml").write_text((EXAMPLES / "weather.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    common = ["--cassette-dir", str(tmp_path / "cassettes"), "--no-reports", "--host", closed_port_url(),
              "--scenarios-root", str(root)]
    with ScriptedServer(default_turn=turn_from_callable(scripted_model)) as server:
        assert main(["eval", "--model", MODEL, "--formats", "prompt-json", "--record", "--repeats", "2", *common,
                     "--results-dir", str(tmp_path / "recorded"), "--host", server.url]) == 0
    assert main(["eval", "--model", MODEL, "--replay", *common, "--results-dir", str(tmp_path / "replayed")]) == 0
    replayed = read_records(tmp_path / "replayed")
    assert sorted((r["format"], r["scenario"], r["repeat"], r["mode"]) for r in replayed) == [
        ("prompt-json", "no-tool-greeting", 0, "replay"), ("prompt-json", "no-tool-greeting", 1, "replay"),
        ("prompt-json", "weather-tokyo", 0, "replay"), ("prompt-json", "weather-tokyo", 1, "replay")]
    capsys.readouterr()
    code = main(["eval", "--model", MODEL, "--replay", "--formats", "native", *common, "--results-dir", str(tmp_path / "x")])
    assert code == 4 and "missing_cassette" in capsys.readouterr().err


def test_limit_takes_the_first_scenarios_of_each_suite(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with ScriptedServer(default_turn=turn_from_callable(scripted_model)) as server:
        code = main(["eval", "--model", MODEL, "--host", server.url, "--formats", "prompt-json", "--limit", "1", *dirs(tmp_path)])
    assert code == 0
    records = read_records(tmp_path / "results")
    per_suite: dict[str, list[str]] = {}
    for record in records:
        per_suite.setdefault(record["suite"], []).append(record["scenario"])
    assert per_suite and all(len(ids) == 1 for ids in per_suite.values())


def test_replay_sends_the_options_the_recording_used(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Recorded with non-default options and without streaming; replayed with neither named."""
    with ScriptedServer(default_turn=turn_from_callable(scripted_model)) as server:
        code = main(["eval", "--model", MODEL, "--host", server.url, "--formats", "prompt-json", "--record",
                     "--options", "num_predict=99,num_thread=1", "--no-stream", *dirs(tmp_path, "-rec")])
        sent = server.chat_bodies
    assert code == 0 and sent and all(b["options"]["num_predict"] == 99 and b["stream"] is False for b in sent)
    code = main(["eval", "--model", MODEL, "--host", closed_port_url(), "--formats", "prompt-json", "--replay",
                 *dirs(tmp_path, "-rep")])
    assert code == 0, capsys.readouterr().out
    replayed = read_records(tmp_path / "results-rep")
    assert replayed and all(r["error"] is None for r in replayed)
    assert all(r["provenance"]["options"]["num_predict"] == 99 for r in replayed)
    assert scores(tmp_path / "results-rec") == scores(tmp_path / "results-rep")
