"""Load scenario suites from YAML, and refuse to run anything when one is wrong.

A suite file is validated against ``scenarios/schema/scenario.schema.json`` and
then checked for what a schema cannot say (unique ids, expected tools that
exist, escalation targets above the starting tier, regexes that compile). Every
problem in every file is reported as ``path:line: field.path: what was
expected``: a typo in scenario 37 should cost one edit, not a traceback hunt,
and a half-valid matrix must never produce half a report.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from utp.types import ToolTier
from utp.validation import format_path as format_argument_path
from harness.scenario_building import scenario_from_data
from harness.scenario_model import DEFAULT_TIER, UNKNOWN_FILE_KIND, Scenario, Suite, file_kind_for

PROJECT_ROOT = Path(__file__).resolve().parent.parent
SCENARIOS_ROOT = PROJECT_ROOT / "scenarios"
SCHEMA_PATH = SCENARIOS_ROOT / "schema" / "scenario.schema.json"

#: directories under scenarios/ that hold no suites of the default eval
NON_SUITE_DIRS = frozenset({"schema", "cassettes", "fixtures"})
#: suites only for the harness's own tests, skipped unless named
EXAMPLE_DIRS = frozenset({"examples"})


class ScenarioError(Exception):
    """Every problem found in the suite files, one ``path:line: field: message`` each."""

    def __init__(self, messages: Sequence[str]):
        self.messages = list(messages)
        count = len(self.messages)
        head = f"{count} problem{'s' if count != 1 else ''} in scenario files"
        super().__init__(head + ":\n" + "\n".join(f"  {m}" for m in self.messages))


# --------------------------------------------------------------------------- schema + lines


@lru_cache(maxsize=1)
def _validator() -> jsonschema.Draft202012Validator:
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


PathKey = tuple[str | int, ...]


def _index_lines(node: yaml.Node, path: PathKey, index: dict[PathKey, int], key_lines: dict[PathKey, int], problems: list[str], where: str) -> None:
    """Map every value's path to its 1-based line (and every mapping key's path to the key's line)."""
    index[path] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        seen: set[str] = set()
        for key_node, value_node in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else str(key_node.value)
            child = path + (key,)
            line = key_node.start_mark.line + 1
            if key in seen:
                problems.append(f"{where}:{line}: {format_path(child)}: duplicate key {key!r}")
            seen.add(key)
            key_lines[child] = line
            _index_lines(value_node, child, index, key_lines, problems, where)
    elif isinstance(node, yaml.SequenceNode):
        for position, item in enumerate(node.value):
            _index_lines(item, path + (position,), index, key_lines, problems, where)


def format_path(path: Iterable[str | int]) -> str:
    """A field path in a scenario file, as error messages name it."""
    return format_argument_path(path, empty="(top level)")


class _LineIndex:
    def __init__(self, values: dict[PathKey, int], keys: dict[PathKey, int]):
        self.values = values
        self.keys = keys

    def line(self, path: PathKey, *, prefer_key: bool = False) -> int:
        path = tuple(path)
        while True:
            if prefer_key and path in self.keys:
                return self.keys[path]
            if path in self.values:
                return self.values[path]
            if not path:
                return 1
            path = path[:-1]


def _type_name(value: Any) -> str:
    return {dict: "mapping", list: "list", str: "string", bool: "boolean", int: "integer", float: "number", type(None): "null"}.get(
        type(value), type(value).__name__
    )


