"""``utp accuracy`` and ``utp prose-check``: the measurements of the parser on outputs it was not built on.

The labelled outputs here are written for the test (a hermes call, prose, a
python-style call cut off by a sentence); what is checked is the counting,
the held-out split, the typed tools offered and the errors on bad files.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.accuracy import held_out, main as accuracy_main
from harness.labelled_outputs import LabelledOutputError, offered_tools, read_labelled_outputs
from harness.prose_check import main as prose_main

HERMES = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}</tool_call>'


def _write(path: Path, *items: dict) -> Path:
    path.write_text("".join(json.dumps(item) + "\n" for item in items), encoding="utf-8")
    return path


def _item(source: str, output: str, expected: list, tools: list | None = None) -> dict:
    return {"source": source, "output": output, "expected": expected, "tools": tools}


def _two_sources(tmp_path: Path) -> Path:
    paris = [{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}]
    return _write(
        tmp_path / "set.jsonl",
        _item("alpha", HERMES, paris, ["get_weather"]),
        _item("alpha", "It is sunny in Paris today.", [], ["get_weather"]),
        _item("beta", "[get_time(tz='UTC')]", [{"name": "get_time", "arguments": {"tz": "UTC"}}]),
        _item("beta", HERMES, [{"name": "get_weather", "arguments": {"city": "Rome", "days": 3}}]),
    )


def test_counts_exact_names_and_no_call_outputs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert accuracy_main([str(_two_sources(tmp_path)), "--json", str(tmp_path / "v.jsonl")]) == 0
    table = capsys.readouterr().out
    assert "| alpha " in table and "| 2 (1)" in table
    assert "| all 2 sources | 4 (1)               | 3 (75.0 %)" in table
    verdicts = [json.loads(line) for line in (tmp_path / "v.jsonl").read_text().splitlines()]
    assert [v["exact"] for v in verdicts] == [True, True, True, False]
    assert verdicts[3]["names_right"] is True  # right tool, wrong city
    assert not any(v["false_positive"] or v["crashed"] for v in verdicts)


def test_misses_are_shown_except_for_held_out_sources(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _two_sources(tmp_path)
    accuracy_main([str(path), "--show-misses"])
    assert "Rome" in capsys.readouterr().out
    salt = next(s for s in (f"salt{i}" for i in range(100)) if held_out("beta", s) and not held_out("alpha", s))
    accuracy_main([str(path), "--show-misses", "--hold-out", salt, "--json", str(tmp_path / "v.jsonl")])
    out = capsys.readouterr().out
    assert "Rome" not in out and "beta (held out)" in out and "all held out" in out and "all tuning part" in out
    held = [json.loads(line) for line in (tmp_path / "v.jsonl").read_text().splitlines() if '"beta"' in line]
    assert held and all("got" not in v and v["held_out"] for v in held)


def test_a_false_positive_is_counted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path / "fp.jsonl", _item("gamma", HERMES, [], ["get_weather"]))
    accuracy_main([str(path), "--json", str(tmp_path / "v.jsonl")])
    assert json.loads((tmp_path / "v.jsonl").read_text())["false_positive"] is True


def test_tools_given_by_name_are_typed_from_the_sources_expected_calls(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "t.jsonl",
        _item("s", "x", [{"name": "f", "arguments": {"n": 1, "flag": True}}], ["f", "g"]),
        _item("s", "y", [{"name": "f", "arguments": {"n": 2.5, "tags": ["a"]}}], None),
        _item("s", "z", [], [{"name": "h", "parameters": {"type": "object"}}]),
    )
    tools = offered_tools(read_labelled_outputs([path]))
    f, g = tools[0]
    assert f["parameters"]["properties"] == {"n": {"type": "number"}, "flag": {"type": "boolean"}, "tags": {"type": "array"}}
    assert g == {"name": "g", "parameters": {"type": "object", "properties": {}}}
    assert [t["name"] for t in tools[1]] == ["f"]  # null: the names the source expects
    assert tools[2] == [{"name": "h", "parameters": {"type": "object"}}]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"source": "s", "output": 3, "expected": []}', "bad.jsonl:2: field 'output' missing or not a string"),
        ('{"source": "s", "output": "x"}', "bad.jsonl:2: field 'expected' missing"),
        ('{"source": "s", "output": "x", "expected": [{"arguments": {}}]}', "bad.jsonl:2: field 'expected[0]' must be an object"),
        ('{"source": "s", "output": "x", "expected": [], "tools": "f"}', "bad.jsonl:2: field 'tools' must be a list or null"),
        ('{"source": "s", "output": "x", "expected": [', "bad.jsonl:2: not a JSON object"),
    ],
)
def test_a_bad_line_is_named_by_file_line_and_field(tmp_path: Path, capsys: pytest.CaptureFixture[str], line: str, message: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"source": "s", "output": "ok", "expected": []}\n' + line + "\n", encoding="utf-8")
    with pytest.raises(LabelledOutputError, match=message.split(": ", 1)[1].replace("[", r"\[")):
        read_labelled_outputs([path])
    assert accuracy_main([str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("utp: error: ") and message in err and "Traceback" not in err


def test_a_missing_file_or_empty_directory_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert accuracy_main([str(tmp_path / "none.jsonl")]) == 2
    assert accuracy_main([str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "none.jsonl: cannot read" in err and "no *.jsonl files" in err


def test_prose_check_lists_a_call_and_passes_prose(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    prose = tmp_path / "prose"
    prose.mkdir()
    (prose / "guide.md").write_text("To search, open the file and run the tests. Call print() to show it.\n", encoding="utf-8")
    assert prose_main([str(prose)]) == 0
    assert "1 documents" in capsys.readouterr().out
    (prose / "leak.txt").write_text(HERMES, encoding="utf-8")
    assert prose_main([str(prose)]) == 1
    out = capsys.readouterr().out
    assert "leak.txt [no tools]: get_weather(" in out and "2 documents" in out
    assert prose_main([str(tmp_path / "absent")]) == 2


def test_the_readme_example_line_is_read_exact(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    line = next(line for line in readme.splitlines() if line.startswith('{"source": "my-model"'))
    assert accuracy_main([str(_write(tmp_path / "replies.jsonl", json.loads(line)))]) == 0
    assert "| all 1 sources | 1 (0)               | 1 (100.0 %)" in capsys.readouterr().out
