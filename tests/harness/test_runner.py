"""The runner over a scripted server on loopback: record, replay, resume, failures, run records."""

from __future__ import annotations

import copy
import json
import os
import warnings
from pathlib import Path
from typing import Any

import httpx
import pytest

from harness.records import (
    RunKey,
    TornRecordWarning,
    append_record,
    completed_keys,
    is_done,
    model_slug,
    read_records,
    results_path,
)
from harness.runner import conformance_messages, executed_violations, run_matrix
from harness.runplan import RunnerConfig, RunnerError, cassette_path, canonical_model, recorded_models, resolve_formats
from harness.scenarios import load_suites
from tests.harness.conftest import EXAMPLES, scripted_model
from tests.support.scripted_server import ScriptedServer, Turn, closed_port_url, turn_from_callable

MODEL = "scripted:latest"
#: what replay cannot measure (client-side time); everything else must be identical
UNMEASURED = ("wall_s", "ttft_s", "client_wall_s", "duration_s")


class ExplodingTransport(httpx.AsyncBaseTransport):
    """Fails the test if a replay reaches for the network."""

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        raise AssertionError(f"replay touched the network: {request.method} {request.url}")


def config(tmp_path: Path, **overrides: Any) -> RunnerConfig:
    values: dict[str, Any] = dict(
        models=[MODEL],
        formats=["native", "prompt-hermes"],
        suites=load_suites([EXAMPLES]),
        results_dir=tmp_path / "results",
        cassette_dir=tmp_path / "cassettes",
        hardware="test rig",
        show_progress=False,
    )
    values.update(overrides)
    return RunnerConfig(**values)


def comparable(record: dict[str, Any]) -> dict[str, Any]:
    """A record without its mode and the client-side timings replay marks as not measured."""
    data = copy.deepcopy(record)
    data.pop("mode")

    def scrub(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: (None if k in UNMEASURED else scrub(v)) for k, v in value.items()}
        if isinstance(value, list):
            return [scrub(v) for v in value]
        return value

    return scrub(data)


def test_record_then_replay_gives_identical_records_and_scores(tmp_path: Path) -> None:
    with ScriptedServer(default_turn=turn_from_callable(scripted_model)) as server:
        recorded = run_matrix(config(tmp_path, mode="record", host=server.url, results_dir=tmp_path / "rec"))
        assert server.chat_bodies  # the model really was asked
    replayed = run_matrix(
        config(tmp_path, mode="replay", host=closed_port_url(), results_dir=tmp_path / "rep",
               live_transport_factory=lambda model: ExplodingTransport())
    )
    assert len(recorded.records) == len(replayed.records) == 6
    assert recorded.exit_code == replayed.exit_code == 0
    by_key = {RunKey.of(r): r for r in replayed.scored()}
    for record in recorded.scored():
        twin = by_key[RunKey.of(record)]
        assert (record["mode"], twin["mode"]) == ("record", "replay")
        assert comparable(record) == comparable(twin)
        assert record["scores"]["task_success"] is True
        assert twin["scores"] == {**record["scores"], "wall_s": None, "ttft_s": None}
        assert record["error"] is None and twin["error"] is None
    # a record holds what happened; its scores are derived when asked for
    assert not any("scores" in r for r in [*recorded.records, *replayed.records])
    # replay reports the recorded server counters but no client timings
    rounds = [rd for r in replayed.records for t in r["turns"] for rd in t["rounds"]]
    assert all(rd["counters"]["eval_ns"] and rd["counters"]["wall_s"] is None and rd["counters"]["ttft_s"] is None for rd in rounds)
    live_rounds = [rd for r in recorded.records for t in r["turns"] for rd in t["rounds"]]
    assert all(rd["counters"]["wall_s"] is not None for rd in live_rounds)
    # what is on disk is what was returned
    on_disk = sorted(read_records(tmp_path / "rep"), key=RunKey.of)
    assert on_disk == json.loads(json.dumps(sorted(replayed.records, key=RunKey.of)))


