"""The README's examples run as written (the loop one against a scripted Ollama double).

A README that drifts from the code is worse than none; these tests execute
its ``python`` blocks verbatim.
"""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

from tests.support.scripted_server import ScriptedServer, Turn

README = Path(__file__).resolve().parents[1] / "README.md"


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)


def run_block(source: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(source, str(README), "exec"), {"__name__": "readme_example"})
    return out.getvalue()


def test_readme_has_the_two_commands_and_examples():
    text = README.read_text(encoding="utf-8")
    assert "make eval" in text and "make test" in text
    assert len(python_blocks()) >= 2


def test_parse_example_prints_what_the_readme_says():
    block = python_blocks()[0]
    promised = re.search(r"# (search_code \{.*\} \w+)", block).group(1)
    assert run_block(block).strip() == promised


def test_loop_example_runs_the_tool_and_ends_with_the_answer(monkeypatch: pytest.MonkeyPatch):
    turns = [
        Turn(content='<tools>\n{"name": "search_code", "arguments": {"query": "authentication"}}\n</tools>'),
        Turn(content="Authentication lives in auth/handler.py, line 15."),
    ]
    with ScriptedServer(turns) as srv:
        monkeypatch.setenv("OLLAMA_HOST", srv.url)
        printed = run_block(python_blocks()[1])
        bodies = srv.chat_bodies
    assert "final_answer" in printed.lower()
    assert "auth/handler.py" in printed
    tool_messages = [m for m in bodies[1]["messages"] if m.get("role") == "tool"]
    assert tool_messages and "auth/handler.py:15" in tool_messages[0]["content"]


def test_results_table_is_the_committed_reports_own() -> None:
    from harness.reporting.readme_table import load_reports, results_table

    table = results_table(load_reports(README.parent / "reports"))
    assert table in README.read_text(encoding="utf-8"), (
        "README's results table differs from the reports: paste `python -m harness.reporting.readme_table`")
