"""The one-time child-process check that the installed llama.cpp runs on this CPU."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from utp.backends import engine_probe
from utp.backends.base import BackendError, BackendErrorKind

SIGILL_CHILD = [sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGILL)"]
OK_CHILD = [sys.executable, "-c", "pass"]
FAILING_CHILD = [sys.executable, "-c", "raise SystemExit(2)"]


@pytest.fixture(autouse=True)
def fresh_process_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine_probe, "_checked", set())


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_a_crashing_build_is_one_line_with_the_fix_and_is_remembered(tmp_path: Path) -> None:
    verdicts = tmp_path / "probe.json"
    with pytest.raises(BackendError) as info:
        engine_probe.ensure_engine_runs(tmp_path / "m.gguf", command=SIGILL_CHILD, verdicts=verdicts)
    message = str(info.value)
    assert info.value.kind is BackendErrorKind.NOT_INSTALLED and "\n" not in message
    assert "SIGILL" in message and "GGML_NATIVE=OFF" in message
    with pytest.raises(BackendError, match="SIGILL"):  # remembered: no second crash needed
        engine_probe.ensure_engine_runs(tmp_path / "m.gguf", command=OK_CHILD, verdicts=verdicts)


def test_a_working_build_is_checked_once(tmp_path: Path) -> None:
    verdicts = tmp_path / "probe.json"
    engine_probe.ensure_engine_runs(tmp_path / "m.gguf", command=OK_CHILD, verdicts=verdicts)
    engine_probe._checked.clear()
    engine_probe.ensure_engine_runs(tmp_path / "m.gguf", command=SIGILL_CHILD, verdicts=verdicts)  # the file's verdict


def test_an_ordinary_failure_is_no_verdict_on_the_build(tmp_path: Path) -> None:
    verdicts = tmp_path / "probe.json"
    engine_probe.ensure_engine_runs(tmp_path / "m.gguf", command=FAILING_CHILD, verdicts=verdicts)
    assert not verdicts.exists()  # the in-process load reports the real error
