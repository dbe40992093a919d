"""Scenario files: strict schema, file:line errors for every problem, and deterministic fixtures."""

from __future__ import annotations

import asyncio
import json
import textwrap
from pathlib import Path

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.fixtures import FileTree, FixtureError, build_handlers, build_registry
from harness.scenario_building import _acceptable
from harness.scenarios import SCHEMA_PATH, ScenarioError, default_suite_paths, load_suite, load_suites
from harness.scenario_model import file_kind_for
from utp.types import ToolCall, ToolTier

EXAMPLES = Path(__file__).resolve().parents[2] / "scenarios" / "examples"

GOOD = """\
suite: t/good
description: a valid suite
scenarios:
  - id: one
    tier: walk
    tools:
      - name: get_weather
        description: weather
        parameters: {type: object, properties: {city: {type: string}}, required: [city]}
        fixture: {result: {temp_c: 11}}
      - name: delete_city
        tier: run
        fixture: {error: "nope"}
    turns:
      - user: weather in Tokyo?
        expect:
          calls: [{name: get_weather, arguments: {city: Tokyo}, optional: [units]}]
          escalation: [delete_city]
          final: {contains: "11", regex: "\\\\d+"}
"""


def write(tmp_path: Path, text: str, name: str = "suite.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def problems(path: Path) -> list[str]:
    with pytest.raises(ScenarioError) as caught:
        load_suite(path)
    return caught.value.messages


def test_schema_itself_is_valid_draft_2020_12() -> None:
    jsonschema.Draft202012Validator.check_schema(json.loads(SCHEMA_PATH.read_text()))


def test_good_file_loads_into_dataclasses(tmp_path: Path) -> None:
    suite = load_suite(write(tmp_path, GOOD))
    [scenario] = suite.scenarios
    assert (suite.id, scenario.id, scenario.suite, scenario.line) == ("t/good", "one", "t/good", 4)
    assert scenario.tier is ToolTier.WALK and scenario.match == "strict" and scenario.max_rounds >= 1
    call = scenario.turns[0].expect.calls[0]
    assert call.arguments == {"city": ["Tokyo"]} and call.optional == ["units"]
    assert scenario.turns[0].expect.final.contains == ["11"]
    assert scenario.tool_by_name["delete_city"].tier is ToolTier.RUN


def test_example_suites_load_and_are_not_in_the_default_eval() -> None:
    suites = load_suites([EXAMPLES])
    assert {s.id for s in suites} == {"examples/weather", "examples/files_and_tiers"}
    assert all("examples" not in p.parts for p in default_suite_paths())


@pytest.mark.parametrize(
    "snippet, line, field, words",
    [
        ("    max_rounds: four\n", 4, "scenarios[0].max_rounds", "expected integer"),
        ("    colour: blue\n", 4, "scenarios[0].colour", "unknown field 'colour'"),
        ("    tier: sprint\n", 4, "scenarios[0].tier", "expected one of: crawl, walk, run"),
        ("    match: fuzzy\n", 4, "scenarios[0].match", "expected one of: strict, bfcl"),
    ],
)
def test_schema_errors_name_file_line_and_field(tmp_path: Path, snippet: str, line: int, field: str, words: str) -> None:
    text = "scenarios:\n  - id: a\n    tools: []\n" + snippet + "    turns:\n      - user: hi\n"
    path = write(tmp_path, text)
    [message] = problems(path)
    assert message.startswith(f"{path}:{line}: {field}: ")
    assert words in message


def test_every_error_of_a_file_is_reported(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """\
        scenarios:
          - id: a
            tools:
              - name: t
                fixture: {result: 1, error: "x"}
            turns:
              - expect: {}
              - user: 7
        """,
    )
    found = problems(path)
    assert any(m.startswith(f"{path}:5: scenarios[0].tools[0].fixture: ") and "exactly one of" in m for m in found)
    assert any(m.startswith(f"{path}:7: scenarios[0].turns[0]: missing required field 'user'") for m in found)
    assert any(m.startswith(f"{path}:8: scenarios[0].turns[1].user: expected string") for m in found)
    assert len(found) == 3


def test_semantic_errors_duplicate_id_unknown_tool_bad_regex_and_escalation(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """\
        scenarios:
          - id: a
            tools:
              - {name: t, fixture: {result: 1}}
            turns:
              - user: hi
          - id: a
            tier: walk
            tools:
              - {name: t, tier: walk, fixture: {result: 1}}
            turns:
              - user: x
                expect:
                  calls: [{name: missing_tool}]
                  escalation: [t]
                  final: {regex: "(("}
        """,
    )
    found = problems(path)
    assert f"{path}:7: scenarios[1].id: duplicate scenario id 'a' (first used at line 2)" in found
    assert any(m.startswith(f"{path}:14: scenarios[1].turns[0].expect.calls[0].name: expected tool 'missing_tool'") for m in found)
    assert any(m.startswith(f"{path}:15: scenarios[1].turns[0].expect.escalation[0]: ") and "not above" in m for m in found)
    assert any(m.startswith(f"{path}:16: scenarios[1].turns[0].expect.final.regex: regex does not compile") for m in found)


def test_yaml_syntax_error_and_duplicate_keys_give_file_line(tmp_path: Path) -> None:
    broken = write(tmp_path, "scenarios:\n  - id: a\n   bad: [\n", "broken.yaml")
    [message] = problems(broken)
    assert message.startswith(f"{broken}:3: YAML syntax error")
    dup = write(tmp_path, "scenarios:\n  - id: a\n    id: b\n    tools: []\n    turns: [{user: hi}]\n", "dup.yaml")
    assert f"{dup}:3: scenarios[0].id: duplicate key 'id'" in problems(dup)


def test_one_bad_file_stops_everything_and_lists_all_files(tmp_path: Path) -> None:
    good = write(tmp_path, GOOD, "good.yaml")
    bad1 = write(tmp_path, "scenarios: []\n", "bad1.yaml")
    bad2 = write(tmp_path, "scenarios:\n  - id: 'has space'\n    tools: []\n    turns: [{user: x}]\n", "bad2.yaml")
    with pytest.raises(ScenarioError) as caught:
        load_suites([good, bad1, bad2])
    text = str(caught.value)
    assert f"{bad1}:1: scenarios:" in text and f"{bad2}:2: scenarios[0].id:" in text
    assert str(good) not in text


def test_unknown_suite_selector_is_reported(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="no such suite"):
        load_suites(["does/not/exist"], root=tmp_path)


def test_scenario_hash_changes_with_content_not_location(tmp_path: Path) -> None:
    first = load_suite(write(tmp_path, GOOD, "a.yaml")).scenarios[0]
    moved = load_suite(write(tmp_path, "\n\n# comment\n" + GOOD, "b.yaml")).scenarios[0]
    changed = load_suite(write(tmp_path, GOOD.replace("weather in Tokyo?", "weather in Osaka?"), "c.yaml")).scenarios[0]
    assert first.scenario_hash == moved.scenario_hash
    assert first.scenario_hash != changed.scenario_hash
    assert len(first.scenario_hash) == 64


@given(st.one_of(st.integers(), st.text(), st.booleans(), st.none(), st.dictionaries(st.text(), st.integers())))
def test_a_scalar_expected_value_means_that_one_value(value: object) -> None:
    assert _acceptable(value) == [value]


@given(st.lists(st.integers()))
def test_a_list_means_acceptable_values(values: list[int]) -> None:
    assert _acceptable(values) == values


# --------------------------------------------------------------------------- fixtures


FIXTURES = """\
scenarios:
  - id: f
    tier: run
    tools:
      - name: lookup
        parameters: {type: object, properties: {id: {type: integer}, x: {type: string}}}
        fixture:
          by_args:
            - {when: {id: 1}, result: {name: one}}
            - {when: {id: 2}, error: "id 2 is broken"}
          default: {name: unknown}
      - name: poll
        fixture: {sequence: [pending, pending, done]}
      - name: fail
        fixture: {error: "upstream timeout"}
      - name: read_file
        parameters: {type: object, properties: {path: {type: string}}, required: [path]}
        fixture: {files: {tree: {"src/a.py": "def authenticate():\\n    return True\\n", "README.md": "hi\\n"}}}
      - name: write_file
        parameters: {type: object, properties: {path: {type: string}, content: {type: string}}}
        fixture: {files: {tree: {}}}
      - name: list_dir
        parameters: {type: object, properties: {path: {type: string}}}
        fixture: {files: {tree: {}}}
      - name: search_code
        parameters: {type: object, properties: {query: {type: string}}}
        fixture: {files: {tree: {}}}
    turns:
      - user: go
"""


def _execute(registry, name: str, **arguments):  # type: ignore[no-untyped-def]
    return asyncio.run(registry.execute(ToolCall(name, arguments), 5))


def test_fixtures_behave_deterministically_through_the_real_registry(tmp_path: Path) -> None:
    scenario = load_suite(write(tmp_path, FIXTURES)).scenarios[0]
    registry = build_registry(scenario)
    assert _execute(registry, "lookup", id=1).result == {"name": "one"}
    assert _execute(registry, "lookup", id=1.0).result == {"name": "one"}  # 1 and 1.0 are the same argument
    assert "id 2 is broken" in _execute(registry, "lookup", id=2).error
    assert _execute(registry, "lookup", id=3).result == {"name": "unknown"}
    assert [_execute(registry, "poll").result for _ in range(4)] == ["pending", "pending", "done", "done"]
    failed = _execute(registry, "fail")
    assert failed.error_kind.value == "execution_error" and "upstream timeout" in failed.error
    assert _execute(registry, "read_file", path="src/a.py").result.startswith("def authenticate")
    assert _execute(registry, "list_dir", path=".").result == ["README.md", "src/"]
    hits = _execute(registry, "search_code", query="AUTHENTICATE").result
    assert hits == [{"path": "src/a.py", "line": 1, "text": "def authenticate():"}]
    assert _execute(registry, "write_file", path="src/b.py", content="x = 1\n").result["written"] is True
    assert _execute(registry, "read_file", path="src/b.py").result == "x = 1\n"  # one shared tree per run
    escape = _execute(registry, "read_file", path="../../etc/passwd")
    assert escape.error_kind.value == "path_violation" and escape.executed is False
    # a fresh run starts from the original state
    fresh = build_registry(scenario)
    assert _execute(fresh, "poll").result == "pending"
    assert _execute(fresh, "read_file", path="src/b.py").error_kind.value == "execution_error"


def test_fixture_registry_starts_at_the_scenario_tier(tmp_path: Path) -> None:
    scenario = load_suite(write(tmp_path, GOOD)).scenarios[0]
    registry = build_registry(scenario)
    assert registry.current_tier is ToolTier.WALK
    refused = _execute(registry, "delete_city")
    assert refused.error_kind.value == "tier_violation" and not refused.executed


def test_files_root_loads_a_real_directory(tmp_path: Path) -> None:
    scenarios = tmp_path / "scenarios"
    repo = scenarios / "fixtures" / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "config.py").write_text("PORT = 8080\n")
    path = scenarios / "s.yaml"
    path.write_text(
        "scenarios:\n  - id: r\n    tools:\n      - name: read_file\n"
        "        parameters: {type: object, properties: {path: {type: string}}}\n"
        "        fixture: {files: {root: fixtures/repo}}\n    turns: [{user: x}]\n"
    )
    scenario = load_suite(path).scenarios[0]
    handlers = build_handlers(scenario)
    assert handlers["read_file"](path="src/config.py") == "PORT = 8080\n"
    path.write_text(path.read_text().replace("fixtures/repo", "fixtures/nope"))
    assert any("directory not found" in m for m in problems(path))


