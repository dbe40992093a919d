"""build_reports / utp report: files, schema, tables, offline HTML, synthetic exclusion, reproducibility."""

from __future__ import annotations

import json
import re
import warnings
from xml.etree import ElementTree
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from harness.records import TornRecordWarning
from harness.reporting import build_reports, report_main
from harness.reporting.jsonreport import load_schema
from harness.reporting.loading import ReportError, load_records
from harness.reporting.text import fenced, truncate_middle
from harness.reporting.verdict import build_verdict
from harness.scenario_model import Expectation, ExpectedCall, FinalCheck, FixtureSpec, Scenario, ToolSpec, Turn
from harness.metrics import UnjudgedRunsWarning, ensure_scores, score_run
from utp.types import Tool, ToolTier

SCENARIO = Scenario(
    id="weather", suite="core/single_call", description="", tags=[], tier=ToolTier.CRAWL, max_rounds=3,
    match="strict", system=None,
    tools=[ToolSpec(Tool("get_weather", parameters={"type": "object", "properties": {"city": {"type": "string"}}}),
                    FixtureSpec("result", {}))],
    turns=[Turn("Weather in Tokyo?", Expectation(calls=[ExpectedCall("get_weather", {"city": ["Tokyo"]})],
                                                 final=FinalCheck(contains=["11"])))],
    source_path="x.yaml", line=1,
)

#: the scenarios the fixture's runs answered, by (suite id, scenario id), handed to build_reports
SCENARIOS = {(suite, SCENARIO.id): SCENARIO for suite in ("core/single_call", "bfcl/simple_python")}

#: (model, format) → successes out of 4 repeats
OUTCOMES = {
    ("qwen3:4b", "native"): 1, ("qwen3:4b", "prompt-hermes"): 4, ("qwen3:4b", "prompt-json"): 2,
    ("llama3.2:3b", "native"): 4, ("llama3.2:3b", "prompt-hermes"): 2, ("llama3.2:3b", "prompt-json"): 0,
}
FAMILY = {"native": "native", "prompt-hermes": "hermes", "prompt-json": "json"}


def make_record(model: str, fmt: str, repeat: int, ok: bool, *, suite: str = "core/single_call",
                synthetic: bool = False) -> dict[str, Any]:
    city = "Tokyo" if ok else "Paris"
    raw = f'<tool_call>{{"name": "get_weather", "arguments": {{"city": "{city}"}}}}</tool_call>'
    rounds = [
        {"index": 0, "content": "", "thinking": "", "raw_text": raw if fmt != "native" else "",
         "calls": [{"name": "get_weather", "arguments": {"city": city}, "id": None, "format": FAMILY[fmt],
                    "repairs": [], "known": True, "decision": "executed", "result": None}],
         "diagnostics": [], "notes": [],
         "counters": {"prompt_tokens": 200, "completion_tokens": 20 + repeat, "prompt_eval_ns": 400_000_000,
                      "eval_ns": 1_000_000_000, "wall_s": None, "ttft_s": None}},
        {"index": 1, "content": "It is 11 C." if ok else "It is 20 C.", "thinking": "", "raw_text": "x",
         "calls": [], "diagnostics": [], "notes": [],
         "counters": {"prompt_tokens": 250, "completion_tokens": 8, "prompt_eval_ns": 500_000_000,
                      "eval_ns": 400_000_000}},
    ]
    record = {
        "schema": 1, "model": model, "format": fmt, "suite": suite, "scenario": "weather", "repeat": repeat,
        "scenario_hash": SCENARIO.scenario_hash, "mode": "replay", "synthetic": synthetic,
        "provenance": {"backend": "ollama", "server_version": "0.12.10",
                       "model": {"name": model, "digest": f"sha256:{model}"}, "options": {"temperature": 0},
                       "hardware": "test rig", "cassette": f"cassettes/{model}/{fmt}/r{repeat}.json",
                       "recorded_at": f"2026-11-0{1 + repeat}T10:00:00Z"},
        "turns": [{"user": "Weather in Tokyo?", "tier_start": "crawl", "tier_after_intent": "crawl",
                   "rounds": rounds, "final_answer": rounds[1]["content"], "termination": "final_answer",
                   "error": None}],
        "error": None,
    }
    return record


