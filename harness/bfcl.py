"""Import Berkeley Function Calling Leaderboard items as UTP scenario suites.

BFCL is the public yardstick for function calling, so running a sample of it
through UTP's own parser and checks puts our per-format numbers next to a
scale people already know. The data ships in the ``bfcl-eval`` PyPI package;
its ``__init__`` pulls in heavy provider SDKs, so the package is located with
``importlib.util.find_spec`` and only its JSON Lines data files are read,
never imported.

Mapping (one suite file per category, one scenario per item):

* ``function`` -> tools at tier crawl with a fixed ``{"status": "ok"}`` result.
  BFCL's parameter types are Python-flavoured (``dict``, ``float``,
  ``tuple``, ``any``); they become JSON Schema (:func:`to_json_schema`).
* Dots in function names become ``_``: Ollama and OpenAI accept only
  ``^[a-zA-Z0-9_-]{1,64}$``, and BFCL does the same for those providers
  (``convert_to_tool`` / ``underscore_to_dot`` in bfcl_eval).
* ``question[0]`` -> the one user turn; its system messages -> ``system``.
* ``possible_answer`` ground truth -> ``expect.calls`` with the acceptable
  value lists verbatim (``""`` = may be omitted, scored with ``match: bfcl``)
  and those parameters also listed in ``optional``.
* AST categories judge only the first response, hence ``max_rounds: 1`` and
  ``expect_termination: max_rounds`` (the loop stops after executing the
  calls of round 1); irrelevance items expect no call and a clean stop;
  live_relevance items (no ground truth) only need *a* call, which the same
  ``max_rounds`` termination expresses.
* Multi-turn, memory, web-search and format-sensitivity categories need state
  or harness features a one-turn scenario cannot express; they are refused
  with a message naming the first item that does not fit.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import json
import random
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from utp.fileio import write_text_atomic
from harness.bfcl_schema import BFCL_TYPES, BfclError, to_json_schema, tool_parameters, tool_name

PACKAGE = "bfcl_eval"
DISTRIBUTION = "bfcl-eval"
INSTALL_HINT = "pip install --no-deps bfcl-eval"
DATA_PREFIX = "BFCL_v4_"
LICENCE = "Apache-2.0"
SOURCE_URL = "https://github.com/ShishirPatil/gorilla/tree/main/berkeley-function-call-leaderboard"

DEFAULT_CATEGORIES: tuple[str, ...] = (
    "simple_python",
    "multiple",
    "parallel",
    "parallel_multiple",
    "irrelevance",
    "live_simple",
)
#: every expected call must come in the one response
PARALLEL_CATEGORIES = frozenset({"parallel", "parallel_multiple", "live_parallel", "live_parallel_multiple"})
#: the right answer is to call nothing; these categories have no possible_answer file
NO_CALL_CATEGORIES = frozenset({"irrelevance", "live_irrelevance"})
#: the right answer is *some* call, any arguments; no possible_answer file either.
#: Expressed as "the first round must end with a call": max_rounds, calls unchecked
ANY_CALL_CATEGORIES = frozenset({"live_relevance"})

DEFAULT_SAMPLE = 50
DEFAULT_SEED = 0
DEFAULT_OUT = Path("scenarios/bfcl")
FIXTURE_RESULT: dict[str, Any] = {"status": "ok"}


# --------------------------------------------------------------------------- data location


@dataclass(frozen=True)
class DataSource:
    """Where the BFCL files are, and how to describe them in a generated header."""

    directory: Path
    label: str

    def question_file(self, category: str) -> Path:
        return self.directory / f"{DATA_PREFIX}{category}.json"

    def answer_file(self, category: str) -> Path:
        return self.directory / "possible_answer" / f"{DATA_PREFIX}{category}.json"

    def categories(self) -> list[str]:
        prefix_len = len(DATA_PREFIX)
        return sorted(p.stem[prefix_len:] for p in self.directory.glob(f"{DATA_PREFIX}*.json"))


def locate_data(data_dir: str | Path | None = None) -> DataSource:
    """The installed package's data directory, or ``data_dir`` when given."""
    if data_dir is not None:
        directory = Path(data_dir)
        if not directory.is_dir():
            raise BfclError(f"--data-dir {directory}: not a directory")
        return DataSource(directory, f"BFCL data files from {directory}")
    spec = importlib.util.find_spec(PACKAGE)  # locates without importing
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for location in locations:
        directory = Path(location) / "data"
        if directory.is_dir():
            return DataSource(directory, f"{DISTRIBUTION} {_package_version()} (PyPI), {PACKAGE}/data")
    raise BfclError(
        f"the BFCL data is not installed: run `{INSTALL_HINT}` "
        f"(--no-deps: only the data files are used), or pass --data-dir DIR "
        f"with {DATA_PREFIX}<category>.json files"
    )