def test_cassette_files_follow_the_documented_layout(tmp_path: Path) -> None:
    with ScriptedServer(default_turn=turn_from_callable(scripted_model)) as server:
        run_matrix(config(tmp_path, mode="record", host=server.url, formats=["native"]))
    path = cassette_path(tmp_path / "cassettes", MODEL, "native", "examples/weather", "weather-tokyo", 0)
    assert path == tmp_path / "cassettes" / "scripted_latest" / "native" / "examples" / "weather" / "weather-tokyo.r0.json"
    data = json.loads(path.read_text())
    assert data["header"]["model_spec"] == MODEL and data["header"]["synthetic"] is False
    assert data["header"]["engine"].startswith("ollama")
    assert [e["request"]["path"] for e in data["exchanges"]] == ["/api/chat", "/api/chat"]
    assert recorded_models(tmp_path / "cassettes") == [MODEL]


def test_missing_cassette_in_replay_is_a_cassette_error_not_a_conformance_failure(tmp_path: Path) -> None:
    with ScriptedServer(default_turn=turn_from_callable(scripted_model)) as server:
        run_matrix(config(tmp_path, mode="record", host=server.url, formats=["native"]))
    gone = cassette_path(tmp_path / "cassettes", MODEL, "native", "examples/weather", "weather-tokyo", 0)
    gone.unlink()
    result = run_matrix(config(tmp_path, mode="replay", formats=["native"], results_dir=tmp_path / "rep"))
    failed = [r for r in result.records if r["error"]]
    assert [r["scenario"] for r in failed] == ["weather-tokyo"]
    assert failed[0]["error"]["kind"] == "missing_cassette"
    assert str(gone) in failed[0]["error"]["message"]
    assert result.exit_code == 4 and result.conformance_failures == []
    assert failed[0]["outcome"]["outcome"] == "errored" and failed[0]["outcome"]["error_class"] == "cassette"
    assert len(result.records) == 3  # the matrix went on


def test_a_backend_error_is_recorded_in_its_run_and_the_matrix_continues(tmp_path: Path) -> None:
    def no_native_tools(body: dict[str, Any]) -> Turn:
        return Turn.tools_unsupported(body["model"]) if body.get("tools") else scripted_model(body)

    with ScriptedServer(default_turn=turn_from_callable(no_native_tools)) as server:
        result = run_matrix(config(tmp_path, mode="live", host=server.url))
    native = [r for r in result.records if r["format"] == "native" and r["scenario"] != "no-tool-greeting"]
    prompted = [r for r in result.records if r["format"] == "prompt-hermes"]
    assert native and all(r["turns"][0]["termination"] == "backend_error" for r in native)
    assert all("tools_unsupported" in r["turns"][0]["error"] for r in native)
    scored = {RunKey.of(r): r["scores"] for r in result.scored()}
    assert all(scored[RunKey.of(r)]["task_success"] for r in prompted)
    assert result.exit_code == 0  # a model without native tools is a finding, not a CI failure


class InterruptOn(httpx.AsyncBaseTransport):
    """A live transport that simulates Ctrl-C when a given user message is sent."""

    def __init__(self, trigger: str):
        self.trigger = trigger
        self.inner = httpx.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if self.trigger in (await request.aread()).decode():
            raise KeyboardInterrupt
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


def test_resume_after_interruption_runs_only_the_rest(tmp_path: Path) -> None:
    with ScriptedServer(default_turn=turn_from_callable(scripted_model)) as server:
        interrupted = config(tmp_path, host=server.url, formats=["native"],
                             live_transport_factory=lambda model: InterruptOn("Say hello"))
        with pytest.raises(KeyboardInterrupt):
            run_matrix(interrupted)
        finished = read_records(tmp_path / "results")
        assert [r["scenario"] for r in finished] == ["read-config", "weather-tokyo"]  # k = 2 runs kept
        asked_before = len(server.chat_bodies)
        resumed = run_matrix(config(tmp_path, host=server.url, formats=["native"], resume=True))
        assert resumed.skipped == 2 and [r["scenario"] for r in resumed.records] == ["no-tool-greeting"]
        assert len(server.chat_bodies) == asked_before + 1
    assert sorted(r["scenario"] for r in read_records(tmp_path / "results")) == ["no-tool-greeting", "read-config", "weather-tokyo"]


