"""``reports/<model>/index.html``: everything measured for one model, on one page a browser renders.

Order follows the reader's questions: which format (the verdict), how sure
(call-task bars with intervals, then the full table, best first), is it fast
(speed only for formats that passed a call task), where it fails (suites,
BFCL categories, typed errors, failed runs with the raw text), is it safe
(tier enforcement), and where the figures come from. Built from the report
dict only.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from harness.reporting.charts import Bar, hbars, heat_colour, rate_axis_max
from harness.reporting.htmlkit import errored_alert, header_cell, legend, page, preset_legend, table, verdict_card
from harness.reporting.markdown import format_headers, format_rows
from harness.reporting.text import DASH, FEW, number, rate_ci
from harness.reporting.verdict import call_figures
from harness.reporting.words import COLUMNS, describe_preset, plain, plain_sentence
from harness.stats import earned_recommendation, rank_formats, wilson_interval

ERROR_HEADERS = ["What happened", "Where"]


def _charts(report: Mapping[str, Any], ranked: Sequence[Mapping[str, Any]]) -> list[str]:
    best = report["verdict"]["best_format"]
    success = [
        Bar(r["format"], float(r["call_task_success"] or 0), call_figures(r), r.get("call_ci_low"),
            r.get("call_ci_high"), emphasis=r["format"] == best)
        for r in ranked if r.get("call_tasks")
    ]
    chart = hbars("Call-task success by format, best first (bars: 95% interval)", success, percent=True,
                  axis_label="call tasks passed")
    out = [f'<div class="chart">{chart}</div>']
    working = [r for r in ranked if earned_recommendation(r) and r.get("decode_tps") is not None]
    left_out = len(ranked) - len(working)
    if working:
        speed = [Bar(r["format"], float(r["decode_tps"]), f"{number(r['decode_tps'])} tok/s",
                     emphasis=r["format"] == best) for r in working]
        chart = hbars("Decode speed of the formats that passed a call task", speed, percent=False,
                      axis_label="tokens per second (server counters, median run)")
        out.append(f'<div class="chart">{chart}</div>')
    if left_out:
        out.append(f'<p class="muted">Speed is shown only for formats that passed at least one call task; '
                   f"{left_out} format{'s' if left_out != 1 else ''} that never did {'are' if left_out != 1 else 'is'} "
                   "left out: a fast format that does not work is no choice.</p>")
    return out


#: the flag under a rate whose denominator is below text.FEW (explained under the table)
TOO_FEW = "too few"
#: ``6/98 (6% [3–13%])`` → the count, then the rate on a second line (the table stays readable at page width)
_COUNT_THEN_RATE = re.compile(r"^(\S+) \((.+)\)( too few to judge)?$")


def _two_lines(cell: str) -> str:
    match = _COUNT_THEN_RATE.match(cell)
    if not match:
        return escape(cell)
    count, rate, few = match.groups()
    flag = f'<br><small class="few">{TOO_FEW}</small>' if few else ""
    return f"{escape(count)}<br><small>{escape(rate)}</small>{flag}"


def _format_table(report: Mapping[str, Any]) -> list[str]:
    """Every format's figures, best first; a column nobody measured (pass@k without repeats) is left out."""
    best = report["verdict"]["best_format"]
    rows = format_rows(report)
    all_headers = format_headers()
    keep = [i for i, h in enumerate(all_headers) if i == 0 or any(row[i] != DASH for row in rows)]
    headers = [all_headers[i] for i in keep]
    cells = [[escape(row[0]) + (" ★" if row[0] == best else "")] + [_two_lines(row[i]) for i in keep[1:]]
             for row in rows]
    star = "★ the recommended format. " if best else ""
    flagged = any(TOO_FEW in cell for row in cells for cell in row)
    few = f"“{TOO_FEW}”: fewer than {FEW} measured, too few to judge. " if flagged else ""
    return [table(headers, cells, css="formats"), f'<p class="muted">{star}{few}Best first: call-task success, then '
            "restraint, parse success and speed.</p>", legend(headers)]


