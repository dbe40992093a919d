"""``compatibility.md`` per model and ``index.md``: the reports people read on GitHub."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from harness.reporting.constraint import lift_cell
from harness.reporting.words import column_paragraph, plain
from harness.reporting.text import DASH, counted_rate, fenced, md_table, number, pct, rate_ci
from harness.metrics import Cell, Count, CountedRate, Figure, columns
from harness.stats import rank_formats, wilson_interval

def format_headers(table: str = "formats") -> list[str]:
    """``Format`` and the registered metrics' columns of a table (``formats`` or ``safety``), left to right."""
    return ["Format", *(c.header for c in columns(table))]


def column_definitions() -> str:
    """What each column of the format table means, printed under it (a column nobody can read is noise)."""
    return column_paragraph(format_headers()[1:])


def render_cell(cell: Cell, row: Mapping[str, Any]) -> str:
    """A metric's cell as text: every rate with its count, a missing figure as a dash (or ``not measured``)."""
    if isinstance(cell, CountedRate):
        return counted_rate(row[cell.passed], row[cell.total], row.get(cell.low) if cell.low else None,
                            row.get(cell.high) if cell.high else None)
    if isinstance(cell, Figure):
        return number(row[cell.key], cell.digits, cell.missing if cell.missing is not None else DASH)
    if isinstance(cell, Count):
        return str(row[cell.key])
    return cell.render(row)


def format_rows(report: Mapping[str, Any], table: str = "formats") -> list[list[str]]:
    """One row per format, best first (the order the recommendation uses), every rate with its count."""
    shown = columns(table)
    return [[r["format"], *(render_cell(c.cell, r) for c in shown)] for r in rank_formats(report["formats"])]


def _unranked_rows(report: Mapping[str, Any], table: str) -> list[list[str]]:
    """One row per format in the report's own order (the safety table is not a ranking)."""
    shown = columns(table)
    return [[r["format"], *(render_cell(c.cell, r) for c in shown)] for r in report["formats"]]


def errored_lines(report: Mapping[str, Any]) -> list[str]:
    """The first thing a report says when runs errored: how many, of what kind, and that they are not scored."""
    errored = int(report["sources"].get("errored") or 0)
    if not errored:
        return []
    classes = ", ".join(f"{n} {c}" for c, n in report["sources"]["errored_by_class"].items())
    return [f"**{errored} run(s) errored ({classes}) and are not scored.** "
            "They say nothing about the model; `make eval ... --resume` runs them again.", ""]


def _breakdown_table(rows: Sequence[Mapping[str, Any]], key: str, label: str) -> str:
    """One row per suite (or category), one column per format: the grid a reader scans.

    The first column pools every format (with its interval), which is the
    number to quote for "how does this model do on X"; the cells are
    ``passed/runs`` (the per-cell intervals are in the JSON and CSV reports).
    """
    formats = list(dict.fromkeys(r["format"] for r in rows))
    cells: dict[tuple[str, str], Mapping[str, Any]] = {(r[key], r["format"]): r for r in rows}
    table = []
    for group in dict.fromkeys(r[key] for r in rows):
        present_rows = [cells[(group, f)] for f in formats if (group, f) in cells]
        passed, runs = sum(r["passed"] for r in present_rows), sum(r["runs"] for r in present_rows)
        low, high = wilson_interval(passed, runs)
        pooled = f"{rate_ci(passed / runs, low, high)} of {runs}" if runs else DASH
        table.append([group, pooled, *(_cell(cells.get((group, f))) for f in formats)])
    return md_table([label, "All formats", *formats], table)


def _cell(row: Mapping[str, Any] | None) -> str:
    return DASH if row is None else f"{row['passed']}/{row['runs']}"


def _provenance_lines(report: Mapping[str, Any]) -> list[str]:
    prov = report["provenance"]

    def listed(values: Sequence[Any]) -> str:
        return ", ".join(f"`{v}`" for v in values) if values else "not recorded"

    dates = prov["dates"]
    span = DASH if not dates["first"] else (
        dates["first"] if dates["first"] == dates["last"] else f"{dates['first']} … {dates['last']}"
    )
    modes = ", ".join(f"{k}: {v}" for k, v in prov["modes"].items()) or DASH
    options = "; ".join(f"`{json.dumps(o, sort_keys=True)}`" for o in prov["options"]) or "defaults"
    return [
        f"- Engine: {listed(prov['engines'])}, version {listed(prov['server_versions'])}",
        f"- Model digest: {listed(prov['model_digests'])}",
        f"- Chat template sha256: {listed(prov.get('template_hashes') or [])}",
        f"- Server's tool-call parser: {listed(prov.get('server_tool_parsers') or [])}",
        f"- Options: {options}",
        f"- Hardware: {listed(prov['hardware'])}",
        f"- Dates: {span}",
        f"- Runs by mode: {modes}; from cassettes: {prov['from_cassettes']}",
        f"- Synthetic runs excluded from this report: {report['sources']['synthetic_excluded']}",
        *_rescored_lines(report["sources"].get("rescored") or {}),
    ]


def _rescored_lines(rescored: Mapping[str, Any]) -> list[str]:
    if not rescored.get("runs"):
        return []
    return [
        f"- Re-scored from their cassettes (same model outputs, read by a later UTP: `utp rescore`): "
        f"{rescored['runs']} run(s), by UTP {', '.join(rescored['by'])} on {', '.join(rescored['dates'])}"
    ]


