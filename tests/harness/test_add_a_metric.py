"""Adding a metric is one module: registered, it is scored, summarised, shown and defined in every report.

The metric here (calls the parser had to repair, over calls) lives only in
this test. Building the reports from the committed recordings with it
registered must show its column and its definition, validate against the
report schema (whose format rows come from the registry) and leave every
committed record byte-for-byte as it was: scores are derived, never stored.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from harness.intervals import ratio, wilson_interval
from harness.metrics import Column, CountedRate, Group, Metric, RunJudgement, register, score_run, unregister
from harness.metrics.schema import BOUND, COUNT, RATE
from harness.reporting import build_reports
from harness.reporting.jsonreport import load_schema

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "reports" / "results"
DEFINITION = "calls the parser had to repair before they could be read (fewer is better)"


class RepairRate(Metric):
    name = "repair_rate_test"
    description = "Calls whose text the parser repaired / calls extracted."
    run_fields = ("calls_repaired",)
    summary_fields = {"calls_repaired": COUNT, "repair_rate": RATE, "repair_ci_low": BOUND, "repair_ci_high": BOUND}
    columns = (Column("Repairs", CountedRate("calls_repaired", "calls_extracted", "repair_ci_low", "repair_ci_high"),
                      DEFINITION, rank=65),)

    def score(self, run: RunJudgement) -> dict[str, Any]:
        return {"calls_repaired": sum(1 for c in run.calls if c.call.repairs)}

    def summarise(self, group: Group) -> dict[str, Any]:
        repaired, calls = group.total("calls_repaired"), group.total("calls_extracted")
        low, high = wilson_interval(repaired, calls)
        return {"calls_repaired": repaired, "repair_rate": ratio(repaired, calls),
                "repair_ci_low": low, "repair_ci_high": high}


@pytest.fixture
def repair_metric():
    register(RepairRate)
    try:
        yield RepairRate
    finally:
        unregister(RepairRate.name)


def _digests(directory: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(directory.glob("*.jsonl"))}


def test_a_registered_metric_reaches_every_report_and_no_record_changes(repair_metric, tmp_path: Path):
    # the smallest committed results file, read where it is copied (a report over all of them takes longer)
    smallest = min(RESULTS.glob("*.jsonl"), key=lambda p: p.stat().st_size)
    results = tmp_path / "results"
    results.mkdir()
    shutil.copyfile(smallest, results / smallest.name)
    before, committed = _digests(results), _digests(RESULTS)
    out = tmp_path / "reports"
    build_reports(results, out)
    assert _digests(results) == before, "building a report must never rewrite a record"
    assert _digests(RESULTS) == committed

    schema = load_schema()
    assert "repair_rate" in schema["properties"]["formats"]["items"]["properties"]
    slug = sorted(p.name for p in out.iterdir() if p.is_dir())[0]
    report = json.loads((out / slug / "compatibility.json").read_text(encoding="utf-8"))
    jsonschema.validate(report, schema)
    row = report["formats"][0]
    assert row["calls_repaired"] <= row["calls_extracted"]
    assert row["repair_rate"] == ratio(row["calls_repaired"], row["calls_extracted"])

    markdown = (out / slug / "compatibility.md").read_text(encoding="utf-8")
    header = next(line for line in markdown.splitlines() if line.startswith("| Format |"))
    assert "| Adherence | Repairs | Arg validity |" in header  # rank 65 puts it between them
    assert f"Repairs = {DEFINITION}." in markdown
    assert "repair_rate" in (out / slug / "compatibility.csv").read_text(encoding="utf-8").splitlines()[0]
    assert DEFINITION in (out / slug / "index.html").read_text(encoding="utf-8")


def test_an_unregistered_metric_is_gone_again(tmp_path: Path):
    record = json.loads(next(iter(RESULTS.glob("*.jsonl"))).read_text(encoding="utf-8").splitlines()[0])
    assert "calls_repaired" not in score_run(record)
    schema = load_schema()
    assert "repair_rate" not in schema["properties"]["formats"]["items"]["properties"]


def test_two_metrics_cannot_claim_one_field():
    class Clash(Metric):
        name = "clash_test"
        description = "claims a field the parse metric owns"
        run_fields = ("calls_meant",)

    with pytest.raises(ValueError, match="calls_meant"):
        register(Clash)


def test_every_metric_module_registers_itself_in_its_position():
    import pkgutil

    import harness.metrics as package
    from harness.metrics import metrics

    modules = {m.name for m in pkgutil.iter_modules(package.__path__)} - package._NOT_METRICS
    registered = [type(m) for m in metrics()]
    assert {cls.__module__.rsplit(".", 1)[1] for cls in registered} == modules
    positions = [cls.position for cls in registered]
    assert positions == sorted(positions), "the registry is kept in position order"


def test_each_metric_returns_exactly_the_fields_it_declares():
    from harness.metrics import judge, metrics
    from harness.metrics.base import Group
    from harness.reporting.loading import load_scenarios
    from harness.scenarios import SCENARIOS_ROOT

    scenarios = load_scenarios(SCENARIOS_ROOT)
    records = [json.loads(line) for line in next(iter(sorted(RESULTS.glob("*.jsonl")))).read_text(
        encoding="utf-8").splitlines()[:20]]
    runs = [judge(r, scenarios.get((r["suite"], r["scenario"]))) for r in records]
    scores = [score_run(r, scenarios.get((r["suite"], r["scenario"]))) for r in records]
    for metric in metrics():
        for run in runs:
            assert list(metric.score(run)) == list(metric.run_fields), metric.name
        summary = metric.summarise(Group(records=records, scores=scores))
        assert list(summary) == list(metric.summary_fields), metric.name