def _package_version() -> str:
    try:
        return importlib.metadata.version(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        return "(version unknown)"


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """BFCL's ``.json`` files are JSON Lines: one item per line."""
    if not path.is_file():
        raise BfclError(f"{path}: file not found")
    items: list[dict[str, Any]] = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
            except json.JSONDecodeError as exc:
                raise BfclError(f"{path}:{number}: not valid JSON ({exc.msg})") from None
            if not isinstance(item, dict) or not isinstance(item.get("id"), str):
                raise BfclError(f"{path}:{number}: expected an object with a string 'id'")
            items.append(item)
    return items


# --------------------------------------------------------------------------- items -> scenarios


def sample_items(items: Sequence[dict[str, Any]], sample: int | None, seed: int) -> list[dict[str, Any]]:
    """``sample`` items chosen by a seeded shuffle, kept in the data's own order.

    Keeping file order makes the generated file stable to read and to diff; the
    seed alone decides membership.
    """
    if sample is None or sample >= len(items):
        return list(items)
    order = list(range(len(items)))
    random.Random(seed).shuffle(order)
    chosen = sorted(order[:sample])
    return [items[i] for i in chosen]


def _turn_text(item: Mapping[str, Any], where: str) -> tuple[str, str | None]:
    """(user text, system text) from the item's only turn."""
    question = item.get("question")
    if not isinstance(question, list) or not question:
        raise BfclError(f"{where}: 'question' must be a non-empty list of turns")
    if len(question) != 1:
        raise BfclError(f"{where}: {len(question)} turns; only single-turn BFCL categories can be imported")
    users: list[str] = []
    systems: list[str] = []
    by_role = {"user": users, "system": systems}
    for index, message in enumerate(question[0]):
        role = message.get("role") if isinstance(message, Mapping) else None
        target = by_role.get(role) if isinstance(role, str) else None
        if target is None:
            raise BfclError(f"{where}.question[0][{index}]: role {role!r} is not supported (user or system)")
        target.append(str(message.get("content", "")))
    if not users or not any(u.strip() for u in users):
        raise BfclError(f"{where}: the turn has no user message")
    return "\n\n".join(users), ("\n\n".join(systems) if systems else None)


def _tools(item: Mapping[str, Any], where: str) -> list[dict[str, Any]]:
    functions = item.get("function")
    if not isinstance(functions, list) or not functions:
        raise BfclError(f"{where}: 'function' must be a non-empty list")
    tools: list[dict[str, Any]] = []
    seen: dict[str, str] = {}
    for index, function in enumerate(functions):
        fwhere = f"{where}.function[{index}]"
        if not isinstance(function, Mapping):
            raise BfclError(f"{fwhere}: expected an object")
        name = tool_name(function.get("name"), fwhere)
        if name in seen:
            raise BfclError(f"{fwhere}: {function.get('name')!r} and {seen[name]!r} collide as tool {name!r}")
        seen[name] = str(function.get("name"))
        tools.append(
            {
                "name": name,
                "description": str(function.get("description", "")),
                "tier": "crawl",
                "parameters": tool_parameters(function.get("parameters", {"type": "dict"}), f"{fwhere}.parameters"),
                "fixture": {"result": dict(FIXTURE_RESULT)},
            }
        )
    return tools


def _expected_calls(answer: Mapping[str, Any], tool_names: Iterable[str], where: str) -> list[dict[str, Any]]:
    truth = answer.get("ground_truth")
    if not isinstance(truth, list):
        raise BfclError(f"{where}: possible answer has no 'ground_truth' list")
    offered = set(tool_names)
    calls: list[dict[str, Any]] = []
    for index, entry in enumerate(truth):
        cwhere = f"{where}.ground_truth[{index}]"
        if not isinstance(entry, Mapping) or len(entry) != 1:
            raise BfclError(f"{cwhere}: expected {{function name: {{parameter: [values]}}}}")
        (raw_name, params), = entry.items()
        name = tool_name(raw_name, cwhere)
        if name not in offered:
            raise BfclError(f"{cwhere}: expected function {raw_name!r} is not among the item's functions")
        if not isinstance(params, Mapping):
            raise BfclError(f"{cwhere}: parameters must be a mapping of name to acceptable values")
        arguments: dict[str, list[Any]] = {}
        optional: list[str] = []
        for param, values in params.items():
            acceptable = list(values) if isinstance(values, list) else [values]
            arguments[param] = acceptable
            if "" in acceptable:
                optional.append(param)
        call: dict[str, Any] = {"name": name, "arguments": arguments}
        if optional:
            call["optional"] = optional
        calls.append(call)
    return calls


def item_to_scenario(item: Mapping[str, Any], category: str, answer: Mapping[str, Any] | None) -> dict[str, Any]:
    """One BFCL item as a scenario mapping in the suite-file shape."""
    item_id = str(item["id"])
    where = f"{category}/{item_id}"
    user, system = _turn_text(item, where)
    tools = _tools(item, where)
    no_call = category in NO_CALL_CATEGORIES
    expect: dict[str, Any]
    if no_call:
        expect = {"calls": [], "no_call": True}
    elif category in ANY_CALL_CATEGORIES:
        expect = {}
    else:
        if answer is None:
            raise BfclError(f"{where}: no possible answer for this item")
        calls = _expected_calls(answer, (t["name"] for t in tools), where)
        expect = {"calls": calls, "order": "parallel" if category in PARALLEL_CATEGORIES else "any"}
    scenario: dict[str, Any] = {
        "id": item_id,
        "description": f"BFCL v4 {category} item {item_id}",
        "tags": ["bfcl", category],
        "tier": "crawl",
        "max_rounds": 1,
        "match": "bfcl",
    }
    if not no_call:
        scenario["expect_termination"] = "max_rounds"
    if system is not None:
        scenario["system"] = system
    scenario["tools"] = tools
    scenario["turns"] = [{"user": user, "expect": expect}]
    return scenario


def build_suite(source: DataSource, category: str, sample: int | None, seed: int) -> dict[str, Any]:
    """The suite mapping for one category (``suite``, ``description``, ``scenarios``)."""
    items = sample_items(read_jsonl(source.question_file(category)), sample, seed)
    answers: dict[str, dict[str, Any]] = {}
    if category not in NO_CALL_CATEGORIES | ANY_CALL_CATEGORIES:
        answers = {a["id"]: a for a in read_jsonl(source.answer_file(category))}
    scenarios = [item_to_scenario(item, category, answers.get(item["id"])) for item in items]
    return {
        "suite": f"bfcl/{category}",
        "description": f"BFCL v4 category {category}: {len(scenarios)} items, scored with BFCL's AST rules on the first response.",
        "scenarios": scenarios,
    }


# --------------------------------------------------------------------------- writing


class _SuiteDumper(yaml.SafeDumper):
    """Multi-line strings as ``|`` blocks so long prompts stay readable."""


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    if "\n" in value and not any(c in value for c in "\r\t") and value == value.rstrip(" "):
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", value)


_SuiteDumper.add_representer(str, _represent_str)


def render_suite(suite: Mapping[str, Any], header: str) -> str:
    # default_flow_style=None: innermost lists/maps inline ([a, b]), the rest as blocks
    body = yaml.dump(
        dict(suite), Dumper=_SuiteDumper, sort_keys=False, allow_unicode=True, width=100, default_flow_style=None
    )
    return header + body


def header_comment(source: DataSource, category: str, command: str) -> str:
    lines = [
        f"Generated from the Berkeley Function Calling Leaderboard (BFCL v4), category {category}.",
        f"Source: {source.label}; {SOURCE_URL}",
        f"Licence of the data: {LICENCE}, by the BFCL authors (Gorilla project, UC Berkeley Sky Computing Lab).",
        f"Command: {command}",
        "Do not edit by hand: re-run the command.",
    ]
    return "".join(f"# {line}\n" for line in lines)


def import_bfcl(
    categories: Sequence[str] = DEFAULT_CATEGORIES,
    *,
    sample: int | None = DEFAULT_SAMPLE,
    seed: int = DEFAULT_SEED,
    out: str | Path = DEFAULT_OUT,
    data_dir: str | Path | None = None,
    command: str | None = None,
) -> list[Path]:
    """Write ``<out>/<category>.yaml`` per category; returns the files written.

    Every category is converted before anything is written, so a bad item
    leaves the previous files untouched.
    """
    source = locate_data(data_dir)
    available = set(source.categories())
    unknown = [c for c in categories if c not in available]
    if unknown:
        listing = ", ".join(sorted(available)) or "none"
        raise BfclError(f"unknown categor{'y' if len(unknown) == 1 else 'ies'} {', '.join(unknown)} in {source.directory} (available: {listing})")
    if command is None:
        command = _command_line(categories, sample, seed, out, data_dir)
    rendered = [
        (Path(out) / f"{category}.yaml", render_suite(build_suite(source, category, sample, seed), header_comment(source, category, command)))
        for category in categories
    ]
    for path, text in rendered:
        write_text_atomic(path, text)
    return [path for path, _ in rendered]


def _command_line(categories: Sequence[str], sample: int | None, seed: int, out: str | Path, data_dir: str | Path | None) -> str:
    parts = ["utp import-bfcl", f"--categories {','.join(categories)}"]
    parts.append(f"--sample {sample}" if sample is not None else "--sample all")
    parts += [f"--seed {seed}", f"--out {out}"]
    if data_dir is not None:
        parts.append(f"--data-dir {data_dir}")
    return " ".join(parts)


# --------------------------------------------------------------------------- CLI


def _sample_arg(text: str) -> int | None:
    if text.lower() == "all":
        return None
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number or 'all', got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive number or 'all', got {text!r}")
    return value


def _categories_arg(text: str) -> list[str]:
    names = [c.strip() for c in text.split(",") if c.strip()]
    if not names:
        raise argparse.ArgumentTypeError("expected a comma-separated list of categories")
    return names


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The options of ``utp import-bfcl``, for a CLI that builds its own subparser."""
    parser.add_argument(
        "--categories", type=_categories_arg, default=list(DEFAULT_CATEGORIES),
        help=f"comma-separated BFCL categories (default: {','.join(DEFAULT_CATEGORIES)})",
    )
    parser.add_argument("--sample", type=_sample_arg, default=DEFAULT_SAMPLE,
                        help=f"items per category after a seeded shuffle, or 'all' (default: {DEFAULT_SAMPLE})")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help=f"shuffle seed (default: {DEFAULT_SEED})")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"output directory (default: {DEFAULT_OUT})")
    parser.add_argument("--data-dir", type=Path, default=None,
                        help=f"directory with {DATA_PREFIX}<category>.json files (default: the installed {DISTRIBUTION} package)")
    return parser


def main(argv: Sequence[str] | argparse.Namespace | None = None) -> int:
    """``utp import-bfcl``: exit 0 on success, 2 on a usage or data error."""
    if isinstance(argv, argparse.Namespace):
        args = argv
    else:
        parser = add_arguments(argparse.ArgumentParser(
            prog="utp import-bfcl",
            description="Convert Berkeley Function Calling Leaderboard data into UTP scenario suites.",
        ))
        args = parser.parse_args(list(argv) if argv is not None else None)
    try:
        written = import_bfcl(args.categories, sample=args.sample, seed=args.seed, out=args.out, data_dir=args.data_dir)
    except BfclError as exc:
        print(f"utp import-bfcl: error: {exc}", file=sys.stderr)
        return 2
    for path in written:
        print(f"wrote {path}")
    return 0


__all__ = [
    "BFCL_TYPES",
    "BfclError",
    "DEFAULT_CATEGORIES",
    "DataSource",
    "add_arguments",
    "build_suite",
    "import_bfcl",
    "item_to_scenario",
    "locate_data",
    "main",
    "sample_items",
    "to_json_schema",
    "tool_name",
    "tool_parameters",
]


if __name__ == "__main__":
    raise SystemExit(main())