def render_model_markdown(report: Mapping[str, Any]) -> str:
    out: list[str] = [f"# Tool-calling compatibility: {report['model']}", "", *errored_lines(report),
                      report["verdict"]["text"], ""]
    out += ["## Provenance", "", *_provenance_lines(report), ""]
    out += [
        "## Formats", "",
        md_table(format_headers(), format_rows(report)), "", column_definitions(), "",
    ]
    sens = report.get("sensitivity")
    if sens and sens["formats"] > 1:
        out += [
            f"Format sensitivity (call tasks): {number(sens['sensitivity'] * 100, 0)} points between the best "
            f"({sens['best_format']}, {pct(sens['best'])}) and the worst ({sens['worst_format']}, {pct(sens['worst'])}) "
            f"format; standard deviation across formats {number(sens['std'] * 100, 1)} points.", "",
        ]
    out += ["## Tier enforcement and conformance", "",
            md_table(format_headers("safety"), _unranked_rows(report, "safety")), ""]
    if report["conformance"]:
        out += [md_table(["Format", "Suite", "Scenario", "Repeat", "Kind", "Detail"],
                         [[c["format"], c["suite"], c["scenario"], str(c["repeat"]), c["kind"], c["detail"]]
                          for c in report["conformance"]]), ""]
    if report["suites"]:
        out += ["## Per suite", "", _breakdown_table(report["suites"], "suite", "Suite"), ""]
    if report["bfcl_categories"]:
        out += ["## BFCL categories", "", _breakdown_table(report["bfcl_categories"], "category", "Category"), ""]
    out += ["## Typed errors", ""]
    if report["errors"]:
        out += [md_table(["Format", "Source", "Kind", "Count"],
                         [[e["format"], e["source"], e["kind"], str(e["count"])] for e in report["errors"]]), ""]
    else:
        out += ["No refused calls or backend errors.", ""]
    out += ["## Failures", ""]
    if not report["failures"]:
        out += ["No failed runs.", ""]
    for fmt, count in report["failure_counts"].items():
        shown = [f for f in report["failures"] if f["format"] == fmt]
        out += [f"### {fmt}: {count} failed run{'s' if count != 1 else ''}"
                + (f" (first {len(shown)} shown)" if count > len(shown) else ""), ""]
        for failure in shown:
            out += [f"**{failure['suite']} / {failure['scenario']}** (repeat {failure['repeat']})", ""]
            out += [f"- {reason}" for reason in failure["reasons"]]
            out += ["", fenced(failure["text"]), ""]
    return "\n".join(out).rstrip("\n") + "\n"


def render_index_markdown(reports: Sequence[Mapping[str, Any]], excluded: Mapping[str, int]) -> str:
    out = ["# Tool-calling compatibility reports", ""]
    if not reports:
        out += ["No (non-synthetic) runs recorded yet: run `make eval`.", ""]
    else:
        out += [md_table(
            ["Model", "Recommended format", "Call tasks [95% CI]", "Runner-up", "Native tools", "Tier enforcement",
             "Constraining: lift [95% CI]", "Runs", "Errored"],
            [[f"[{r['model']}]({r['slug']}/compatibility.md)", r["verdict"]["best_format"] or "none earned",
              counted_rate(r["verdict"]["best_call_passed"], r["verdict"]["best_call_tasks"],
                           *(r["verdict"]["best_ci"] or [None, None])),
              r["verdict"]["runner_up"] or DASH, plain(r["verdict"]["native_tools"]), plain(r["verdict"]["tier_enforcement"]),
              lift_cell(r.get("constraint_lift")), str(r["sources"]["runs"]), str(r["sources"]["errored"])]
             for r in reports],
        ), ""]
        out += ["## All models × formats", "", "Best first within each model. " + column_definitions(), ""]
        shown = [c for c in columns() if c.in_index]
        out += [md_table(
            ["Model", "Format", *(c.header for c in shown)],
            [[r["model"], f["format"], *(render_cell(c.index_cell or c.cell, f) for c in shown)]
             for r in reports for f in rank_formats(r["formats"])],
        ), ""]
        bfcl = _bfcl_by_model(reports)
        if bfcl:
            out += ["## BFCL accuracy per category", "",
                    "Each model over every format preset (pooled, with its 95% interval), then its best preset there.", "",
                    bfcl, ""]
    if excluded:
        out += ["## Excluded", "", "Synthetic runs (hand-written cassettes, not model output) are not reported:", ""]
        out += [f"- {model}: {n} synthetic run{'s' if n != 1 else ''}" for model, n in sorted(excluded.items())]
        out += [""]
    return "\n".join(out).rstrip("\n") + "\n"


def _bfcl_by_model(reports: Sequence[Mapping[str, Any]]) -> str:
    """Model × BFCL category: what the leaderboard's readers look for first."""
    rows = []
    for report in reports:
        by_category: dict[str, list[Mapping[str, Any]]] = {}
        for row in report["bfcl_categories"]:
            by_category.setdefault(row["category"], []).append(row)
        for category, cells in by_category.items():
            passed, runs = sum(c["passed"] for c in cells), sum(c["runs"] for c in cells)
            low, high = wilson_interval(passed, runs)
            best = max(cells, key=lambda c: (c["task_success"], c["runs"]))
            rows.append([report["model"], category, str(runs), rate_ci(passed / runs if runs else None, low, high),
                         f"{best['format']} ({best['passed']}/{best['runs']})" if best["passed"] else DASH])
    if not rows:
        return ""
    return md_table(["Model", "Category", "Runs", "All presets [95% CI]", "Best preset"], rows)
