"""``reports/index.html``: which format each model should use, and how sure that is, at a glance.

The page leads with one card per model (the format to use, its call-task
count and interval, the verdict sentence), then the model × format matrix:
one heat-map cell of call-task success per pair with its count, restraint
beside it, formats best first. Built from the report dicts only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from harness.reporting.charts import SEQUENTIAL, ZERO_FILL, heat_colour, rate_axis_max
from harness.reporting.htmlkit import errored_alert, header_cell, legend, page, preset_legend, verdict_card
from harness.reporting.text import FEW, pct, rate_ci
from harness.reporting.words import COLUMNS
from harness.stats import rank_formats

#: the model page's file name, inside the model's report folder
MODEL_PAGE = "index.html"
MATRIX_TERMS = ("Format", "Call tasks", "Restraint")
FORMAT_HEADER_ATTRS = ' rowspan="2" class="fmt"'


def model_href(report: Mapping[str, Any]) -> str:
    return f"{report['slug']}/{MODEL_PAGE}"


def _ratio(passed: int, total: int) -> float | None:
    return passed / total if total else None


def pooled_rows(reports: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One row per format with every model's counts added: what orders the matrix when it has several models.

    With one model the pooled row is that model's row, so the matrix order is its ranking.
    """
    pooled: dict[str, dict[str, Any]] = {}
    for report in reports:
        for row in report["formats"]:
            acc = pooled.setdefault(row["format"], {"format": row["format"], "speeds": []})
            for key in ("call_passed", "call_tasks", "restraint_passed", "restraint_tasks", "calls_extracted",
                        "calls_meant"):
                acc[key] = acc.get(key, 0) + int(row.get(key) or 0)
            if row.get("decode_tps") is not None:
                acc["speeds"].append(float(row["decode_tps"]))
    for acc in pooled.values():
        acc["call_task_success"] = _ratio(acc["call_passed"], acc["call_tasks"])
        acc["restraint"] = _ratio(acc["restraint_passed"], acc["restraint_tasks"])
        acc["parse_success"] = _ratio(acc["calls_extracted"], acc["calls_meant"])
        speeds = acc.pop("speeds")
        acc["decode_tps"] = sum(speeds) / len(speeds) if speeds else None
    return list(pooled.values())


def matrix_order(reports: Sequence[Mapping[str, Any]]) -> list[str]:
    """The formats, best first (call-task success, then restraint, parse success, speed)."""
    return [row["format"] for row in rank_formats(pooled_rows(reports))]


def _card(report: Mapping[str, Any]) -> str:
    href = escape(model_href(report))
    return verdict_card(report, f'<h3><a href="{href}">{escape(report["model"])}</a></h3>',
                        f'<p><a href="{href}">Everything measured for this model →</a></p>')


def _call_cell(row: Mapping[str, Any] | None, top: float, recommended: bool) -> str:
    if row is None or not row.get("call_tasks"):
        return '<td class="cell" data-passed="" data-tasks="">not run</td>'
    passed, tasks = int(row["call_passed"]), int(row["call_tasks"])
    fill, ink = heat_colour(passed / tasks, top)
    detail = rate_ci(passed / tasks, row.get("call_ci_low"), row.get("call_ci_high"))
    if tasks < FEW:
        detail += ", too few to judge"
    klass, mark = ("cell rec", "★ ") if recommended else ("cell", "")
    return (f'<td class="{klass}" style="background:{fill};color:{ink}" data-passed="{passed}" data-tasks="{tasks}"'
            f' title="{escape(row["format"])}: call tasks {passed}/{tasks}">{mark}{passed}/{tasks}'
            f"<small>{escape(detail)}</small></td>")


def _restraint_cell(row: Mapping[str, Any] | None) -> str:
    if row is None or not row.get("restraint_tasks"):
        return '<td class="restraint">—</td>'
    passed, tasks = int(row["restraint_passed"]), int(row["restraint_tasks"])
    return f'<td class="restraint">{passed}/{tasks}<br><small>{pct(passed / tasks)}</small></td>'


def _matrix(reports: Sequence[Mapping[str, Any]]) -> list[str]:
    order = matrix_order(reports)
    rates = [float(f["call_task_success"]) for r in reports for f in r["formats"] if f.get("call_task_success")]
    top = rate_axis_max(rates)
    cells = {(r["slug"], f["format"]): f for r in reports for f in r["formats"]}
    models = "".join(
        f'<th colspan="2" title="{escape(COLUMNS["Model"])}"><a href="{escape(model_href(r))}">'
        f"{escape(r['model'])}</a></th>" for r in reports
    )
    sub = "".join(header_cell("Call tasks") + header_cell("Restraint") for _ in reports)
    rows = []
    for fmt in order:
        tds = "".join(
            _call_cell(cells.get((r["slug"], fmt)), top, r["verdict"]["best_format"] == fmt)
            + _restraint_cell(cells.get((r["slug"], fmt)))
            for r in reports
        )
        rows.append(f'<tr><td class="fmt">{escape(fmt)}</td>{tds}</tr>')
    return [
        '<table class="matrix"><thead>',
        f"<tr>{header_cell('Format', attrs=FORMAT_HEADER_ATTRS)}{models}</tr><tr>{sub}</tr>",
        "</thead><tbody>", *rows, "</tbody></table>",
        _scale(top),
    ]


def _scale(top: float) -> str:
    """The heat map's key: what each cell colour means, with the scale's top stated."""
    steps = len(SEQUENTIAL) - 1
    swatches = [f'<span style="background:{ZERO_FILL}">0</span>']
    for i in range(1, len(SEQUENTIAL)):
        fill, ink = SEQUENTIAL[i], "#ffffff" if i >= 5 else "#111111"
        low, high = (i - 1) * top / steps, i * top / steps
        swatches.append(f'<span style="background:{fill};color:{ink}">{low * 100:.0f}–{high * 100:.0f}%</span>')
    return ('<div class="scale">Cell colour, call-task success: ' + "".join(swatches)
            + " · ★ and orange outline: the recommended format</div>")


def render_index_html(reports: Sequence[Mapping[str, Any]], excluded: Mapping[str, int]) -> str:
    body = ["<h1>Which tool-call format should each model use?</h1>"]
    if not reports:
        body.append("<p>No (non-synthetic) runs recorded yet: run <code>make eval</code>.</p>")
    else:
        body.append(errored_alert(reports))
        body.append('<div class="cards">' + "".join(_card(r) for r in reports) + "</div>")
        body.append("<h2>Call-task success: every format × model, best first</h2>")
        body.append('<p class="muted">Each cell: call tasks passed/tried, the rate and its 95% interval. '
                    "Formats are ordered by call-task success over all models, then restraint.</p>")
        body.extend(_matrix(reports))
        body.append(legend(MATRIX_TERMS))
        body.append(preset_legend(matrix_order(reports)))
    if excluded:
        items = "".join(f"<li>{escape(m)}: {n} synthetic run{'s' if n != 1 else ''}</li>"
                        for m, n in sorted(excluded.items()))
        body.append(f"<h2>Excluded</h2><p>Synthetic runs are not model output and are not reported:</p><ul>{items}</ul>")
    return page("UTP tool-calling compatibility", [b for b in body if b])
