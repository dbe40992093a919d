"""A report says which chat template rendered the tools and whether the server parsed calls itself."""

from __future__ import annotations

import json
from pathlib import Path

from harness.reporting.jsonreport import model_report
from harness.reporting.loading import ensure_scores, load_scenarios
from harness.reporting.markdown import render_model_markdown
from harness.scenarios import SCENARIOS_ROOT

ROOT = Path(__file__).resolve().parents[2]


def qwen_records(limit: int = 6) -> list[dict]:
    path = ROOT / "reports" / "results" / "local_qwen2.5-coder-0.5b.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()[:limit]
    return ensure_scores([json.loads(line) for line in lines], load_scenarios(SCENARIOS_ROOT))


def test_template_hash_and_server_parser_reach_the_report() -> None:
    records = qwen_records()
    model = records[0]["provenance"]["model"]
    report = model_report("local:qwen2.5-coder-0.5b", records)
    assert report["provenance"]["template_hashes"] == [model["template_hash"]]
    assert report["provenance"]["server_tool_parsers"] == [model["parser"]]
    text = render_model_markdown(report)
    assert f"Chat template sha256: `{model['template_hash']}`" in text
    assert "Server's tool-call parser: `none: calls stay in content`" in text
