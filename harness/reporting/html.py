"""``reports/index.html``: one self-contained page comparing models and formats.

No CDN, no scripts, no fonts to fetch: inline CSS and inline SVG, so the page
opens from a laptop, an air-gapped box or a CI artifact exactly the same.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from harness.reporting.charts import grouped_bars
from harness.reporting.markdown import FORMAT_HEADERS, format_rows
from harness.reporting.text import DASH, counted_rate

CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:2rem auto;max-width:1200px;padding:0 1rem;color:#1b1b1b}
h1{font-size:1.6rem}h2{font-size:1.25rem;margin-top:2rem}h3{font-size:1.05rem}
table{border-collapse:collapse;margin:.5rem 0 1rem;font-size:.85rem}
th,td{border:1px solid #ccc;padding:.25rem .5rem;text-align:left;vertical-align:top}
th{background:#f3f3f3}td.num{text-align:right;font-variant-numeric:tabular-nums}
.verdict{background:#f7f9fc;border-left:4px solid #0072B2;padding:.5rem .8rem;margin:.5rem 0}
.bad{color:#b00020;font-weight:bold}.chart{overflow-x:auto;margin:1rem 0}
footer{margin-top:2rem;color:#666;font-size:.8rem}
""".strip()


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]], numeric_from: int = 1) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = "\n".join(
        "<tr>" + "".join(
            f'<td class="num">{cell}</td>' if i >= numeric_from else f"<td>{cell}</td>" for i, cell in enumerate(row)
        ) + "</tr>"
        for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>\n{body}\n</tbody></table>"


def _charts(reports: Sequence[Mapping[str, Any]]) -> list[str]:
    models = [r["model"] for r in reports]
    formats = sorted({f["format"] for r in reports for f in r["formats"]})
    success = {
        (r["model"], f["format"]): (f["call_task_success"], f["call_ci_low"], f["call_ci_high"])
        for r in reports for f in r["formats"] if f["call_task_success"] is not None
    }
    speed = {
        (r["model"], f["format"]): (f["decode_tps"], None, None)
        for r in reports for f in r["formats"] if f["decode_tps"] is not None
    }
    charts = [grouped_bars("Call-task success by format (95% CI)", models, formats, success, percent=True,
                           y_label="call-task success")]
    if speed:
        charts.append(grouped_bars("Decode tokens/s by format (server counters, median run)", models, formats, speed,
                                   y_label="tokens/s"))
    return charts


def render_index_html(reports: Sequence[Mapping[str, Any]], excluded: Mapping[str, int]) -> str:
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>UTP tool-calling compatibility</title>",
        f"<style>{CSS}</style></head><body>",
        "<h1>Tool-calling compatibility: models × formats</h1>",
    ]
    if not reports:
        out.append("<p>No (non-synthetic) runs recorded yet: run <code>make eval</code>.</p>")
    else:
        summary_rows = []
        for r in reports:
            v = r["verdict"]
            tier = escape(v["tier_enforcement"])
            summary_rows.append([
                f'<a href="{escape(r["slug"])}/compatibility.md">{escape(r["model"])}</a>',
                escape(v["best_format"] or "none earned"),
                escape(counted_rate(v["best_call_passed"], v["best_call_tasks"], *(v["best_ci"] or [None, None]))),
                escape(v["runner_up"] or DASH),
                escape(v["native_tools"]),
                f'<span class="bad">{tier}</span>' if v["tier_enforcement"] == "violated" else tier,
                str(r["sources"]["runs"]),
            ])
        out.append("<h2>Summary</h2>")
        out.append(_table(["Model", "Recommended format", "Call tasks [95% CI]", "Runner-up", "Native tools",
                           "Tier enforcement", "Runs"], summary_rows, numeric_from=6))
        out.append("<h2>Charts</h2>")
        out.extend(f'<div class="chart">{svg}</div>' for svg in _charts(reports))
        out.append("<h2>Per model</h2>")
        for r in reports:
            out.append(f'<h3 id="{escape(r["slug"])}">{escape(r["model"])}</h3>')
            out.append(f'<p class="verdict">{escape(r["verdict"]["text"]).replace("**", "")}</p>')
            rows = [[escape(c) for c in row] for row in format_rows(r)]
            out.append(_table(FORMAT_HEADERS, rows))
            out.append(f'<p>Full report: <a href="{escape(r["slug"])}/compatibility.md">{escape(r["slug"])}/compatibility.md</a>'
                       f' · <a href="{escape(r["slug"])}/compatibility.json">JSON</a>'
                       f' · <a href="{escape(r["slug"])}/compatibility.csv">CSV</a></p>')
    if excluded:
        items = "".join(f"<li>{escape(m)}: {n} synthetic run{'s' if n != 1 else ''}</li>" for m, n in sorted(excluded.items()))
        out.append(f"<h2>Excluded</h2><p>Synthetic runs are not model output and are not reported:</p><ul>{items}</ul>")
    out.append("<footer>Generated by <code>utp report</code> from stored run records.</footer>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"