def write_results(directory: Path, records: list[dict[str, Any]]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    by_model: dict[str, list[str]] = {}
    for r in records:
        by_model.setdefault(r["model"], []).append(json.dumps(r))
    for model, lines in by_model.items():
        (directory / f"{model.replace(':', '_')}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.fixture
def results(tmp_path: Path) -> Path:
    records = []
    for (model, fmt), successes in OUTCOMES.items():
        for repeat in range(4):
            records.append(make_record(model, fmt, repeat, repeat < successes))
    records.append(make_record("qwen3:4b", "native", 7, True, synthetic=True))
    records.append(make_record("fake-model", "native", 0, True, synthetic=True))
    records.append(make_record("qwen3:4b", "prompt-hermes", 0, True, suite="bfcl/simple_python"))
    records.append(make_record("qwen3:4b", "prompt-hermes", 1, False, suite="bfcl/simple_python"))
    directory = tmp_path / "results"
    write_results(directory, records)
    return directory


def test_reports_exist_validate_and_say_the_right_things(results: Path, tmp_path: Path):
    out = tmp_path / "reports"
    written = build_reports(results, out, scenarios=SCENARIOS)
    names = sorted(str(p.relative_to(out)) for p in written)
    assert names == sorted([
        "index.md", "index.html",
        *(f"{slug}/compatibility.{ext}" for slug in ("qwen3_4b", "llama3.2_3b") for ext in ("md", "json", "csv")),
        *(f"{slug}/index.html" for slug in ("qwen3_4b", "llama3.2_3b")),
    ])
    schema = load_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    for slug in ("qwen3_4b", "llama3.2_3b"):
        jsonschema.validate(json.loads((out / slug / "compatibility.json").read_text()), schema)

    qwen = json.loads((out / "qwen3_4b" / "compatibility.json").read_text())
    assert qwen["verdict"]["best_format"] == "prompt-hermes"
    assert qwen["verdict"]["runner_up"] == "prompt-json"
    assert qwen["sources"]["synthetic_excluded"] == 1
    assert qwen["sources"]["runs"] == 14
    assert "replayed" in qwen["sources"]["summary"] and "test rig" in qwen["sources"]["summary"]
    native = next(f for f in qwen["formats"] if f["format"] == "native")
    assert native["runs"] == 4 and native["task_success"] == 0.25  # the synthetic success is not counted
    assert native["wall_s"] is None
    assert [c["category"] for c in qwen["bfcl_categories"]] == ["simple_python"]

    llama = json.loads((out / "llama3.2_3b" / "compatibility.json").read_text())
    assert llama["verdict"]["best_format"] == "native"
    assert llama["verdict"]["native_tools"] == "works"
    assert llama["verdict"]["tier_enforcement"] == "not_exercised"

    md = (out / "qwen3_4b" / "compatibility.md").read_text()
    assert md.startswith("# Tool-calling compatibility: qwen3:4b\n")
    assert "| Format | Runs | Call tasks [95% CI] | Restraint |" in md
    for fmt in ("native", "prompt-hermes", "prompt-json"):
        assert re.search(rf"^\| {fmt} \| ", md, re.M)
    assert "not measured" in md
    assert "## BFCL categories" in md
    category_rows = [line for line in md.splitlines() if line.startswith("| simple_python |")]
    assert len(category_rows) == 1  # one row per category, one column per format, pooled first
    runs = sum(c["runs"] for c in qwen["bfcl_categories"])
    passed = sum(c["passed"] for c in qwen["bfcl_categories"])
    assert f"%] of {runs} |" in category_rows[0] and category_rows[0].count("/") == len(qwen["bfcl_categories"])
    assert f"{passed * 100 // runs}%" in category_rows[0] or f"{round(passed * 100 / runs)}%" in category_rows[0]
    assert "```text\n" in md and '"city": "Paris"' in md  # raw failing text, fenced

    csv = (out / "qwen3_4b" / "compatibility.csv").read_text()
    assert csv.splitlines()[0].startswith("model,format,runs,errored,unsupported,judged,passed,task_success,ci_low,ci_high")
    assert "call_task_success,call_ci_low,call_ci_high" in csv.splitlines()[0]
    assert len(csv.splitlines()) == 4

    index = (out / "index.md").read_text()
    assert "[qwen3:4b](qwen3_4b/compatibility.md)" in index
    assert "fake-model: 1 synthetic run" in index
    assert "## BFCL accuracy per category" in index
    bfcl_row = next(line for line in index.splitlines() if line.startswith("| qwen3:4b | simple_python |"))
    assert f"| {runs} | " in bfcl_row and "%]" in bfcl_row

    html = (out / "index.html").read_text()
    assert "<script" not in html
    assert not re.search(r"""(?:src|href)\s*=\s*["']?\s*(?:https?:)?//""", html, re.I)
    assert "http://" not in html and "https://" not in html
    assert "fake-model" in html and 'href="qwen3_4b/index.html"' in html
    page = (out / "qwen3_4b" / "index.html").read_text()
    assert page.count("<svg") == 2 and "<script" not in page  # call-task success and speed
    for svg in re.findall(r"<svg.*?</svg>", page, re.S):
        root = ElementTree.fromstring(svg)  # well-formed
        assert root.tag == "svg" and len(root.findall("rect")) >= 2


def test_rebuild_is_byte_identical(results: Path, tmp_path: Path):
    def build(out: Path) -> dict[str, bytes]:
        return {str(p.relative_to(out)): p.read_bytes() for p in build_reports(results, out, scenarios=SCENARIOS)}

    first = build(tmp_path / "a")
    assert build(tmp_path / "a") == first  # same place again
    assert build(tmp_path / "b") == first  # no output path leaks into the bodies


def test_newest_record_per_run_wins_and_torn_lines_are_skipped(results: Path, tmp_path: Path):
    path = results / "qwen3_4b.jsonl"
    newer = make_record("qwen3:4b", "native", 0, False)
    path.write_text(path.read_text() + '{"model": "qwen3:4b", "form\n' + json.dumps(newer) + "\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        records = load_records(results)
    assert any(issubclass(w.category, TornRecordWarning) and "qwen3_4b.jsonl:" in str(w.message) for w in caught)
    native = [r for r in records if r["model"] == "qwen3:4b" and r["format"] == "native" and not r["synthetic"]]
    assert len(native) == 4
    assert next(r for r in ensure_scores(native, SCENARIOS) if r["repeat"] == 0)["scores"]["task_success"] is False


def test_bad_records_give_located_errors(tmp_path: Path, capsys):
    results = tmp_path / "results"
    results.mkdir()
    (results / "m.jsonl").write_text('{"model": "m", "format": "native", "suite": "s"}\n')
    with pytest.raises(ReportError, match=r"m\.jsonl:1:scenario: field is missing"):
        build_reports(results, tmp_path / "out")
    assert report_main(["--results-dir", str(results), "--out", str(tmp_path / "out")]) == 2
    assert "m.jsonl:1:scenario: field is missing" in capsys.readouterr().err
    assert report_main(["--results-dir", str(tmp_path / "nowhere"), "--out", str(tmp_path / "out")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_report_main_rescores_against_scenarios(tmp_path: Path, capsys):
    suite_dir = tmp_path / "scenarios"
    suite_dir.mkdir()
    (suite_dir / "single.yaml").write_text(
        "suite: core/single_call\n"
        "scenarios:\n"
        "  - id: weather\n"
        "    description: d\n"
        "    tools:\n"
        "      - name: get_weather\n"
        "        description: weather\n"
        "        parameters: {type: object, properties: {city: {type: string}}, required: [city]}\n"
        "        fixture: {result: {temp_c: 11}}\n"
        "    turns:\n"
        "      - user: Weather in Tokyo?\n"
        "        expect:\n"
        "          calls: [{name: get_weather, arguments: {city: [Paris]}}]\n"
    )
    record = make_record("m", "native", 0, ok=False)  # called Paris: a failure against SCENARIO
    record.pop("scenario_hash")
    assert score_run(record, SCENARIO)["task_success"] is False
    write_results(tmp_path / "results", [record])
    code = report_main(["--results-dir", str(tmp_path / "results"), "--out", str(tmp_path / "out"),
                        "--scenarios-dir", str(suite_dir)])
    assert code == 0, capsys.readouterr().err
    report = json.loads((tmp_path / "out" / "m" / "compatibility.json").read_text())
    assert report["formats"][0]["task_success"] == 1.0  # rescored: Paris is now the expected city


def test_a_stored_score_is_never_trusted_the_report_shows_the_derived_one(tmp_path: Path):
    """Records written before scores were derived carry a ``scores`` block; a wrong one changes nothing."""
    flattering = {"scorer_version": 2, "task_success": True, "task_kind": "call", "calls_extracted": 1,
                  "calls_meant": 1, "conformance_failures": []}
    judged = make_record("m", "native", 0, ok=False)  # called Paris: fails its scenario
    changed = {**make_record("m", "prompt-hermes", 0, ok=False), "scenario_hash": "an older version"}
    unknown = {**make_record("m", "prompt-json", 0, ok=False), "suite": "gone/suite"}
    records = [{**r, "scores": flattering} for r in (judged, changed, unknown)]
    write_results(tmp_path / "results", records)
    with pytest.warns(UnjudgedRunsWarning, match=r"2 run\(s\) have no task verdict"):
        build_reports(tmp_path / "results", tmp_path / "out", scenarios=SCENARIOS)
    rows = {row["format"]: row for row in json.loads((tmp_path / "out" / "m" / "compatibility.json").read_text())["formats"]}
    assert (rows["native"]["judged"], rows["native"]["passed"], rows["native"]["task_success"]) == (1, 0, 0.0)
    # a scenario changed since the run, or gone: scenario-free figures only, no task verdict, whatever was stored
    for fmt in ("prompt-hermes", "prompt-json"):
        assert (rows[fmt]["runs"], rows[fmt]["judged"], rows[fmt]["task_success"]) == (1, 0, None)
    with pytest.warns(UnjudgedRunsWarning):
        assert [r["scores"]["task_success"] for r in ensure_scores(records, SCENARIOS)] == [False, None, None]


def test_empty_results_still_write_an_index(tmp_path: Path):
    (tmp_path / "results").mkdir()
    written = build_reports(tmp_path / "results", tmp_path / "out")
    assert sorted(p.name for p in written) == ["index.html", "index.md"]
    assert "No (non-synthetic) runs" in (tmp_path / "out" / "index.md").read_text()


def test_text_helpers():
    text, cut = truncate_middle("a" * 5000, 1000)
    assert cut and len(text) < 1100 and "characters omitted" in text
    assert truncate_middle("short", 1000) == ("short", False)
    block = fenced("before ```json\n{}\n``` after")
    assert block.startswith("````text\n") and block.endswith("\n````")


def _row(fmt: str, success: float, low: float, high: float, adherence: float | None, **extra: Any) -> dict:
    """A format row of 20 call-task runs (the figures the verdict ranks on)."""
    adherence_calls = 20
    return {"format": fmt, "runs": 20, "task_success": success, "ci_low": low, "ci_high": high,
            "call_tasks": 20, "call_passed": round(success * 20), "call_task_success": success,
            "call_ci_low": low, "call_ci_high": high, "restraint_tasks": 0, "restraint_passed": 0, "restraint": None,
            "parse_success": 1.0, "decode_tps": 30.0, "format_adherence": adherence,
            "adherence_calls": adherence_calls if adherence is not None else 0,
            "adherent_calls": round((adherence or 0) * adherence_calls),
            "escalation_attempts": 0, "blocked": 0, "executed_violations": 0, **extra}


def _report(*rows: dict, errors: list | None = None) -> dict:
    return {"model": "m", "formats": list(rows), "errors": errors or [], "conformance": [],
            "sources": {"summary": "20 runs live against ollama on test rig", "runs": 20 * len(rows), "errored": 0,
                        "errored_by_class": {}}}


def test_verdict_native_statuses_and_tier_failure_first():
    best_prompt = _row("prompt-hermes", 0.95, 0.8, 0.99, 1.0)
    text_calls = build_verdict(_report(best_prompt, _row("native", 0.9, 0.7, 0.97, 0.1)))
    assert text_calls["native_tools"] == "text_calls" and "as text" in text_calls["text"]
    lagging = build_verdict(_report(best_prompt, _row("native", 0.2, 0.08, 0.4, 1.0)))
    assert lagging["native_tools"] == "partial" and "behind prompt-hermes" in lagging["text"]
    on_par = build_verdict(_report(best_prompt, _row("native", 0.9, 0.7, 0.97, 1.0)))
    assert on_par["native_tools"] == "works" and on_par["intervals_overlap"] is True
    refused = build_verdict(_report(_row("native", 0.0, 0.0, 0.16, None),
                                    errors=[{"format": "native", "source": "backend", "kind": "tools_unsupported",
                                             "count": 20}]))
    assert refused["native_tools"] == "unsupported"
    assert build_verdict(_report(best_prompt))["native_tools"] == "untested"
    violated = build_verdict(_report(_row("native", 0.9, 0.7, 0.97, 1.0, escalation_attempts=3, blocked=2,
                                          executed_violations=1)))
    assert violated["tier_enforcement"] == "violated"
    assert violated["text"].startswith("Tier enforcement FAILED")


def test_the_verdict_counts_native_calls_that_arrived_only_as_text():
    """The seeds' P0 symptom as a figure: what an agent reading only tool_calls would have printed."""
    native = _row("native", 0.5, 0.3, 0.7, 0.1)  # 2 of 20 calls in the tool_calls field
    text = build_verdict(_report(_row("prompt-hermes", 0.6, 0.4, 0.8, 1.0), native))["text"]
    assert "native: 18 of 20 calls" in text and "printed instead of running" in text
    assert "prompt-hermes:" not in text.split("printed instead of running")[1]  # only native formats are counted
