"""The HTML report pages, read as a browser would: parsed DOM checks that always run.

Built from the synthetic records of test_reports.py (two models, three formats,
a BFCL suite) and checked on the committed reports too, which hold the real
vocabulary (refused tool definitions, repeated calls, an errored run).
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from harness.reporting import build_reports
from harness.reporting.charts import SEQUENTIAL, Bar, hbars, heat_colour, rate_axis_max
from harness.reporting.html import matrix_order
from harness.reporting.htmlkit import how_sure
from harness.reporting.words import PLAIN, plain_sentence
from tests.harness.test_reports import OUTCOMES, SCENARIOS, make_record, write_results

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = ROOT / "reports"
#: internal values a reader must never see (the snake_case ones; "works" or "timeout" are plain already)
INTERNAL = sorted(k for k in PLAIN if "_" in k)
HIDDEN = {"style", "title", "pre", "script"}
VOID = {"br", "meta", "link", "img", "input", "hr", "col", "wbr"}


class Node:
    def __init__(self, tag: str, attrs: dict[str, str], parent: "Node | None"):
        self.tag, self.attrs, self.parent, self.children, self.text = tag, attrs, parent, [], ""

    def iter(self, tag: str) -> list["Node"]:
        found = [self] if self.tag == tag else []
        for child in self.children:
            found += child.iter(tag)
        return found


class Page(HTMLParser):
    """A small DOM: every element with its attributes and text, and the page's visible text."""

    def __init__(self, path: Path):
        super().__init__()
        self.path = path
        self.root = self.current = Node("#root", {}, None)
        self.visible: list[str] = []
        self.feed(path.read_text(encoding="utf-8"))

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, {k: v or "" for k, v in attrs}, self.current)
        self.current.children.append(node)
        if tag not in VOID:
            self.current = node

    def handle_endtag(self, tag: str) -> None:
        node = self.current
        while node is not self.root and node.tag != tag:
            node = node.parent
        if node is not self.root:
            self.current = node.parent

    def handle_data(self, data: str) -> None:
        node, hidden = self.current, False
        while node is not None:
            node.text += data
            hidden = hidden or node.tag in HIDDEN
            node = node.parent
        if not hidden:
            self.visible.append(data)

    def all(self, tag: str) -> list[Node]:
        return self.root.iter(tag)

    def visible_text(self) -> str:
        return " ".join(self.visible)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    records = [make_record(model, fmt, repeat, repeat < ok) for (model, fmt), ok in OUTCOMES.items()
               for repeat in range(4)]
    records += [make_record("qwen3:4b", "prompt-hermes", r, r == 0, suite="bfcl/simple_python") for r in range(2)]
    errored = make_record("llama3.2:3b", "native", 9, True)
    errored.update(turns=[], error={"kind": "connect_error", "message": "connection refused"})
    records.append(errored)
    base = tmp_path_factory.mktemp("pages")
    write_results(base / "results", records)
    build_reports(base / "results", base / "reports", scenarios=SCENARIOS)
    return base / "reports"


def pages(folder: Path) -> list[Path]:
    """A report folder's pages; the git-ignored replay output under reports/ is not a committed page."""
    return [folder / "index.html", *sorted(p for p in folder.glob("*/index.html") if p.parent.name != "replayed")]


def every_page(built: Path) -> list[Path]:
    committed = pages(COMMITTED) if (COMMITTED / "index.html").is_file() else []
    return pages(built) + committed


def reports_of(folder: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted(folder.glob("*/compatibility.json"))]


def matrix_rows(page: Page) -> list[tuple[str, list[Node]]]:
    table = next(t for t in page.all("table") if "matrix" in t.attrs.get("class", ""))
    body = table.iter("tbody")[0]
    return [(tr.iter("td")[0].text.strip(), [td for td in tr.iter("td") if "data-tasks" in td.attrs])
            for tr in body.iter("tr")]


@pytest.mark.parametrize("folder", ["built", "committed"])
def test_matrix_cells_carry_counts_best_first_and_mark_the_recommendation(folder: str, built: Path):
    root = built if folder == "built" else COMMITTED
    if not (root / "index.html").is_file():
        pytest.skip("no committed reports")
    page, reports = Page(root / "index.html"), reports_of(root)
    rows = matrix_rows(page)
    assert [fmt for fmt, _ in rows] == matrix_order(reports)
    pooled = []
    for fmt, cells in rows:
        assert len(cells) == len(reports)
        measured = [cell for cell in cells if cell.attrs.get("data-tasks")]
        for cell in cells:
            if cell not in measured:  # a format this model was not run in (a recording still under way)
                assert cell.text.strip() == "not run"
                continue
            passed, tasks = cell.attrs["data-passed"], cell.attrs["data-tasks"]
            assert f"{passed}/{tasks}" in cell.text and "%" in cell.text
            assert cell.attrs["style"].startswith("background:#")
        pooled.append(sum(int(c.attrs["data-passed"]) for c in measured) / sum(int(c.attrs["data-tasks"]) for c in measured))
    assert pooled == sorted(pooled, reverse=True)
    for column, report in enumerate(reports):
        marked = [fmt for fmt, cells in rows if "rec" in cells[column].attrs["class"].split()]
        assert marked == ([report["verdict"]["best_format"]] if report["verdict"]["best_format"] else [])
        assert all(("★" in cells[column].text) == (fmt in marked) for fmt, cells in rows)


