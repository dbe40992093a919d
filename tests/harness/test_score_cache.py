"""Scores are computed once per (record, scenario, metric versions) in a process, and never handed out stale."""

from __future__ import annotations

from typing import Any

from harness.metrics import Metric, register, unregister
from harness.metrics.cache import cached_scores, clear


def _record(answer: str) -> dict[str, Any]:
    return {"model": "m", "format": "prompt-hermes", "suite": "core/x", "scenario": "s", "repeat": 0,
            "turns": [{"final_answer": answer, "termination": "final_answer", "rounds": []}],
            "scores": {"stale": True}}


def test_the_same_run_is_scored_once_and_a_change_scores_again():
    clear()
    calls: list[str] = []

    def score(record, scenario):
        calls.append(record["turns"][0]["final_answer"])
        return {"answer": record["turns"][0]["final_answer"]}

    first = cached_scores(_record("11 C"), None, score)
    again = cached_scores({**_record("11 C"), "scores": {"other": 1}, "outcome": {"outcome": "completed"}}, None, score)
    assert first == again == {"answer": "11 C"} and calls == ["11 C"]  # earlier scores and outcome are not the run
    first["mine"] = 1
    assert "mine" not in cached_scores(_record("11 C"), None, score)  # each caller has its own copy

    assert cached_scores(_record("eleven"), None, score) == {"answer": "eleven"}
    assert calls == ["11 C", "eleven"]

    class Extra(Metric):
        name = "cache_test_extra"
        description = "registered to change the metric versions"

    register(Extra)
    try:
        cached_scores(_record("11 C"), None, score)
        assert calls == ["11 C", "eleven", "11 C"]  # a new metric set never gets scores made without it
    finally:
        unregister(Extra.name)
    clear()