def test_concurrent_replay_gives_the_same_records(tmp_path: Path) -> None:
    with ScriptedServer(default_turn=turn_from_callable(scripted_model)) as server:
        run_matrix(config(tmp_path, mode="record", host=server.url, repeats=2))
    serial = run_matrix(config(tmp_path, mode="replay", repeats=2, results_dir=tmp_path / "a"))
    parallel = run_matrix(config(tmp_path, mode="replay", repeats=2, concurrency=4, results_dir=tmp_path / "b"))
    key = lambda r: RunKey.of(r)  # noqa: E731
    assert [comparable(r) for r in sorted(serial.records, key=key)] == [comparable(r) for r in sorted(parallel.records, key=key)]
    assert len(serial.records) == 12


def test_config_and_naming_rules() -> None:
    assert resolve_formats("all") == resolve_formats(None) and "native" in resolve_formats(None)
    assert resolve_formats("native, prompt-json") == ["native", "prompt-json"]
    with pytest.raises(RunnerError, match="unknown format preset"):
        resolve_formats("native,telepathy")
    with pytest.raises(RunnerError, match="repeats"):
        RunnerConfig(models=["m"], formats=["native"], suites=[], repeats=0)
    assert canonical_model("ollama:llama3.2:3b") == "llama3.2:3b"
    assert [model_slug(m) for m in ("local:smollm2-135m", "qwen3-next-80b-tools", "llama3.2:3b", "a/b c")] == [
        "local_smollm2-135m", "qwen3-next-80b-tools", "llama3.2_3b", "a_b_c"]


# --------------------------------------------------------------------------- records


def _record(scenario: str, repeat: int = 0, scenario_hash: str = "h1", model: str = "m:1") -> dict[str, Any]:
    return {"schema": 1, "model": model, "format": "native", "suite": "s", "scenario": scenario,
            "repeat": repeat, "scenario_hash": scenario_hash, "turns": [], "error": None}


def test_records_survive_a_torn_last_line_and_keep_appending(tmp_path: Path) -> None:
    append_record(tmp_path, _record("a"))
    append_record(tmp_path, _record("b"))
    path = results_path(tmp_path, "m:1")
    assert path.name == "m_1.jsonl"
    with path.open("ab") as handle:  # an eval killed mid-write
        handle.write(b'{"schema": 1, "model": "m:1", "form')
    with pytest.warns(TornRecordWarning, match=r"m_1\.jsonl:3"):
        assert [r["scenario"] for r in read_records(tmp_path)] == ["a", "b"]
    append_record(tmp_path, _record("c"))  # starts on a fresh line: only the torn record is lost
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        assert [r["scenario"] for r in read_records(tmp_path)] == ["a", "b", "c"]


def test_completed_keys_respect_the_scenario_hash_and_latest_record_wins(tmp_path: Path) -> None:
    append_record(tmp_path, _record("a", scenario_hash="old"))
    append_record(tmp_path, _record("a", scenario_hash="new"))
    append_record(tmp_path, _record("b", repeat=1))
    done = completed_keys(tmp_path)
    key = RunKey("m:1", "native", "s", "a", 0)
    assert is_done(done, key, "new") and not is_done(done, key, "old")
    assert not is_done(done, RunKey("m:1", "native", "s", "b", 0), "h1")
    assert len(read_records(tmp_path)) == 2 and len(read_records(tmp_path, latest_only=False)) == 3


def test_append_is_one_durable_write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real_write, real_fsync = os.write, os.fsync
    monkeypatch.setattr(os, "write", lambda fd, data: calls.append("write") or real_write(fd, data))
    monkeypatch.setattr(os, "fsync", lambda fd: calls.append("fsync") or real_fsync(fd))
    append_record(tmp_path, _record("a"))
    assert calls == ["write", "fsync"]


def test_executed_violations_are_found_from_decisions_alone() -> None:
    record = _record("x")
    record["tools"] = [{"name": "read", "tier": "crawl"}, {"name": "delete", "tier": "run"}]
    record["turns"] = [{"tier_after_intent": "walk", "rounds": [{"calls": [
        {"name": "read", "decision": "executed"},
        {"name": "delete", "decision": "tier_violation"},
        {"name": "delete", "decision": "executed"},
    ]}]}]
    assert executed_violations(record) == ["tier violation executed: delete in turn 0"]