def _describe(error: jsonschema.ValidationError) -> tuple[PathKey, str, bool]:
    """(path, message, point at the key) for one schema error, in words a YAML author uses."""
    path: PathKey = tuple(error.absolute_path)
    custom = error.schema.get("x-error") if isinstance(error.schema, dict) else None
    validator = error.validator
    if validator == "additionalProperties" and isinstance(error.instance, dict):
        allowed = sorted(error.schema.get("properties", {}))
        extras = [k for k in error.instance if k not in allowed]
        key = extras[0] if extras else None
        where = path + (key,) if key is not None else path
        names = ", ".join(repr(k) for k in extras)
        return where, f"unknown field {names} (allowed: {', '.join(allowed)})", True
    if validator == "required":
        missing = re.findall(r"'([^']+)' is a required property", error.message)
        name = missing[0] if missing else error.message
        return path, f"missing required field {name!r}", False
    if validator == "dependentRequired":
        return path, error.message.replace("is a dependency of", "is needed by"), False
    if custom and validator in ("oneOf", "anyOf"):
        return path, custom, False
    if validator == "type":
        expected = error.validator_value
        expected_text = " or ".join(expected) if isinstance(expected, list) else expected
        expected_text = expected_text.replace("object", "mapping").replace("array", "list")
        return path, f"expected {expected_text}, got {_type_name(error.instance)} {json.dumps(error.instance, default=str)[:60]}", False
    if validator == "enum":
        options = ", ".join(str(v) for v in error.validator_value)
        return path, f"expected one of: {options}; got {error.instance!r}", False
    if validator == "pattern":
        return path, f"{error.instance!r} does not match the pattern {error.validator_value}", False
    if validator in ("oneOf", "anyOf") and error.context:
        best = jsonschema.exceptions.best_match(error.context)
        sub_path, message, at_key = _describe(best)
        return path + tuple(sub_path[len(path):]) if sub_path[: len(path)] == path else path, message, at_key
    return path, error.message, False


def _schema_problems(data: Any, where: str, lines: _LineIndex) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    for error in _validator().iter_errors(data):
        path, message, at_key = _describe(error)
        line = lines.line(path, prefer_key=at_key)
        out.append((line, f"{where}:{line}: {format_path(path)}: {message}"))
    return out


@lru_cache(maxsize=4096)
def _schema_error(schema_json: str) -> jsonschema.SchemaError | None:
    """Why a tool's parameters (as canonical JSON) are no valid JSON Schema, or None.

    Remembered by the schema's text: the suites repeat the same few schemas
    many times, and checking one against the metaschema is the dearest part of
    loading a suite.
    """
    try:
        jsonschema.Draft202012Validator.check_schema(json.loads(schema_json))
    except jsonschema.SchemaError as exc:
        return exc
    return None


def _semantic_problems(data: dict[str, Any], where: str, lines: _LineIndex, base_dir: Path) -> list[tuple[int, str]]:
    """What the schema cannot say; only run on schema-valid data."""
    out: list[tuple[int, str]] = []

    def problem(path: PathKey, message: str, at_key: bool = False) -> None:
        line = lines.line(path, prefer_key=at_key)
        out.append((line, f"{where}:{line}: {format_path(path)}: {message}"))

    seen_ids: dict[str, int] = {}
    for s_index, scenario in enumerate(data["scenarios"]):
        base: PathKey = ("scenarios", s_index)
        sid = scenario["id"]
        if sid in seen_ids:
            first = lines.line(("scenarios", seen_ids[sid], "id"))
            problem(base + ("id",), f"duplicate scenario id {sid!r} (first used at line {first})")
        else:
            seen_ids[sid] = s_index
        start_tier = ToolTier.parse(scenario.get("tier", DEFAULT_TIER))
        tiers: dict[str, ToolTier] = {}
        for t_index, tool in enumerate(scenario.get("tools") or []):
            tpath = base + ("tools", t_index)
            if tool["name"] in tiers:
                problem(tpath + ("name",), f"duplicate tool name {tool['name']!r}")
            tiers[tool["name"]] = ToolTier.parse(tool.get("tier", DEFAULT_TIER))
            if "parameters" in tool:
                if (error := _schema_error(json.dumps(tool["parameters"], sort_keys=True))) is not None:
                    problem(tpath + ("parameters",) + tuple(error.absolute_path), f"not a valid JSON Schema: {error.message}")
                if tool["parameters"].get("type", "object") != "object":
                    problem(tpath + ("parameters", "type"), "tool parameters must be a JSON Schema of type object")
            files = tool["fixture"].get("files")
            if files and "kind" not in files and file_kind_for(tool["name"]) is None:
                problem(tpath + ("fixture", "files"), f"tool {tool['name']!r}: {UNKNOWN_FILE_KIND}")
            if files and "root" in files:
                root = (base_dir / files["root"]).resolve()
                if not root.is_dir():
                    problem(tpath + ("fixture", "files", "root"), f"directory not found: {root}")
        for u_index, turn in enumerate(scenario["turns"]):
            expect = turn.get("expect") or {}
            epath = base + ("turns", u_index, "expect")
            calls = expect.get("calls") or []
            for c_index, call in enumerate(calls):
                if call["name"] not in tiers:
                    problem(epath + ("calls", c_index, "name"), f"expected tool {call['name']!r} is not among this scenario's tools ({', '.join(tiers) or 'none'})")
            if expect.get("no_call") and calls:
                problem(epath + ("no_call",), "no_call: true contradicts a non-empty calls list")
            for e_index, name in enumerate(expect.get("escalation") or []):
                if name not in tiers:
                    problem(epath + ("escalation", e_index), f"escalation tool {name!r} is not among this scenario's tools")
                elif tiers[name] <= start_tier:
                    problem(
                        epath + ("escalation", e_index),
                        f"escalation tool {name!r} has tier {tiers[name].name.lower()}, not above the starting tier {start_tier.name.lower()}",
                    )
            final = expect.get("final") or {}
            if final.get("regex") is not None:
                try:
                    re.compile(final["regex"])
                except re.error as exc:
                    problem(epath + ("final", "regex"), f"regex does not compile: {exc}")
    return out