def test_one_model_matrix_follows_that_models_ranking(built: Path):
    qwen = json.loads((built / "qwen3_4b" / "compatibility.json").read_text())
    assert matrix_order([qwen])[0] == qwen["verdict"]["best_format"] == "prompt-hermes"


def test_every_table_header_is_defined_on_its_page(built: Path):
    for path in every_page(built):
        page = Page(path)
        defined = {dt.text.strip() for dt in page.all("dt")}
        for th in page.all("th"):
            label = th.text.strip()
            linked = any(a.attrs.get("href", "").endswith("/index.html") for a in th.iter("a"))
            assert label in defined or linked, f"{path}: column {label!r} is not defined on the page"
            assert th.attrs.get("title"), f"{path}: column {label!r} has no tooltip"


def test_no_internal_value_reaches_the_reader(built: Path):
    for path in every_page(built):
        text = Page(path).visible_text()
        leaked = [k for k in INTERNAL if re.search(rf"\b{k}\b", text)]
        assert not leaked, f"{path} shows internal values {leaked}"
        assert "**" not in text


def test_links_open_pages_that_exist(built: Path):
    for path in every_page(built):
        for a in Page(path).all("a"):
            href = a.attrs["href"]
            assert not re.match(r"(?:[a-z]+:)?//", href), f"{path}: remote link {href}"
            assert not href.endswith(".md"), f"{path}: raw markdown link {href}"
            assert (path.parent / href).resolve().is_file(), f"{path}: {href} does not exist"
    index = Page(built / "index.html")
    assert {a.attrs["href"] for a in index.all("a")} == {"qwen3_4b/index.html", "llama3.2_3b/index.html"}


def test_pages_are_offline_and_charts_well_formed(built: Path):
    from xml.etree import ElementTree

    for path in pages(built):
        html = path.read_text()
        assert "<script" not in html and "http://" not in html and "https://" not in html
        for svg in re.findall(r"<svg.*?</svg>", html, re.S):
            assert ElementTree.fromstring(svg).tag == "svg"


def test_speed_is_shown_only_for_formats_that_passed_a_call_task(built: Path):
    page = (built / "llama3.2_3b" / "index.html").read_text()
    speed = next(s for s in re.findall(r"<svg.*?</svg>", page, re.S) if "Decode speed" in s)
    labels = set(re.findall(r'text-anchor="end"[^>]*>([^<]+)</text>', speed))
    assert labels == {"native", "prompt-hermes"}  # prompt-json passed no call task
    assert "1 format that never did is left out" in page


def test_rate_axis_and_colour_scale_follow_the_data():
    assert rate_axis_max([0.06, 0.13]) == pytest.approx(0.2)
    assert rate_axis_max([0.0]) == 1.0 and rate_axis_max([0.97]) == 1.0
    svg = hbars("t", [Bar("a", 0.06, "6/98", 0.03, 0.13), Bar("b", 0.0, "0/99", 0.0, 0.04)], percent=True,
                axis_label="x")
    assert ">20%</text>" in svg and "100%" not in svg
    assert svg.count("<rect") == 1  # a zero draws no bar, only its interval and its count

    def luminance(colour: str) -> float:
        r, g, b = (int(colour[i:i + 2], 16) for i in (1, 3, 5))
        return 0.2126 * r + 0.7152 * g + 0.0722 * b

    assert [luminance(c) for c in SEQUENTIAL] == sorted((luminance(c) for c in SEQUENTIAL), reverse=True)
    fills = [heat_colour(rate, 0.2)[0] for rate in (0.0, 0.01, 0.1, 0.2, 0.5)]
    assert fills[0] != fills[1] and fills[3] == fills[4] == SEQUENTIAL[-1]


def test_plain_sentence_turns_codes_into_words():
    text = "**Native tools**: the server refuses tool definitions for this model (tools_unsupported). not_exercised"
    assert plain_sentence(text) == ("Native tools: the server refuses tool definitions for this model. "
                                    "not exercised: no model tried a locked tool")
    assert plain_sentence("stopped with max_rounds (allowed: final_answer)") == \
        "stopped with the round limit (allowed: a final answer)"


def test_how_sure_reads_the_lead_from_the_verdict():
    base = {"runner_up": "prompt-json", "margin": 0.03, "intervals_overlap": True}
    assert how_sure(base).startswith("How sure: not yet. 3 points ahead of prompt-json")
    assert how_sure({**base, "intervals_overlap": False}).startswith("How sure: a clear lead, 3 points")
    assert "tied with prompt-json" in how_sure({**base, "margin": 0.0})
    assert "only format" in how_sure({"runner_up": None})


def test_errored_runs_are_counted_first(built: Path):
    index = Page(built / "index.html")
    first = [n for n in index.root.iter("body")[0].children if n.tag != "h1"][0]
    assert "alert" in first.attrs.get("class", "") and first.text.startswith("1 run errored (1 no connection)")
    assert "run errored" in Page(built / "llama3.2_3b" / "index.html").visible_text()
    assert "run errored" not in Page(built / "qwen3_4b" / "index.html").visible_text()