def test_the_exit_codes_conformance_is_read_from_the_run_never_from_stored_scores() -> None:
    record = _record("x")
    record["tools"] = [{"name": "delete", "tier": "run"}]
    record["turns"] = [{"tier_after_intent": "crawl", "termination": "final_answer", "final_answer": "done", "rounds": [
        {"index": 0, "calls": [{"name": "delete", "decision": "executed"}]},
        {"index": 1, "notes": ["the hermes parser raised ValueError"]},
    ]}]
    messages = conformance_messages(record)
    assert [m.split(": ")[1] for m in messages] == ["tier_violation_executed", "parser_crash"]
    assert messages[0].startswith("m:1 native s/x r0: ")
    clean = {**_record("y"), "scores": {"conformance_failures": [{"kind": "parser_crash", "detail": "stored"}]}}
    assert conformance_messages(clean) == []  # what an older runner stored is not what happened
    errored = {**record, "error": {"kind": "harness_error", "message": "boom"}}
    assert conformance_messages(errored) == ["m:1 native s/x r0: tier violation executed: delete in turn 0"]


def test_progress_bar_and_summary_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    import harness.progress as progress

    stream = io.StringIO()
    bar = progress.Progress(total=2, enabled=True, stream=stream)
    bar.advance({"model": "m", "format": "native", "scenario": "a", "error": None})
    bar.advance({"model": "m", "format": "native", "scenario": "b", "error": {"kind": "harness_error"}})
    bar.close()
    assert (bar.done, bar.errors) == (2, 1) and "/2 [" in stream.getvalue()  # a bar was drawn
    assert progress.Progress(total=1, stream=io.StringIO()).enabled is False  # not a terminal: no bar

    record = _record("a")
    record["scores"] = {"task_success": True, "task_kind": "call", "calls_extracted": 2, "calls_meant": 2,
                        "executed_violations": 0}
    failed = {**_record("b"), "scores": {"task_success": False, "task_kind": "call", "calls_extracted": 1,
                                         "calls_meant": 2, "executed_violations": 1}, "turns": []}
    [row] = progress.summary_rows([record, failed])
    assert row["runs"] == 2 and row["call_passed"] == 1 and row["call_tasks"] == 2
    table = progress.summary_table([record, failed])
    assert "native" in table and "tier violations executed" in table
    assert "1/2 (50%) too few to judge" in table and "3/4 (75%) too few to judge" in table  # counts beside rates


def test_unreachable_server_or_unknown_model_stops_early_with_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(RunnerError, match="connect_error.*is the server running"):
        run_matrix(config(tmp_path, host=closed_port_url()))
    with ScriptedServer(models={"other": {}}) as server:
        with pytest.raises(RunnerError, match="model_not_found.*pull the model"):
            run_matrix(config(tmp_path, host=server.url))
        assert server.chat_bodies == []
    with pytest.raises(RunnerError, match="unknown local model"):
        run_matrix(config(tmp_path, models=["local:no-such-model"]))
    assert read_records(tmp_path / "results") == []


def test_a_native_preset_that_also_teaches_keeps_its_taught_native_adapter(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The runner assembles a format exactly as an agent gets it (utp.negotiator.negotiated_for): a native
    preset with a prompt style sends the tools natively AND teaches the family in the system prompt."""
    from utp.formats import PRESETS, FormatBundle

    taught = FormatBundle("ollama", "auto", "ollama", "instructions", "hermes")
    monkeypatch.setitem(PRESETS, "native-taught", taught)
    with ScriptedServer(default_turn=turn_from_callable(scripted_model)) as server:
        result = run_matrix(config(tmp_path, mode="live", host=server.url, formats=["native-taught"]))
        bodies = server.chat_bodies
    assert result.exit_code == 0 and bodies
    first = bodies[0]
    assert first.get("tools"), "tools were not sent natively"
    system = next(m["content"] for m in first["messages"] if m["role"] == "system")
    assert "<tool_call>" in system  # the hermes family is taught as well