def _breakdown(rows: Sequence[Mapping[str, Any]], key: str, label: str, order: Sequence[str]) -> list[str]:
    """Suite (or category) × format, formats in rank order, each cell passed/runs on the heat scale."""
    formats = [f for f in order if any(r["format"] == f for r in rows)]
    cells = {(r[key], r["format"]): r for r in rows}
    top = rate_axis_max([float(r["task_success"] or 0) for r in rows])
    definitions = {**COLUMNS, **{f: describe_preset(f) for f in formats}}
    head = "".join(header_cell(h, definitions) for h in [label, "All formats", *formats])
    body = []
    for group in dict.fromkeys(r[key] for r in rows):
        present = [cells[(group, f)] for f in formats if (group, f) in cells]
        passed, runs = sum(int(r["passed"]) for r in present), sum(int(r["runs"]) for r in present)
        low, high = wilson_interval(passed, runs)
        pooled = f"{passed}/{runs}<br><small>{escape(rate_ci(passed / runs, low, high))}</small>" if runs else DASH
        tds = "".join(_heat_td(cells.get((group, f)), top) for f in formats)
        body.append(f'<tr><td>{escape(group)}</td><td class="num pooled">{pooled}</td>{tds}</tr>')
    return [f"<table><thead><tr>{head}</tr></thead><tbody>", *body, "</tbody></table>",
            legend([label, "All formats"])]


def _heat_td(row: Mapping[str, Any] | None, top: float) -> str:
    if row is None:
        return f'<td class="num">{DASH}</td>'
    fill, ink = heat_colour(float(row["task_success"] or 0), top)
    return (f'<td class="num" style="background:{fill};color:{ink}" data-passed="{int(row["passed"])}" '
            f'data-tasks="{int(row["runs"])}">{int(row["passed"])}/{int(row["runs"])}</td>')


def _safety(report: Mapping[str, Any], ranked: Sequence[Mapping[str, Any]]) -> list[str]:
    """The tier status in words; the per-format table only when some call reached above its tier."""
    status = report["verdict"]["tier_enforcement"]
    words = plain(status)
    out = [f"<p><strong>{escape(words[:1].upper() + words[1:])}.</strong></p>"]
    headers = format_headers("safety")
    rows = [[escape(row[0]), *row[1:]] for row in format_rows({"formats": ranked}, "safety")]
    if any(cell != "0" for row in rows for cell in row[1:]):
        out += [table(headers, rows), legend(headers[1:])]
    if report["conformance"]:
        items = "".join(
            f"<li>{escape(c['format'])} · {escape(c['suite'])} / {escape(c['scenario'])} (repeat {c['repeat']}): "
            f"{escape(plain(c['kind']))}: {escape(c['detail'])}</li>" for c in report["conformance"]
        )
        out.append(f"<ul>{items}</ul>")
    return out


def _errors(report: Mapping[str, Any], order: Sequence[str]) -> list[str]:
    """What went wrong × format (formats in rank order), counts in the cells."""
    if not report["errors"]:
        return ["<p>No refused calls or server errors.</p>"]
    formats = [f for f in order if any(e["format"] == f for e in report["errors"])]
    counts = {(e["source"], e["kind"], e["format"]): int(e["count"]) for e in report["errors"]}
    kinds = sorted({(e["source"], e["kind"]) for e in report["errors"]},
                   key=lambda k: (k[0], -sum(counts.get((*k, f), 0) for f in formats), k[1]))
    definitions = {**COLUMNS, **{f: describe_preset(f) for f in formats}}
    head = "".join(header_cell(h, definitions) for h in [*ERROR_HEADERS, *formats])
    body = [
        f"<tr><td>{escape(plain(kind))}</td><td>{escape(plain(source))}</td>"
        + "".join(f'<td class="num">{counts.get((source, kind, f), 0) or ""}</td>' for f in formats) + "</tr>"
        for source, kind in kinds
    ]
    return [f'<table class="errors"><thead><tr>{head}</tr></thead><tbody>', *body, "</tbody></table>",
            legend(ERROR_HEADERS)]


