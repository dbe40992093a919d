"""A failed run is never a result, a replay never rewrites history, a verdict cannot be won by abstaining.

Each test reproduces one way the reports used to mislead, against the
scripted server (a test double) over real HTTP on loopback: a server killed
mid-record, a hung one, a trickling one, one that answers ``/api/show`` for
any name but 404s on chat, and the verdict rules themselves.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from harness.cli import main
from harness.outcomes import Outcome, classify
from harness.records import completed_keys, read_records, results_path
from harness.reporting.jsonreport import model_report
from harness.runner import run_matrix
from harness.runplan import RunnerConfig, cassette_path
from harness.scenarios import load_suites
from harness.metrics import SCORER_VERSION, ensure_scores
from harness.tuning import model_choices
from tests.harness.conftest import EXAMPLES, scripted_model
from tests.support.scripted_server import ScriptedServer, Turn, closed_port_url, turn_from_callable

MODEL = "scripted:latest"
FORMATS = ["native", "prompt-hermes", "prompt-json"]


def config(tmp_path: Path, host: str, **overrides: Any) -> RunnerConfig:
    values: dict[str, Any] = dict(
        models=[MODEL], formats=FORMATS, suites=load_suites([EXAMPLES]), results_dir=tmp_path / "results",
        cassette_dir=tmp_path / "cassettes", hardware="test rig", host=host, mode="record", show_progress=False,
    )
    values.update(overrides)
    return RunnerConfig(**values)


def dying_model(server_box: list[ScriptedServer], after: int):
    """The scripted model, until its server is stopped (from another thread) after ``after`` chat requests."""
    asked = {"n": 0}

    def answer(body: dict[str, Any]) -> Turn:
        asked["n"] += 1
        if asked["n"] == after:
            threading.Thread(target=server_box[0].stop, daemon=True).start()
        return scripted_model(body)

    return turn_from_callable(answer)


def cassettes(tmp_path: Path) -> dict[Path, str]:
    return {p: p.read_text(encoding="utf-8") for p in (tmp_path / "cassettes").rglob("*.json")}


def test_a_server_killed_mid_record_leaves_no_empty_cassette_stops_early_and_resume_completes(tmp_path: Path) -> None:
    with ScriptedServer(default_turn=turn_from_callable(scripted_model)) as server:
        baseline = run_matrix(config(tmp_path / "baseline", server.url))
    assert baseline.exit_code == 0
    total = len(baseline.records)

    box: list[ScriptedServer] = []
    server = ScriptedServer(default_turn=dying_model(box, after=4))
    box.append(server)
    with server:
        interrupted = run_matrix(config(tmp_path, server.url, stop_after_failures=3))
    assert interrupted.stopped and "connect_error" in interrupted.stopped and "--resume" in interrupted.stopped
    assert interrupted.exit_code == 3
    assert len(interrupted.records) < total  # stopped early instead of failing every remaining run
    for path, text in cassettes(tmp_path).items():
        assert json.loads(text)["exchanges"], f"{path} was written with no exchanges"
    errored = [r for r in interrupted.records if classify(r).outcome is Outcome.ERRORED]
    classes = {classify(r).error_class.value for r in errored}
    assert "connection" in classes and classes <= {"connection", "server"}  # a reply cut by the kill is a server error
    assert not set(completed_keys(tmp_path / "results")) & {_key(r) for r in errored}  # errored is never "done"

    with ScriptedServer(default_turn=turn_from_callable(scripted_model)) as again:
        resumed = run_matrix(config(tmp_path, again.url, resume=True))
    assert resumed.exit_code == 0 and resumed.skipped == len(completed_keys(tmp_path / "results")) - len(resumed.records)
    final = read_records(tmp_path / "results")
    assert len(final) == total and all(classify(r).outcome is Outcome.COMPLETED for r in final)
    passed = sorted((_key(r), r["scores"]["task_success"]) for r in ensure_scores(final, baseline.scenarios))
    assert passed == sorted((_key(r), r["scores"]["task_success"]) for r in baseline.scored())
    assert all(json.loads(t)["exchanges"] for t in cassettes(tmp_path).values())


def _key(record: dict[str, Any]) -> tuple:
    return (record["model"], record["format"], record["suite"], record["scenario"], record["repeat"])


def test_rerecording_while_the_server_dies_never_overwrites_good_cassettes(tmp_path: Path) -> None:
    with ScriptedServer(default_turn=turn_from_callable(scripted_model)) as server:
        assert run_matrix(config(tmp_path, server.url)).exit_code == 0
    good = cassettes(tmp_path)
    box: list[ScriptedServer] = []
    server = ScriptedServer(default_turn=dying_model(box, after=2))
    box.append(server)
    with server:
        result = run_matrix(config(tmp_path, server.url, results_dir=tmp_path / "again"))
    errored = [r for r in result.records if classify(r).outcome is Outcome.ERRORED]
    assert result.exit_code == 3 and errored
    after = cassettes(tmp_path)
    assert set(after) == set(good)
    for record in errored:
        path = cassette_path(tmp_path / "cassettes", MODEL, record["format"], record["suite"], record["scenario"], 0)
        assert after[path] == good[path], f"{path} was replaced by a run that errored"
    assert all(json.loads(t)["exchanges"] for t in after.values())


def test_a_model_the_chat_endpoint_does_not_know_stops_after_a_few_runs(tmp_path: Path, capsys) -> None:
    """A proxy answers /api/show for any name but /api/chat says 404: no full evaluation, no recommendation."""
    with ScriptedServer(default_turn=Turn.model_not_found("nosuch")) as server:
        code = main(["eval", "--model", "nosuch", "--host", server.url, "--formats", ",".join(FORMATS),
                     "--results-dir", str(tmp_path / "r"), "--reports-dir", str(tmp_path / "rep"),
                     "--cassette-dir", str(tmp_path / "c")])
        chats = len(server.chat_bodies)
    captured = capsys.readouterr()
    assert code == 3
    assert chats <= 3 * 3  # stopped after 3 runs in a row (a run may retry nothing: model_not_found is final)
    assert "model_not_found" in captured.err and "--resume" in captured.err
    assert ": use " not in captured.out  # no recommendation printed
    assert "nosuch: no recommendation" in captured.out


def test_a_hung_server_is_cut_off_by_the_response_deadline(tmp_path: Path) -> None:
    hung = Turn(content="late", delay_s=5.0)
    with ScriptedServer(default_turn=hung) as server:
        started = time.monotonic()
        result = run_matrix(config(tmp_path, server.url, formats=["prompt-json"], response_timeout_s=0.5,
                                   stop_after_failures=2))
        elapsed = time.monotonic() - started
    assert result.stopped and "timeout" in result.stopped
    assert elapsed < 5 * 3  # not minutes per request: two deadlines (plus retries) and the eval stops
    assert all(classify(r).error_class.value == "timeout" for r in result.records)


def test_a_trickling_server_is_cut_off_although_every_read_is_quick(tmp_path: Path) -> None:
    trickle = Turn(content="x" * 200, chunk_delay_s=0.05)  # 4-character chunks, 50 ms apart: ~2.5 s in all
    with ScriptedServer(default_turn=trickle, chunk_size=4) as server:
        started = time.monotonic()
        result = run_matrix(config(tmp_path, server.url, formats=["prompt-json"], response_timeout_s=0.6,
                                   stop_after_failures=1))
        elapsed = time.monotonic() - started
    assert result.records and classify(result.records[0]).kind == "timeout"
    assert "deadline" in classify(result.records[0]).message
    assert elapsed < 2.5


def test_a_stalled_request_is_shown_as_waiting() -> None:
    import io

    from harness.progress import Progress
    from harness.records import RunKey

    now = [100.0]
    out = io.StringIO()
    progress = Progress(total=1, enabled=False, stream=out, clock=lambda: now[0])
    progress.started(RunKey(MODEL, "native", "core/x", "weather", 0))
    progress.tick()
    assert out.getvalue() == ""
    now[0] += 6
    progress.tick()
    assert "waiting 6 s for scripted:latest native core/x weather" in out.getvalue()


def test_live_runs_share_one_connection_pool(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    made = []
    real_init = httpx.AsyncHTTPTransport.__init__

    def counting_init(self: httpx.AsyncHTTPTransport, *args: Any, **kwargs: Any) -> None:
        made.append(self)
        real_init(self, *args, **kwargs)

    monkeypatch.setattr(httpx.AsyncHTTPTransport, "__init__", counting_init)
    with ScriptedServer(default_turn=turn_from_callable(scripted_model)) as server:
        result = run_matrix(config(tmp_path, server.url, mode="live"))
    assert result.exit_code == 0 and len(result.records) == 9
    assert len(made) == 1  # one pool for the whole evaluation, not one client per run


# --------------------------------------------------------------------------- verdicts


def _record(fmt: str, scenario: str, kind: str, ok: bool, **extra: Any) -> dict[str, Any]:
    return {
        "schema": 1, "model": "m", "format": fmt, "suite": "core/x", "scenario": scenario, "repeat": 0,
        "mode": "record", "synthetic": False, "provenance": {}, "turns": [], "error": None,
        "scores": {"scorer_version": SCORER_VERSION, "task_success": ok, "task_kind": kind, "calls_extracted": 1,
                   "calls_meant": 1, "errors": {}, "backend_errors": {}, "conformance_failures": [],
                   "clean_termination": True},
        **extra,
    }


def test_a_format_that_never_calls_is_not_recommended_however_much_restraint_it_shows() -> None:
    abstainer = [_record("prompt-json", f"irrelevant-{i}", "restraint", True) for i in range(11)]
    abstainer += [_record("prompt-json", f"call-{i}", "call", False) for i in range(20)]
    caller = [_record("prompt-hermes", f"irrelevant-{i}", "restraint", i < 3) for i in range(11)]
    caller += [_record("prompt-hermes", f"call-{i}", "call", i < 2) for i in range(20)]
    choice = model_choices(abstainer + caller)["m"]
    assert choice.profile is not None and choice.profile.preset == "prompt-hermes"
    assert choice.profile.fallbacks == ()  # the abstainer never earned a place, even as a fallback
    report = model_report("m", abstainer + caller)
    assert report["verdict"]["best_format"] == "prompt-hermes"
    assert "call tasks 2/20 (10%" in report["verdict"]["text"] and "restraint 3/11" in report["verdict"]["text"]

    nobody = model_choices(abstainer)["m"]
    assert nobody.profile is None and "no format passed any task that needs a call" in nobody.reason
    assert model_report("m", abstainer)["verdict"]["recommended"] is False


def test_a_rate_over_one_call_says_it_is_too_few() -> None:
    from harness.reporting.text import counted_rate

    assert counted_rate(1, 1) == "1/1 (100%) too few to judge"
    assert counted_rate(12, 116, 0.06, 0.17) == "12/116 (10% [6–17%])"


def test_mostly_errored_runs_get_a_warning_instead_of_a_recommendation() -> None:
    ok = [_record("prompt-hermes", f"call-{i}", "call", True) for i in range(3)]
    dead = [_record("prompt-hermes", f"dead-{i}", "call", False, error={"kind": "harness_error", "message": "x"},
                    scores={}) for i in range(10)]
    choice = model_choices(ok + dead)["m"]
    assert choice.profile is None and "10/13 runs errored" in choice.reason
    report = model_report("m", ok + dead)
    assert report["sources"]["errored"] == 10 and report["sources"]["errored_by_class"] == {"harness": 10}
    assert report["formats"][0]["runs"] == 3  # errored runs are in no denominator
    assert report["verdict"]["recommended"] is False


# --------------------------------------------------------------------------- replays


def test_replaying_twice_leaves_recorded_history_untouched(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    with ScriptedServer(default_turn=turn_from_callable(scripted_model)) as server:
        assert main(["eval", "--model", MODEL, "--host", server.url, "--formats", "native", "--record",
                     "--suite", str(EXAMPLES), "--cassette-dir", "cassettes"]) == 0
    recorded = results_path("reports/results", MODEL)
    before = recorded.read_bytes()
    reports_before = {p: p.read_bytes() for p in Path("reports").glob("*.*")}
    capsys.readouterr()
    for _ in range(2):
        assert main(["eval", "--host", closed_port_url(), "--suite", str(EXAMPLES), "--cassette-dir", "cassettes"]) == 0
        assert "Reports: reports/replayed/index.html" in capsys.readouterr().err  # the index, not a model's page
    assert recorded.read_bytes() == before
    assert {p: p.read_bytes() for p in Path("reports").glob("*.*")} == reports_before
    replayed = results_path("reports/replayed/results", MODEL)
    assert len(replayed.read_text(encoding="utf-8").splitlines()) == 3  # a view, not appended history


def test_replaying_a_model_with_no_cassettes_fails_and_says_what_to_do(tmp_path: Path, capsys) -> None:
    code = main(["eval", "--model", "nosuch", "--replay", "--cassette-dir", str(tmp_path / "c"),
                 "--results-dir", str(tmp_path / "r"), "--no-reports"])
    err = capsys.readouterr().err
    assert code == 4
    assert "no cassettes for nosuch" in err and "RECORD=1" in err


def test_a_corrupted_stream_line_in_a_cassette_is_a_cassette_error_with_file_and_line(tmp_path: Path, capsys) -> None:
    with ScriptedServer(default_turn=turn_from_callable(scripted_model)) as server:
        assert run_matrix(config(tmp_path, server.url, formats=["native"])).exit_code == 0
    path = cassette_path(tmp_path / "cassettes", MODEL, "native", "examples/weather", "weather-tokyo", 0)
    data = json.loads(path.read_text(encoding="utf-8"))
    chat = next(e for e in data["exchanges"] if e["request"]["path"] == "/api/chat")
    chat["response"]["chunks"][0] = chat["response"]["chunks"][0][:-5] + "\n"
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    code = main(["eval", "--model", MODEL, "--formats", "native", "--replay", "--suite", str(EXAMPLES),
                 "--cassette-dir", str(tmp_path / "cassettes"), "--results-dir", str(tmp_path / "rep"), "--no-reports"])
    err = capsys.readouterr().err
    assert code == 4
    assert f"{path}:" in err and "damaged after recording" in err
    assert "malformed_stream" not in err and "UTP misbehaved" not in err