def test_file_tree_refuses_escapes_and_names_choose_behaviour() -> None:
    tree = FileTree({"a/b.txt": "x"})
    for bad in ("/etc/passwd", "../x", "a/../../x"):
        with pytest.raises(FixtureError):
            tree.read(bad)
    with pytest.raises(FixtureError, match="directory"):
        tree.read("a")
    assert tree.list("a") == ["b.txt"]
    assert [file_kind_for(n) for n in ("read_file", "list_dir", "search_code", "write_file")] == ["read", "list", "search", "write"]
    assert file_kind_for("frobnozz") is None and file_kind_for("frobnozz", "read") == "read"


@settings(max_examples=50)
@given(st.dictionaries(st.from_regex(r"[a-z]{1,6}(/[a-z]{1,6}){0,2}\.txt", fullmatch=True), st.text(max_size=20), max_size=6))
def test_every_file_in_a_tree_reads_back_and_is_listed(files: dict[str, str]) -> None:
    tree = FileTree(dict(files))
    for name, text in files.items():
        if not any(other.startswith(name + "/") for other in files):
            assert tree.read(name) == text
    top = tree.list("") if files else []
    assert all(name.split("/")[0] in {t.rstrip("/") for t in top} for name in files)


def test_suites_are_selected_by_path_directory_file_id_or_declared_id(tmp_path: Path) -> None:
    root = tmp_path / "scenarios"
    (root / "core").mkdir(parents=True)
    (root / "schema").mkdir()
    (root / "schema" / "ignored.yaml").write_text("not: a suite\n")
    first = root / "core" / "01_first.yaml"
    first.write_text(GOOD.replace("suite: t/good", "suite: core/first"))
    second = root / "core" / "02_second.yaml"
    second.write_text(GOOD.replace("suite: t/good\n", ""))
    assert [s.id for s in load_suites(["core"], root=root)] == ["core/first", "core/02_second"]
    assert [s.id for s in load_suites(["core/first"], root=root)] == ["core/first"]
    assert [s.id for s in load_suites(["core/02_second"], root=root)] == ["core/02_second"]
    assert [s.id for s in load_suites([str(first)], root=root)] == ["core/first"]
    assert [s.id for s in load_suites(None, root=root)] == ["core/first", "core/02_second"]