# --------------------------------------------------------------------------- loading


def scenarios_root_for(path: Path) -> Path:
    """The ``scenarios/`` directory a suite file lives under (its own directory if none)."""
    for parent in path.resolve().parents:
        if parent.name == "scenarios":
            return parent
    return path.resolve().parent


def default_suite_id(path: Path) -> str:
    root = scenarios_root_for(path)
    try:
        relative = path.resolve().relative_to(root)
    except ValueError:
        relative = Path(path.name)
    return relative.with_suffix("").as_posix()


#: libyaml when present: the BFCL suites are large and pure-Python YAML is slow
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _compose_and_construct(text: str) -> tuple[yaml.Node | None, Any]:
    """Parse once: the node tree (for line numbers) and the data built from that same tree."""
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    finally:
        loader.dispose()
    return node, data


_SUITE_LINE = re.compile(r"^suite:\s*['\"]?([^'\"#\s]+)", re.MULTILINE)


def declared_suite_id(path: Path) -> str | None:
    """The ``suite:`` a file declares, read without parsing the whole file (for selecting by id)."""
    try:
        with path.open(encoding="utf-8") as handle:
            head = handle.read(4096)
    except (OSError, UnicodeDecodeError):
        return None
    found = _SUITE_LINE.search(head)
    return found.group(1) if found else None


def _load_one(path: Path) -> tuple[Suite | None, list[tuple[int, str]]]:
    where = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        return None, [(0, f"{where}:0: cannot read file: {exc.strerror or exc}")]
    except UnicodeDecodeError as exc:
        return None, [(0, f"{where}:0: not UTF-8 text: {exc.reason}")]
    suite, problems = _load_text(where, text)
    return suite, list(problems)


@lru_cache(maxsize=512)
def _load_text(where: str, text: str) -> tuple[Suite | None, tuple[tuple[int, str], ...]]:
    """A suite file's text read and checked, remembered by its place and text.

    One command loads the same suites several times (the run, then its
    reports and recommendation); reading and validating them again is most of
    a replay's time. The records are frozen, so sharing them is safe.
    """
    suite, problems = _read_suite(Path(where), where, text)
    return suite, tuple(problems)


