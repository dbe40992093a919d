"""What a person watching ``make eval`` sees: a progress bar, then one screen of results.

The bar goes to stderr and only on a terminal (CI logs get one summary line
instead of thousands of redraws); the table is the short answer to "which
format works for this model", the reports hold the long one.
"""

from __future__ import annotations

import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TextIO

from tabulate import tabulate
from tqdm import tqdm


#: a request with no answer for this long is shown as waiting, so a hung server is never silence
STALL_NOTICE_S = 5.0
#: on a log (not a terminal), a still-waiting request is mentioned again this often
STALL_REPEAT_S = 30.0
#: after this many runs (and then at each quarter) a log gets an estimate of the time left
ESTIMATE_AFTER = 5


class Progress:
    def __init__(self, total: int, *, enabled: bool | None = None, stream: TextIO | None = None,
                 clock: Callable[[], float] = time.monotonic):
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self.total = total
        self.done = 0
        self.errors = 0
        self._clock = clock
        self._inflight: dict[Any, float] = {}
        self._began = clock()
        self._noticed: dict[Any, float] = {}
        self._bar = tqdm(total=total, file=self.stream, unit="run", dynamic_ncols=True, leave=False) if self.enabled else None

    def announce(self, skipped: int, mode: str) -> None:
        """One line before the first run: how many runs this eval will do, and how many were already done."""
        verb = {"replay": "to replay", "record": "to run and record"}.get(mode, "to run")
        done = f" ({skipped} already done: --resume)" if skipped else ""
        print(f"utp eval: {self.total} run{'s' if self.total != 1 else ''} {verb}{done}", file=self.stream, flush=True)

    def started(self, key: Any) -> None:
        self._inflight[key] = self._clock()

    def advance(self, record: Mapping[str, Any]) -> None:
        self.done += 1
        key = _key(record)
        self._inflight.pop(key, None)
        self._noticed.pop(key, None)
        if record.get("outcome", {}).get("outcome") == "errored" or record.get("error"):
            self.errors += 1
        if self._bar is not None:
            self._bar.set_postfix_str(f"{record.get('model')} {record.get('format')} {record.get('scenario')}", refresh=False)
            self._bar.update(1)
        elif self._estimate_due():
            print(f"utp eval: {self.estimate()}", file=self.stream, flush=True)

    def _estimate_due(self) -> bool:
        quarter = max(1, self.total // 4)
        return self.done < self.total and (self.done == ESTIMATE_AFTER or (self.done > ESTIMATE_AFTER and self.done % quarter == 0))

    def estimate(self) -> str:
        """``"5/220 runs in 40 s; about 29 min left at this pace"``: what a person needs to plan the wait."""
        elapsed = self._clock() - self._began
        left = self.total - self.done
        text = f"{self.done}/{self.total} runs in {_duration(elapsed)}"
        if self.done and left > 0:
            text += f"; about {_duration(elapsed / self.done * left)} left at this pace"
        return text

    def stalled(self) -> list[tuple[Any, float]]:
        """In-flight runs waiting longer than :data:`STALL_NOTICE_S`, longest first."""
        now = self._clock()
        waits = [(key, now - since) for key, since in self._inflight.items() if now - since >= STALL_NOTICE_S]
        return sorted(waits, key=lambda item: -item[1])

    def tick(self) -> None:
        """Say which request is stalled: on the bar, or (on a log) once and then every STALL_REPEAT_S."""
        now = self._clock()
        for key, waited in self.stalled()[:1]:
            text = f"waiting {waited:.0f} s for {_describe(key)}"
            if self._bar is not None:
                self._bar.set_postfix_str(text)
                continue
            last = self._noticed.get(key)
            if last is None or now - last >= STALL_REPEAT_S:
                self._noticed[key] = now
                print(f"utp eval: {text} (the server has not finished answering; --timeout bounds it)",
                      file=self.stream, flush=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def _key(record: Mapping[str, Any]) -> Any:
    from harness.records import RunKey

    try:
        return RunKey.of(record)  # type: ignore[arg-type]
    except (KeyError, TypeError, ValueError):
        return None


def _describe(key: Any) -> str:
    fields = [getattr(key, name, None) for name in ("model", "format", "suite", "scenario")]
    return " ".join(str(f) for f in fields if f) or str(key)


def _float(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return None if number != number else number  # NaN (pandas' missing) → None


def _num(value: Any, digits: int = 1) -> str:
    number = _float(value)
    return "–" if number is None else f"{number:.{digits}f}"


def summary_rows(records: list[Mapping[str, Any]]) -> list[dict[str, Any]]:
    from harness.stats import aggregate, rank_formats

    table = aggregate(records)
    rows = [dict(row) for row in table.to_dict(orient="records")]
    by_model: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_model[str(row["model"])].append(row)
    return [dict(r) for model in sorted(by_model) for r in rank_formats(by_model[model])]


def summary_table(records: list[Mapping[str, Any]]) -> str:
    """Per model × format, best first: runs, call tasks and restraint with counts, parse, tier violations, tok/s."""
    from harness.reporting.text import counted_rate

    rows = summary_rows(records)
    if not rows:
        return "(no runs)"
    body = [
        [
            row["model"],
            row["format"],
            f"{row['runs']}" + (f" +{row['errored']} errored" if row.get("errored") else ""),
            counted_rate(row.get("call_passed"), row.get("call_tasks")),
            counted_rate(row.get("restraint_passed"), row.get("restraint_tasks")),
            counted_rate(row.get("calls_extracted"), row.get("calls_meant")),
            int(_float(row.get("executed_violations")) or 0),
            _num(row.get("decode_tps")),
        ]
        for row in rows
    ]
    headers = ["model", "format", "runs", "call tasks", "restraint", "parse", "tier violations executed", "decode tok/s"]
    return tabulate(body, headers=headers, tablefmt="simple")


def one_line(result: Any, results_dir: Any) -> str:
    errored = len(result.errored())
    parts = [f"{len(result.records)} run{'s' if len(result.records) != 1 else ''}"]
    if result.skipped:
        parts.append(f"{result.skipped} already done (--resume)")
    if errored:
        parts.append(f"{errored} errored (not scored)")
    if result.conformance_failures:
        parts.append(f"{len(result.conformance_failures)} CONFORMANCE FAILURE(S)")
    return f"utp eval: {', '.join(parts)} in {result.elapsed_s:.1f} s; results in {results_dir}"
