"""``utp accuracy``: how exactly UTP reads labelled model outputs (no model runs).

The corpus test in ``tests/parsers`` measures the parser on the outputs it was
built against; what users need to know is how it does on outputs nobody
showed it: their own model's replies, or other projects' test data. This
command parses each labelled output (:mod:`harness.labelled_outputs`) in
``auto`` mode with the tools its source offers, once more with no tools, and
counts per source:

* *exact*: the calls kept equal the expected calls, names and arguments,
  order aside. A call UTP flags ``known=False`` counts only when a call of
  that name is expected: UTP keeps an unknown tool's call flagged (the
  registry refuses it); the sources drop it.
* *names right*: the same names in the same order;
* *false positive*: a call kept from an output that holds none;
* *crash*: the parser raised.

``--hold-out SALT`` sets aside the sources whose ``sha256(SALT|source)``
starts with a byte divisible by three: their figures are reported apart and
their misses are never printed, so a held-out part stays unseen while the
parser is tuned on the rest. ``--json FILE`` writes every item's verdict,
for comparing two trees item by item.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from harness.labelled_outputs import LabelledOutput, LabelledOutputError, offered_tools, read_labelled_outputs
from utp.fileio import write_text_atomic


@dataclass(frozen=True)
class Verdict:
    """How one labelled output was read."""

    source: str
    origin: str
    holds_call: bool
    exact: bool
    names_right: bool
    false_positive: bool
    crashed: str
    exact_without_tools: bool
    got: tuple[tuple[str, str], ...]


def _canonical(name: str, arguments: Any) -> tuple[str, str]:
    return name, json.dumps(arguments, sort_keys=True, ensure_ascii=False)


def _kept_calls(parsed: Any, expected_names: set[str]) -> list[Any]:
    return [call for call in parsed.tool_calls if call.known is not False or call.name in expected_names]


def judge(item: LabelledOutput, tools: list[dict[str, Any]]) -> Verdict:
    """Parse ``item`` with and without ``tools`` and compare with its labels."""
    from utp.parsers import parse_response

    expected_names = {call.name for call in item.expected}
    expected = sorted(_canonical(call.name, call.arguments) for call in item.expected)
    results: list[list[Any] | None] = []
    crashed = ""
    for offered in (tools or None, None):
        try:
            results.append(_kept_calls(parse_response(item.output, tools=offered), expected_names))
        except Exception as exc:  # noqa: BLE001 - a crash is what this counts
            crashed = crashed or f"{type(exc).__name__}: {exc}"
            results.append(None)
    with_tools, without_tools = results

    def exact(calls: list[Any] | None) -> bool:
        return calls is not None and sorted(_canonical(c.name, c.arguments) for c in calls) == expected

    got = tuple(_canonical(c.name, c.arguments) for c in with_tools or [])
    return Verdict(
        source=item.source,
        origin=item.origin,
        holds_call=bool(item.expected),
        exact=exact(with_tools),
        names_right=with_tools is not None and [c.name for c in with_tools] == [c.name for c in item.expected],
        false_positive=not item.expected and bool(with_tools),
        crashed=crashed,
        exact_without_tools=exact(without_tools),
        got=got,
    )


def held_out(source: str, salt: str) -> bool:
    """The split rule: decided by the source's name alone, before anything is measured."""
    return hashlib.sha256(f"{salt}|{source}".encode()).digest()[0] % 3 == 0


def _percent(count: int, total: int) -> str:
    return f"{count} ({100 * count / total:.1f} %)" if total else "0"


#: the two parts ``--hold-out`` splits the sources into
HELD_OUT, TUNING_PART = "held out", "tuning part"


def _row(label: str, group: Sequence[Verdict]) -> list[str]:
    total = len(group)
    return [
        label,
        f"{total} ({sum(not v.holds_call for v in group)})",
        _percent(sum(v.exact for v in group), total),
        str(sum(v.names_right for v in group)),
        str(sum(v.false_positive for v in group)),
        str(sum(bool(v.crashed) for v in group)),
        _percent(sum(v.exact_without_tools for v in group), total),
    ]


def summary_rows(verdicts: Sequence[Verdict], part_of: dict[str, str]) -> list[list[str]]:
    """A row per source (in file order), per part when the sources were split, and for them all."""
    sources = list(dict.fromkeys(v.source for v in verdicts))
    rows = []
    for source in sources:
        mark = f" ({HELD_OUT})" if part_of.get(source) == HELD_OUT else ""
        rows.append(_row(source + mark, [v for v in verdicts if v.source == source]))
    for part in dict.fromkeys(part_of[s] for s in sources if s in part_of):
        rows.append(_row(f"all {part}", [v for v in verdicts if part_of.get(v.source) == part]))
    rows.append(_row(f"all {len(sources)} sources", verdicts))
    return rows


HEADERS = ["source", "outputs (no call)", "exact", "names right", "false positives", "crashes", "exact, no tools"]


def _miss_report(item: LabelledOutput, verdict: Verdict) -> str:
    expected = [list(_canonical(c.name, c.arguments)) for c in item.expected]
    lines = [f"--- {verdict.origin} ({item.source})", item.output, f"    expected: {expected}",
             f"    got:      {[list(call) for call in verdict.got]}"]
    if verdict.crashed:
        lines.append(f"    crashed:  {verdict.crashed}")
    return "\n".join(lines)


def _verdict_record(verdict: Verdict, is_held_out: bool) -> dict[str, Any]:
    """A verdict for ``--json``; a held-out output's reading is left out, as its misses are."""
    record = {**asdict(verdict), "held_out": is_held_out}
    if is_held_out:
        del record["got"]
        record["crashed"] = bool(verdict.crashed)
    return record


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="utp accuracy", description="Measure how exactly UTP reads labelled model outputs.")
    parser.add_argument("paths", nargs="+", type=Path, help="labelled-output files (JSON Lines) or directories of them")
    parser.add_argument("--hold-out", metavar="SALT", help="report a third of the sources apart and never show their misses")
    parser.add_argument("--show-misses", action="store_true", help="print every output read wrong (held-out sources excepted)")
    parser.add_argument("--json", type=Path, metavar="FILE", help="write every output's verdict to FILE (JSON Lines)")
    return parser


def main(argv: Sequence[str]) -> int:
    from tabulate import tabulate

    args = build_parser().parse_args(list(argv))
    try:
        items = read_labelled_outputs(args.paths)
    except LabelledOutputError as exc:
        print(f"utp: error: {exc}", file=sys.stderr)
        return 2
    if not items:
        print("utp: error: no labelled outputs in " + ", ".join(map(str, args.paths)), file=sys.stderr)
        return 2
    tools = offered_tools(items)
    verdicts = [judge(item, tools[index]) for index, item in enumerate(items)]
    part_of: dict[str, str] = {}
    if args.hold_out:
        part_of = {v.source: HELD_OUT if held_out(v.source, args.hold_out) else TUNING_PART for v in verdicts}
    if args.show_misses:
        for item, verdict in zip(items, verdicts):
            if not verdict.exact and part_of.get(item.source) != HELD_OUT:
                print(_miss_report(item, verdict))
    print(tabulate(summary_rows(verdicts, part_of), headers=HEADERS, tablefmt="github"))
    if args.json:
        lines = (json.dumps(_verdict_record(v, part_of.get(v.source) == HELD_OUT), ensure_ascii=False) for v in verdicts)
        write_text_atomic(args.json, "".join(line + "\n" for line in lines))
    return 0
