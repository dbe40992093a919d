"""docs/formats.md is a catalogue the code keeps honest.

Each registered call family has an entry whose example is the raw text a model
of that family writes; every example is parsed here exactly as the page says it
reads (``get_weather(city="Paris")`` with that one tool offered), and the
preset table is held to ``utp.formats.PRESETS``. A family added without an
entry, an entry for a family that is gone, or an example the parser no longer
reads fails this file, not a reader.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import utp
from utp.formats import PRESETS
from utp.parsers import family_names

FORMATS_MD = Path(__file__).resolve().parents[1] / "docs" / "formats.md"

#: the one tool the page says every example is parsed with
TOOLS = [{
    "name": "get_weather",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
        "required": ["city"],
    },
}]

#: a family entry: its heading, then (after its prose) the first fenced block; the closing
#: fence repeats the opening one, so an example may itself hold a shorter ``` fence
_ENTRY = re.compile(r"^### `(?P<name>[a-z0-9_]+)`\n(?P<body>.*?)(?=^#{1,3} |\Z)", re.M | re.S)
_FENCE = re.compile(r"^(?P<fence>`{3,})text\n(?P<example>.*?)\n(?P=fence)$", re.M | re.S)
_PRESET_ROW = re.compile(r"^\| `(?P<preset>[a-z0-9-]+)` \|(?P<cells>.*)\|$", re.M)


def catalogue() -> dict[str, str]:
    """Family name → its example, in page order."""
    entries: dict[str, str] = {}
    for entry in _ENTRY.finditer(FORMATS_MD.read_text(encoding="utf-8")):
        fence = _FENCE.search(entry.group("body"))
        assert fence is not None, f"docs/formats.md: the entry for {entry.group('name')!r} has no ```text example"
        assert entry.group("name") not in entries, f"docs/formats.md: {entry.group('name')!r} has two entries"
        entries[entry.group("name")] = fence.group("example")
    return entries


def test_every_registered_family_has_exactly_one_entry():
    documented = set(catalogue())
    registered = set(family_names())
    assert documented == registered, (
        f"families without an entry: {sorted(registered - documented)}; "
        f"entries for unregistered families: {sorted(documented - registered)}"
    )


@pytest.mark.parametrize("family", sorted(family_names()))
def test_the_example_reads_as_the_page_says(family: str):
    example = catalogue()[family]
    parsed = utp.parse_response(example, tools=TOOLS, allow_bash=True)
    read = [(c.name, c.arguments, c.format) for c in parsed.tool_calls]
    assert read == [("get_weather", {"city": "Paris"}, family)], (
        f"docs/formats.md, {family}: example read as {read}; diagnostics {[d.reason for d in parsed.diagnostics]}"
    )
    assert parsed.content.strip() == "", f"docs/formats.md, {family}: text left as content: {parsed.content!r}"


def test_the_preset_table_lists_every_preset_with_what_it_teaches():
    section = FORMATS_MD.read_text(encoding="utf-8").split("\n## Format presets\n", 1)[1].split("\n## ", 1)[0]
    presets = {m.group("preset"): [c.strip() for c in m.group("cells").split("|")] for m in _PRESET_ROW.finditer(section)}
    assert list(presets) == list(PRESETS), f"docs/formats.md preset table {list(presets)} != PRESETS {list(PRESETS)}"
    for name, cells in presets.items():
        taught = PRESETS[name].prompt_family
        assert cells[-1] == (f"`{taught}`" if taught else "—"), f"docs/formats.md, {name}: teaches {cells[-1]!r}"
        assert cells[1] == f"`{PRESETS[name].call_parser}`", f"docs/formats.md, {name}: reads with {cells[1]!r}"


@pytest.mark.parametrize(
    ("path", "pattern"),
    [("README.md", r"any of its (\d+) call formats"), ("docs/architecture.md", r"The (\d+) registered\s+families")],
)
def test_the_family_count_the_docs_state_is_the_registry_s(path: str, pattern: str) -> None:
    text = (FORMATS_MD.parents[1] / path).read_text(encoding="utf-8")
    stated = re.search(pattern, text)
    assert stated is not None, f"{path} no longer states the family count"
    assert int(stated.group(1)) == len(family_names())