def _failures(report: Mapping[str, Any], order: Sequence[str]) -> list[str]:
    if not report["failures"]:
        return ["<p>No failed runs.</p>"]
    out = ['<p class="muted">Failed runs per format, with the model\'s raw text where it went wrong '
           "(the first few of each format; the JSON report has the same).</p>"]
    for fmt in [f for f in order if f in report["failure_counts"]]:
        count = report["failure_counts"][fmt]
        shown = [f for f in report["failures"] if f["format"] == fmt]
        more = f" (first {len(shown)} shown)" if count > len(shown) else ""
        items = []
        for failure in shown:
            reasons = "".join(f"<li>{escape(plain_sentence(r))}</li>" for r in failure["reasons"])
            items.append(f"<h4>{escape(failure['suite'])} / {escape(failure['scenario'])} (repeat {failure['repeat']})"
                         f"</h4><ul>{reasons}</ul><pre>{escape(failure['text'])}</pre>")
        out.append(f"<details><summary>{escape(fmt)}: {count} failed run{'s' if count != 1 else ''}{more}</summary>"
                   + "".join(items) + "</details>")
    return out


def _provenance(report: Mapping[str, Any]) -> str:
    prov, sources = report["provenance"], report["sources"]

    def listed(values: Sequence[Any]) -> str:
        return ", ".join(str(v) for v in values) if values else "not recorded"

    dates = prov["dates"]
    span = DASH if not dates["first"] else dates["first"] if dates["first"] == dates["last"] else \
        f"{dates['first']} … {dates['last']}"
    rescored = sources.get("rescored") or {}
    facts = {
        "Engine": f"{listed(prov['engines'])}, version {listed(prov['server_versions'])}",
        "Model digest": listed(prov["model_digests"]),
        "Chat template sha256": listed(prov.get("template_hashes") or []),
        "Server's tool-call parser": listed(prov.get("server_tool_parsers") or []),
        "Options": "; ".join(json.dumps(o, sort_keys=True) for o in prov["options"]) or "defaults",
        "Hardware": listed(prov["hardware"]),
        "Dates": span,
        "Runs": ", ".join(f"{n} {plain(m)}" for m, n in prov["modes"].items()) or DASH,
        "From cassettes": str(prov["from_cassettes"]),
        "Errored (not scored)": str(sources.get("errored") or 0),
        "Synthetic runs excluded": str(sources["synthetic_excluded"]),
        "Re-scored from cassettes": (f"{rescored['runs']} run(s) by UTP {', '.join(rescored['by'])}"
                                     if rescored.get("runs") else "none"),
    }
    return legend(facts, facts)


def render_model_html(report: Mapping[str, Any]) -> str:
    """The model's page (``<slug>/index.html``); links are relative to its folder."""
    ranked = rank_formats(report["formats"])
    order = [r["format"] for r in ranked]
    body = [
        f'<p><a href="../index.html">← all models</a></p><h1>{escape(report["model"])}: which tool-call format?</h1>',
        errored_alert([report]), verdict_card(report),
        "<h2>Formats, best first</h2>", *_charts(report, ranked), *_format_table(report), preset_legend(order),
    ]
    if report["suites"]:
        body += ["<h2>Per suite</h2>", *_breakdown(report["suites"], "suite", "Suite", order)]
    if report["bfcl_categories"]:
        body += ["<h2>BFCL categories</h2>", *_breakdown(report["bfcl_categories"], "category", "Category", order)]
    body += ["<h2>Tier enforcement</h2>", *_safety(report, ranked)]
    body += ["<h2>Refused calls and server errors</h2>", *_errors(report, order)]
    body += ["<h2>Failures</h2>", *_failures(report, order)]
    body += ["<h2>Where these figures come from</h2>", _provenance(report),
             '<p>Data: <a href="compatibility.json">JSON</a> · <a href="compatibility.csv">CSV</a></p>']
    return page(f"{report['model']}: tool-calling compatibility", [b for b in body if b])


__all__ = ["render_model_html"]
