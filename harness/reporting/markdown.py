"""``compatibility.md`` per model and ``index.md``: the reports people read on GitHub."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from harness.reporting.text import DASH, NOT_MEASURED, fenced, md_table, number, pct, rate_ci
from harness.stats import wilson_interval

FORMAT_HEADERS = [
    "Format", "Runs", "Task success [95% CI]", "Parse", "Leaks", "Adherence", "Arg validity",
    "Clean stops", "Decode tok/s", "Prompt tok/s", "Wall s", "TTFT s", "pass@k / pass^k",
]


def _pass_k(row: Mapping[str, Any]) -> str:
    if row.get("k") is None:
        return DASH
    return f"k={row['k']}: {pct(row.get('pass_at_k'))} / {pct(row.get('pass_hat_k'))}"


def format_rows(report: Mapping[str, Any]) -> list[list[str]]:
    rows = []
    for r in report["formats"]:
        rows.append([
            r["format"], str(r["runs"]), rate_ci(r["task_success"], r["ci_low"], r["ci_high"]),
            pct(r["parse_success"]), pct(r["leak_rate"]), pct(r["format_adherence"]), pct(r["argument_validity"]),
            pct(r["clean_termination_rate"]), number(r["decode_tps"]), number(r["prompt_tps"]),
            number(r["wall_s"], 2, NOT_MEASURED), number(r["ttft_s"], 2, NOT_MEASURED), _pass_k(r),
        ])
    return rows


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
    out: list[str] = [f"# Tool-calling compatibility: {report['model']}", "", report["verdict"]["text"], ""]
    out += ["## Provenance", "", *_provenance_lines(report), ""]
    out += [
        "## Formats", "",
        "Task success needs every expected call, the final-answer check and a clean stop. "
        "Parse = calls extracted / calls the model meant; Leaks = runs whose final answer kept call markup; "
        "Adherence = calls written in the format's own family; tokens/s are the server's counters "
        "(recorded figures in replay, where wall time and TTFT are not measured).", "",
        md_table(FORMAT_HEADERS, format_rows(report)), "",
    ]
    sens = report.get("sensitivity")
    if sens and sens["formats"] > 1:
        out += [
            f"Format sensitivity: {number(sens['sensitivity'] * 100, 0)} points between the best "
            f"({sens['best_format']}, {pct(sens['best'])}) and the worst ({sens['worst_format']}, {pct(sens['worst'])}) "
            f"format; standard deviation across formats {number(sens['std'] * 100, 1)} points.", "",
        ]
    safety = [
        [r["format"], str(r["escalation_attempts"]), str(r["blocked"]), str(r["executed_violations"]),
         str(r["conformance_failures"])]
        for r in report["formats"]
    ]
    out += ["## Tier enforcement and conformance", "",
            md_table(["Format", "Out-of-tier attempts", "Blocked", "Executed (must be 0)", "Conformance failures"], safety),
            ""]
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
            ["Model", "Best format", "Task success [95% CI]", "Runner-up", "Native tools", "Tier enforcement", "Runs"],
            [[f"[{r['model']}]({r['slug']}/compatibility.md)", r["verdict"]["best_format"] or DASH,
              rate_ci(r["verdict"]["best_task_success"], *(r["verdict"]["best_ci"] or [None, None])),
              r["verdict"]["runner_up"] or DASH, r["verdict"]["native_tools"], r["verdict"]["tier_enforcement"],
              str(r["sources"]["runs"])] for r in reports],
        ), ""]
        out += ["## All models × formats", "", "Task success [95% CI] · parse success · decode tok/s.", ""]
        out += [md_table(
            ["Model", "Format", "Runs", "Task success [95% CI]", "Parse", "Decode tok/s"],
            [[r["model"], f["format"], str(f["runs"]), rate_ci(f["task_success"], f["ci_low"], f["ci_high"]),
              pct(f["parse_success"]), number(f["decode_tps"])] for r in reports for f in r["formats"]],
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
