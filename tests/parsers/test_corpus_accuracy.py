"""Accuracy over the real-output corpus (../shared/corpus/annotated_outputs.jsonl).

Each record is parsed the way UTP meets it in production: content strings go
to :func:`parse_response`; streamed OpenAI chunks are assembled by
:class:`StreamParser` (which exercises the streaming path on real data);
a recorded response message is parsed as a response object. The offered tool
names come from the record's notes ("tools offered: [...]" or "tool list
(a, b, ...)"); the one typed Qwen3-Coder record names its schema
("REQUIRES SCHEMA calculate{x:number, ...}").

Counting rule (documented disagreement with some records): UTP *keeps* a
call to a tool that was not offered, flagged ``known=False`` (the registry
refuses it and tells the model; dropping it would hide a hallucination). The
corpus, following Ollama, often expects such a call to be absent. So a call
with ``known=False`` counts as extracted only when the record expects a call
of that name; otherwise it is treated as not extracted (it will never run).
Misses that remain are listed in :data:`KNOWN_MISSES` with the reason; the
floor below only rises.
"""

from __future__ import annotations

import ast
import json
import re
from collections import defaultdict
from typing import Any

import pytest

from utp.parsers import parse_response
from utp.parsers.streaming import stream_parse

from .conftest import load_annotated, names_args

#: measured accuracy (records whose calls match exactly); raise it when the parser improves
FLOOR = 0.94

#: records we do not expect to match, and why (not special-cased in the parser)
KNOWN_MISSES = {
    "llama32-3b-garbled-key-get-weather": "argument key must be guessed from the schema ('key' -> 'city'); UTP does not invent keys",
    "llama32-3b-stringified-nested-book-flight": "a quoted string argument stays a string; schema-driven coercion is validation's job",
    "llama32-3b-wrong-tool-name-perform": "corpus maps 'perform' to 'calculate' by meaning; UTP keeps it flagged unknown (no guessing)",
    "llama32-3b-python-tag-codegen-wrapper": "call hidden inside invented Python code; only recoverable by guessing",
}

_SCHEMA_NOTE = re.compile(r"REQUIRES SCHEMA (\w+)\{([^}]*)\}")


def offered_tools(record: dict[str, Any]) -> list[dict[str, Any]] | None:
    notes = record.get("notes", "")
    schema = _SCHEMA_NOTE.search(notes)
    if schema:
        props = {}
        for part in schema.group(2).split(","):
            key, _, typ = part.strip().partition(":")
            props[key.strip()] = {"type": typ.strip()}
        return [{"name": schema.group(1), "parameters": {"type": "object", "properties": props}}]
    listed = re.search(r"tools offered: (\[[^\]]*\])", notes)
    if listed:
        names = ast.literal_eval(listed.group(1))
        return [{"name": n} for n in names] or None
    listed = re.search(r"tool list \(([^)]*)\)", notes)
    if listed:
        return [{"name": n.strip()} for n in listed.group(1).split(",")]
    return None


def parse_record(record: dict[str, Any]) -> Any:
    tools = offered_tools(record)
    raw_type = record.get("raw_type")
    if raw_type == "stream_chunks":
        chunks = [{"choices": json.loads(line)} for line in record["raw"].splitlines() if line.strip()]
        _, parsed = stream_parse(chunks, tools=tools)
        return parsed
    if raw_type == "response_json":
        return parse_response({"choices": [{"message": json.loads(record["raw"])}]}, tools=tools)
    return parse_response(record["raw"], tools=tools)


def counted_calls(record: dict[str, Any], parsed: Any) -> list[tuple[str, str]]:
    expected_names = {c["name"] for c in record["expected_calls"]}
    kept = [c for c in parsed.tool_calls if c.known is not False or c.name in expected_names]
    return names_args(kept)


def test_corpus_accuracy_meets_the_floor(capsys: pytest.CaptureFixture[str]) -> None:
    records = load_annotated()
    per_family: dict[str, list[bool]] = defaultdict(list)
    misses = []
    for record in records:
        parsed = parse_record(record)
        ok = counted_calls(record, parsed) == names_args(record["expected_calls"])
        per_family[record["format_family"]].append(ok)
        if not ok:
            misses.append(record["id"])
    accuracy = sum(sum(v) for v in per_family.values()) / len(records)
    with capsys.disabled():
        print(f"\ncorpus accuracy: {accuracy:.3f} ({len(records) - len(misses)}/{len(records)})")
        for family, results in sorted(per_family.items()):
            print(f"  {family:22s} {sum(results)}/{len(results)}")
        for miss in misses:
            print(f"  miss: {miss}: {KNOWN_MISSES.get(miss, 'UNEXPECTED')}")
    assert accuracy >= FLOOR
    assert set(misses) <= set(KNOWN_MISSES), f"new misses: {sorted(set(misses) - set(KNOWN_MISSES))}"


def test_no_false_positives_where_the_record_expects_none() -> None:
    for record in load_annotated():
        if record["expected_calls"]:
            continue
        parsed = parse_record(record)
        assert counted_calls(record, parsed) == [], record["id"]


def test_prose_expected_content_is_kept() -> None:
    """Where the corpus gives content, ours matches modulo whitespace at the cut.

    Deliberate differences: reasoning goes to ``thinking`` (Ollama's generic
    parser leaves ``<think>`` in content), and an unknown-tool JSON object is
    kept as a flagged call rather than returned as content.
    """
    for record in load_annotated():
        expected = record.get("expected_content")
        if expected is None or record.get("raw_type") in ("stream_chunks", "response_json"):
            continue
        parsed = parse_record(record)
        if "<think>" in expected or any(c.known is False for c in parsed.tool_calls):
            continue
        if record["id"] == "ollama-list-unknown-tool":
            continue  # Ollama withholds an unclosed list; we show it (no call was made)
        assert parsed.content.strip() == expected.strip(), record["id"]


@pytest.mark.parametrize("record_id", ["llama32-3b-native-plus-leftover-fragment", "granite3-8b-watsonx-tool-call-tag-leak", "qwen3-0.6b-vllm-think-in-content-plus-native"])
def test_mixed_native_and_content_records(record_id: str) -> None:
    record = next((r for r in load_annotated() if r["id"] == record_id), None)
    if record is None:
        pytest.skip(f"record {record_id} not in this corpus version")
    parsed = parse_record(record)
    assert names_args(parsed.tool_calls) == names_args(record["expected_calls"])
    assert all(c.format == "native" for c in parsed.tool_calls)
