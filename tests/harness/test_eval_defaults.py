"""What a person waits for: the quick default of ``make eval MODEL=...`` and the estimate of the time left."""

from __future__ import annotations

import io
from pathlib import Path

from harness.cli import main
from harness.progress import ESTIMATE_AFTER, Progress
from harness.runplan import QUICK_FORMATS
from tests.support.scripted_server import closed_port_url


def test_naming_a_model_alone_runs_the_quick_default_and_says_how_big_it_is(tmp_path: Path, capsys) -> None:
    code = main(["eval", "--model", "somebody:7b", "--host", closed_port_url(), "--no-reports",
                 "--results-dir", str(tmp_path / "r"), "--cassette-dir", str(tmp_path / "c")])
    err = capsys.readouterr().err
    assert code == 3  # nobody answers there: an errored eval, not a usage error
    assert f"× {len(QUICK_FORMATS)} format(s) × 44 scenario(s)" in err and f": {len(QUICK_FORMATS) * 44} runs" in err
    assert "FORMATS=all SUITE=all" in err


def test_formats_all_and_suite_all_ask_for_the_full_matrix(tmp_path: Path, capsys) -> None:
    main(["eval", "--model", "somebody:7b", "--host", closed_port_url(), "--no-reports", "--formats", "all",
          "--suite", "all", "--results-dir", str(tmp_path / "r"), "--cassette-dir", str(tmp_path / "c")])
    err = capsys.readouterr().err
    assert "quick default" not in err and "344 scenario(s)" in err


def test_a_log_gets_an_estimate_after_the_first_runs() -> None:
    now = [0.0]
    out = io.StringIO()
    progress = Progress(total=100, enabled=False, stream=out, clock=lambda: now[0])
    for index in range(ESTIMATE_AFTER):
        now[0] += 8.0
        progress.advance({"model": "m", "format": "f", "suite": "s", "scenario": str(index), "repeat": 0})
    assert "5/100 runs in 40 s; about 13 min left at this pace" in out.getvalue()
