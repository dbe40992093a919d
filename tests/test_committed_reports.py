"""The committed reports and tuned profiles are what the committed results make today.

Both are derived files: `utp report` and `utp tune` rebuild them from
`reports/results/`. A parser or scoring change that re-reads the records
without rebuilding them leaves pages and a negotiator default that describe
evidence no longer in the repository, which is what people act on.
"""

from __future__ import annotations

from pathlib import Path

from harness.reporting import build_reports
from harness.tuning import tune

ROOT = Path(__file__).resolve().parents[1]
REPORTS = ROOT / "reports"
RESULTS = REPORTS / "results"
TUNED = REPORTS / "tuned_profiles.toml"
#: what the report build does not write: the records it reads and `utp tune`'s output
NOT_BUILT = ("results", TUNED.name)


def _files(root: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(root)): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file() and path.relative_to(root).parts[0] not in NOT_BUILT
    }


def test_the_committed_reports_are_a_rebuild_of_the_committed_results(tmp_path: Path) -> None:
    build_reports(RESULTS, tmp_path)
    committed, rebuilt = _files(REPORTS), _files(tmp_path)
    assert sorted(committed) == sorted(rebuilt), "report files differ: run `make report`"
    stale = [name for name in committed if committed[name] != rebuilt[name]]
    assert stale == [], f"stale reports (run `make report`): {stale}"


def test_the_committed_tuned_profiles_are_what_utp_tune_writes(tmp_path: Path) -> None:
    fresh = tmp_path / "tuned_profiles.toml"
    tune([RESULTS], fresh)
    assert TUNED.read_text(encoding="utf-8") == fresh.read_text(encoding="utf-8"), "stale tuned profiles: run `make tune`"