def _read_suite(path: Path, where: str, text: str) -> tuple[Suite | None, list[tuple[int, str]]]:
    try:
        node, data = _compose_and_construct(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else 0
        reason = " ".join(p for p in (exc.context, exc.problem) if p)
        return None, [(line, f"{where}:{line}: YAML syntax error: {reason}")]
    except yaml.YAMLError as exc:
        return None, [(0, f"{where}:0: YAML error: {exc}")]
    values: dict[PathKey, int] = {}
    keys: dict[PathKey, int] = {}
    problems: list[str] = []
    if node is not None:
        _index_lines(node, (), values, keys, problems, where)
    lines = _LineIndex(values, keys)
    found: list[tuple[int, str]] = [(lines.line(()), p) for p in problems]
    if data is None:
        return None, [(1, f"{where}:1: (top level): empty file; expected a mapping with 'scenarios'")]
    found.extend(_schema_problems(data, where, lines))
    if found:
        return None, found
    base_dir = scenarios_root_for(path)
    found.extend(_semantic_problems(data, where, lines, base_dir))
    if found:
        return None, found
    suite_id = data.get("suite") or default_suite_id(path)
    scenarios = [
        scenario_from_data(s, suite_id, where, lines.line(("scenarios", i)), base_dir) for i, s in enumerate(data["scenarios"])
    ]
    return Suite(id=suite_id, description=data.get("description", ""), path=where, scenarios=scenarios), []


def load_suite(path: str | Path) -> Suite:
    """One suite file, fully checked; raises :class:`ScenarioError` listing every problem."""
    suite, problems = _load_one(Path(path))
    if problems:
        raise ScenarioError([m for _, m in sorted(problems, key=lambda p: p[0])])
    assert suite is not None
    return suite


def suite_files(directory: Path, include_examples: bool = True) -> list[Path]:
    """Suite files under a directory, skipping schema/cassette/fixture trees."""
    skip = NON_SUITE_DIRS | (frozenset() if include_examples else EXAMPLE_DIRS)
    found = []
    for candidate in sorted(directory.rglob("*.y*ml")):
        relative = candidate.relative_to(directory).parts[:-1]
        if candidate.suffix in (".yaml", ".yml") and not any(part in skip for part in relative):
            found.append(candidate)
    return found


def default_suite_paths(root: Path = SCENARIOS_ROOT) -> list[Path]:
    """What ``utp eval`` runs when no suite is named: every suite except the examples."""
    return suite_files(root, include_examples=False)


def resolve_suite_paths(selectors: Iterable[str | Path], root: Path = SCENARIOS_ROOT) -> list[Path]:
    """Files for paths, directories or suite ids (``core``, ``core/01_single_call``)."""
    paths: list[Path] = []
    unknown: list[str] = []
    for selector in selectors:
        candidate = Path(selector)
        options = [candidate, root / candidate, root / f"{selector}.yaml", root / f"{selector}.yml"]
        match = next((p for p in options if p.exists()), None)
        if match is None:
            by_id = [p for p in suite_files(root) if str(selector) in (default_suite_id(p), declared_suite_id(p))]
            if by_id:
                paths.extend(by_id)
                continue
            unknown.append(str(selector))
        elif match.is_dir():
            paths.extend(suite_files(match, include_examples=True))
        else:
            paths.append(match)
    if unknown:
        raise ScenarioError([f"{s}: no such suite file, directory or suite id under {root}" for s in unknown])
    unique: dict[Path, None] = {p.resolve(): None for p in paths}
    return list(unique)


def load_suites(selectors: Iterable[str | Path] | None = None, root: Path = SCENARIOS_ROOT) -> list[Suite]:
    """Load every selected suite; if ANY file has a problem, raise with all of them."""
    paths = default_suite_paths(root) if selectors is None else resolve_suite_paths(selectors, root)
    suites: list[Suite] = []
    problems: list[str] = []
    for path in paths:
        suite, found = _load_one(path)
        problems.extend(m for _, m in sorted(found, key=lambda p: p[0]))
        if suite is not None:
            suites.append(suite)
    seen: dict[str, str] = {}
    for suite in suites:
        if suite.id in seen:
            problems.append(f"{suite.path}:1: suite: duplicate suite id {suite.id!r} (also in {seen[suite.id]})")
        seen.setdefault(suite.id, suite.path)
    if problems:
        raise ScenarioError(problems)
    return suites


def find_scenario(suites: Iterable[Suite], suite_id: str, scenario_id: str) -> Scenario | None:
    for suite in suites:
        if suite.id == suite_id:
            for scenario in suite.scenarios:
                if scenario.id == scenario_id:
                    return scenario
    return None
