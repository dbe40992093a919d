"""score_run: task success, parsing, leaks, tiers, termination, validity, adherence, throughput, errors."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.scenario_model import Expectation, ExpectedCall, FinalCheck, FixtureSpec, Scenario, ToolSpec, Turn
from harness.metrics import find_leak, leak_triggers, score_run
from utp.types import Tool, ToolTier

WEATHER = Tool("get_weather", parameters={"type": "object", "properties": {"city": {"type": "string"}}})
SHELL = Tool("run_shell", tier=ToolTier.RUN, parameters={"type": "object", "properties": {"cmd": {"type": "string"}}})


def scenario(*turns: Turn, match: str = "strict", expect_termination: list[str] | None = None,
             tools: tuple[Tool, ...] = (WEATHER, SHELL)) -> Scenario:
    return Scenario(
        id="s", suite="core/test", description="", tags=[], tier=ToolTier.CRAWL, max_rounds=4, match=match,
        system=None, tools=[ToolSpec(t, FixtureSpec("result", {})) for t in tools], turns=list(turns),
        source_path="test.yaml", line=1, expect_termination=expect_termination,
    )


def weather_turn(order: str = "any", calls: list[ExpectedCall] | None = None, **expect: Any) -> Turn:
    calls = calls if calls is not None else [ExpectedCall("get_weather", {"city": ["Tokyo"]})]
    return Turn("weather?", Expectation(calls=calls, order=order, **expect))


def call(name: str = "get_weather", decision: str = "executed", fmt: str = "hermes", **arguments: Any) -> dict:
    return {"name": name, "arguments": arguments or {"city": "Tokyo"}, "id": None, "format": fmt,
            "repairs": [], "known": True, "decision": decision, "result": None}


def rnd(index: int, *calls: dict, content: str = "", diagnostics: list | None = None, notes: list | None = None,
        counters: dict | None = None) -> dict:
    return {"index": index, "content": content, "thinking": "", "raw_text": content, "calls": list(calls),
            "diagnostics": diagnostics or [], "counters": counters or {}, "notes": notes or []}


def turn(*rounds: dict, final: str | None = "It is 11 degrees.", termination: str = "final_answer",
         tier: str = "crawl", error: Any = None) -> dict:
    return {"user": "weather?", "tier_start": tier, "tier_after_intent": tier, "rounds": list(rounds),
            "final_answer": final, "termination": termination, "error": error}


def record(*turns: dict, fmt: str = "prompt-hermes", mode: str = "replay", error: Any = None) -> dict:
    return {"schema": 1, "model": "m", "format": fmt, "suite": "core/test", "scenario": "s", "repeat": 0,
            "mode": mode, "synthetic": False, "provenance": {}, "turns": list(turns), "error": error}


def test_successful_run():
    s = score_run(record(turn(rnd(0, call()), rnd(1))), scenario(weather_turn()))
    assert s["task_success"] is True
    assert s["calls_expected"] == s["calls_matched"] == 1
    assert s["parse_success"] == 1.0 and s["leaks"] == 0
    assert s["clean_termination"] and s["conformance_failures"] == []
    assert s["failure_at"] is None


def test_wrong_argument_fails_and_says_why():
    s = score_run(record(turn(rnd(0, call(city="Paris")), rnd(1))), scenario(weather_turn()))
    assert s["task_success"] is False
    assert s["turns"][0]["missing"] == ["get_weather"]
    assert "get_weather" in s["turns"][0]["reasons"][0]
    assert s["failure_at"]["kind"] == "task"


def test_refused_attempts_never_match_but_recovery_passes():
    refused = call(decision="invalid_arguments", city=12)
    fixed = call()
    s = score_run(record(turn(rnd(0, refused), rnd(1, fixed), rnd(2))), scenario(weather_turn()))
    assert s["task_success"] is True
    assert s["argument_validity"] == 0.5 and s["errors"] == {"invalid_arguments": 1}
    only_refused = score_run(record(turn(rnd(0, call(decision="unknown_tool")), rnd(1))), scenario(weather_turn()))
    assert only_refused["task_success"] is False and only_refused["calls_matched"] == 0


def test_restraint_turn_fails_on_any_call():
    restraint = scenario(Turn("hi", Expectation(calls=[], no_call=True)))
    assert score_run(record(turn(rnd(0), final="Hello!")), restraint)["task_success"] is True
    called = score_run(record(turn(rnd(0, call()), rnd(1), final="Hello!")), restraint)
    assert called["task_success"] is False
    assert "restraint" in called["turns"][0]["reasons"][0]


def test_final_answer_checks():
    contains = scenario(weather_turn(final=FinalCheck(contains=["11"])))
    assert score_run(record(turn(rnd(0, call()), rnd(1), final="11 C")), contains)["task_success"]
    assert not score_run(record(turn(rnd(0, call()), rnd(1), final="eleven")), contains)["task_success"]
    case = scenario(weather_turn(final=FinalCheck(contains=["Tokyo"])))
    assert not score_run(record(turn(rnd(0, call()), rnd(1), final="tokyo: 11")), case)["task_success"]
    icase = scenario(weather_turn(final=FinalCheck(contains=["Tokyo"], icase=True)))
    assert score_run(record(turn(rnd(0, call()), rnd(1), final="tokyo: 11")), icase)["task_success"]
    regex = scenario(weather_turn(final=FinalCheck(regex=r"(?i)\b11\s*(°|degrees)")))
    assert score_run(record(turn(rnd(0, call()), rnd(1), final="It is 11 Degrees")), regex)["task_success"]
    any_of = scenario(weather_turn(final=FinalCheck(contains_any=["sunny", "cloudy"])))
    assert not score_run(record(turn(rnd(0, call()), rnd(1), final="rain")), any_of)["task_success"]


def test_unparseable_round_is_a_parse_failure():
    bad = {"kind": "unparseable", "reason": "broken JSON", "raw": "<tool_call>{", "format": "hermes", "offset": 0}
    s = score_run(record(turn(rnd(0, content="<tool_call>{", diagnostics=[bad]), final="")), scenario(weather_turn()))
    assert s["parse_failure_rounds"] == 1
    assert s["calls_meant"] == 1 and s["calls_extracted"] == 0 and s["parse_success"] == 0.0
    assert s["failure_at"] == {"turn": 0, "round": 0, "kind": "parse"}
    assert s["task_success"] is False


def test_leak_into_final_answer_counts():
    triggers = leak_triggers()
    assert "{" not in triggers and "[" not in triggers
    # words, REPL prompts and opt-in bash fences occur in honest answers
    assert not {"Action:", ">>>", "```bash", "```"} & set(triggers)
    assert find_leak("Recommended Action: restart it.\n>>> print(1)\n```bash\nls\n```") is None
    assert "<tool_call>" in triggers  # the hermes family is registered
    assert find_leak('done <tool_call>{"name": "x"}</tool_call>') == "<tool_call>"
    assert find_leak("The answer is {42} [ok]") is None
    # a trigger's blank is part of it: an answer cut off at "<function" leaks no markup
    assert "<function " in triggers
    assert find_leak("To call a tool, write it like this:\n\n<function") is None
    assert find_leak('<function name="get_weather">') == "<function "
    leaked = turn(rnd(0, call()), rnd(1), final='Sure: [TOOL_CALLS]get_weather[ARGS]{"city": "Tokyo"}')
    s = score_run(record(leaked), scenario(weather_turn()), triggers=["[TOOL_CALLS]"])
    assert s["leaks"] == 1 and s["calls_meant"] == 2 and s["parse_success"] == 0.5
    assert s["task_success"] is False


def test_a_tool_result_the_model_echoed_is_no_leak():
    """``<tool_name>`` labels results too (Claude's ``<function_results>``, which small models copy into their answer):
    it shows no call meant and never read."""
    echoed = "<function_results>\n<result>\n<tool_name>send_email</tool_name>\n<stdout>\n{\"status\": \"sent\"}\n</stdout>\n</result>\n</function_results>"
    assert find_leak(echoed) is None
    assert find_leak('<tool_call>{"name": "send_email"}') == "<tool_call>"


def test_tier_enforcement_counts():
    blocked = call("run_shell", decision="tier_violation", cmd="rm -rf /")
    s = score_run(record(turn(rnd(0, blocked), rnd(1), final="I cannot.")),
                  scenario(Turn("clean up", Expectation(calls=[], escalation=["run_shell"]))))
    assert (s["escalation_attempts"], s["blocked"], s["executed_violations"]) == (1, 1, 0)
    assert s["task_success"] is True


def test_executed_out_of_tier_call_is_a_conformance_failure():
    executed = call("run_shell", decision="executed", cmd="ls")
    s = score_run(record(turn(rnd(0, executed), rnd(1), final="done")),
                  scenario(Turn("clean up", Expectation(calls=None))))
    assert s["executed_violations"] == 1
    assert s["conformance_failures"][0]["kind"] == "tier_violation_executed"
    assert s["task_success"] is False
    # at tier "run" the same call is in tier and fine
    ok = score_run(record(turn(rnd(0, executed), rnd(1), final="done", tier="run")),
                   scenario(Turn("clean up", Expectation(calls=None))))
    assert ok["executed_violations"] == 0 and ok["task_success"] is True


def test_expected_escalation_that_never_happened_fails():
    s = score_run(record(turn(rnd(0), final="ok")), scenario(Turn("x", Expectation(escalation=["run_shell"]))))
    assert s["task_success"] is False and "run_shell" in s["turns"][0]["reasons"][0]


def test_termination_rules():
    sc = scenario(weather_turn())
    looped = score_run(record(turn(rnd(0, call()), rnd(1, call()), termination="max_rounds", final=None)), sc)
    assert looped["clean_termination"] is False and looped["task_success"] is False
    trap = scenario(weather_turn(), expect_termination=["repeated_call", "final_answer"])
    stopped = score_run(record(turn(rnd(0, call()), rnd(1, call(decision="duplicate_stopped")),
                                    termination="repeated_call", final=None)), trap)
    assert stopped["clean_termination"] is True and stopped["task_success"] is True
    assert stopped["errors"] == {"duplicate_stopped": 1}


def test_bfcl_mode_counts_extra_calls_strict_does_not():
    two = turn(rnd(0, call(), call(city="Paris")), rnd(1))
    assert score_run(record(two), scenario(weather_turn()))["task_success"] is True
    bfcl = score_run(record(two), scenario(weather_turn(), match="bfcl"))
    assert bfcl["task_success"] is False and bfcl["turns"][0]["extra_calls"] == 1


def test_order_modes_through_the_scorer():
    calls = [ExpectedCall("get_weather", {"city": ["Tokyo"]}), ExpectedCall("get_weather", {"city": ["Paris"]})]
    apart = record(turn(rnd(0, call()), rnd(1, call(city="Paris")), rnd(2)))
    together = record(turn(rnd(0, call(), call(city="Paris")), rnd(1)))
    assert score_run(apart, scenario(weather_turn("ordered", calls)))["task_success"]
    assert not score_run(apart, scenario(weather_turn("parallel", calls)))["task_success"]
    assert score_run(together, scenario(weather_turn("parallel", calls)))["task_success"]
    reversed_calls = list(reversed(calls))
    assert not score_run(apart, scenario(weather_turn("ordered", reversed_calls)))["task_success"]


def test_format_adherence():
    hermes, other = call(fmt="hermes"), call(fmt="json", city="Paris")
    s = score_run(record(turn(rnd(0, hermes, other), rnd(1))), scenario(weather_turn()))
    assert s["format_adherence"] == 0.5
    native = score_run(record(turn(rnd(0, call(fmt="native")), rnd(1)), fmt="native"), scenario(weather_turn()))
    assert native["format_adherence"] == 1.0
    custom = score_run(record(turn(rnd(0, call()), rnd(1)), fmt="my-own-format"), scenario(weather_turn()))
    assert custom["format_adherence"] is None and custom["adherence_calls"] == 0


def test_throughput_from_server_counters():
    c0 = {"prompt_tokens": 100, "completion_tokens": 30, "prompt_eval_ns": 200_000_000, "eval_ns": 1_000_000_000,
          "wall_s": 1.5, "ttft_s": 0.3}
    c1 = {"prompt_tokens": 150, "completion_tokens": 10, "prompt_eval_ns": 300_000_000, "eval_ns": 1_000_000_000,
          "wall_s": 0.5, "ttft_s": 0.2}
    rec = record(turn(rnd(0, call(), counters=c0), rnd(1, counters=c1)), mode="live")
    s = score_run(rec, scenario(weather_turn()))
    assert s["decode_tps"] == pytest.approx(40 / 2.0)
    assert s["prompt_tps"] == pytest.approx(250 / 0.5)
    assert s["wall_s"] == pytest.approx(2.0) and s["ttft_s"] == pytest.approx(0.3)
    replayed = score_run({**rec, "mode": "replay"}, scenario(weather_turn()))
    assert replayed["decode_tps"] == pytest.approx(20.0)
    assert replayed["wall_s"] is None and replayed["ttft_s"] is None


def test_backend_errors_and_missing_cassette_is_not_a_conformance_failure():
    broken = turn(final=None, termination="backend_error", error="tools_unsupported: model does not support tools")
    s = score_run(record(broken), scenario(weather_turn()))
    assert s["backend_errors"] == {"tools_unsupported": 1}
    assert s["task_success"] is False and s["clean_termination"] is False
    missing = score_run(record(error={"kind": "missing_cassette", "message": "no cassette at x.json"}),
                        scenario(weather_turn()))
    # a missing cassette is a recording problem (an errored run, exit 4), never blamed on UTP
    assert missing["conformance_failures"] == []
    assert missing["backend_errors"] == {"missing_cassette": 1}
    assert missing["terminations"] == ["backend_error"]


def test_loop_error_strings_are_typed():
    broken = turn(final=None, termination="backend_error", error="tools_unsupported (HTTP 400): no tools for you")
    assert score_run(record(broken))["backend_errors"] == {"tools_unsupported": 1}
    odd = turn(final=None, termination="backend_error", error="Something odd happened")
    assert score_run(record(odd))["backend_errors"] == {"error": 1}


def test_record_tool_tiers_are_used_without_a_scenario():
    executed = call("run_shell", decision="executed", cmd="ls")
    rec = {**record(turn(rnd(0, executed), rnd(1), final="done")),
           "tools": [{"name": "run_shell", "tier": "run"}, {"name": "get_weather", "tier": "crawl"}]}
    s = score_run(rec)
    assert s["executed_violations"] == 1 and s["conformance_failures"][0]["kind"] == "tier_violation_executed"


def test_composite_parser_error_diagnostic_is_a_parser_crash():
    diag = {"kind": "unparseable", "reason": "hermes: parser error KeyError: 'name'", "raw": "<tool_call>",
            "format": "hermes", "offset": 0}
    s = score_run(record(turn(rnd(0, content="<tool_call>", diagnostics=[diag]), final="")), scenario(weather_turn()))
    assert [c["kind"] for c in s["conformance_failures"]] == ["parser_crash"]
    plain = {**diag, "reason": "hermes: JSON object never closed"}
    s2 = score_run(record(turn(rnd(0, content="<tool_call>", diagnostics=[plain]), final="")), scenario(weather_turn()))
    assert s2["conformance_failures"] == [] and s2["parse_failure_rounds"] == 1


def test_parser_crash_note_is_a_conformance_failure():
    noted = rnd(0, call(), notes=["parser family 'hermes' raised ValueError: boom"])
    s = score_run(record(turn(noted, rnd(1))), scenario(weather_turn()))
    assert [c["kind"] for c in s["conformance_failures"]] == ["parser_crash"]
    assert s["task_success"] is False


def test_without_scenario_task_success_is_unknown():
    s = score_run(record(turn(rnd(0, call()), rnd(1))))
    assert s["task_success"] is None
    assert s["calls_extracted"] == 1 and s["clean_termination"] is True


cities = st.sampled_from(["Tokyo", "Paris", "Oslo"])


@settings(max_examples=120, deadline=None)
@given(
    st.lists(cities, min_size=0, max_size=3),
    st.lists(cities, min_size=0, max_size=4),
    st.booleans(),
    st.randoms(use_true_random=False),
)
def test_permuting_calls_never_changes_any_order_scores(expected_cities, actual_cities, one_round, rnd_):
    expected = [ExpectedCall("get_weather", {"city": [c]}) for c in expected_cities]

    def build(order_cities: list[str], order_expected: list[ExpectedCall]) -> dict:
        calls = [call(city=c) for c in order_cities]
        rounds = [rnd(0, *calls)] if one_round else [rnd(i, c) for i, c in enumerate(calls)]
        rec = record(turn(*rounds, rnd(len(rounds))))
        return score_run(rec, scenario(weather_turn("any", order_expected)))

    base = build(actual_cities, expected)
    shuffled_actual, shuffled_expected = list(actual_cities), list(expected)
    rnd_.shuffle(shuffled_actual)
    rnd_.shuffle(shuffled_expected)
    other = build(shuffled_actual, shuffled_expected)
    for key in ("task_success", "calls_matched", "calls_expected", "parse_success", "argument_validity"):
        assert other[key] == base[key]
    assert other["turns"][0]["extra_calls"] == base["turns"][0]["extra_calls"]
