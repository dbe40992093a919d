"""A long run of digits where a number goes is read in time linear in its length.

The number pattern once backtracked over every way to split a digit run
between its integer and fraction parts when a non-digit followed (``1…1x``):
20,000 digits took 18 s, synchronously, in every family that types raw text by
the tool's schema and in validation of any native call. Growth from n to 4n
digits is compared (about 4x when linear, 16x when quadratic); the figures
themselves are in ``make bench`` (``test_bench_number_flood``).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from utp.parsers import get_family, parse_response
from utp.types import Tool, ToolCall
from utp.validation import validate_arguments

TOOL = Tool("f", parameters={"type": "object", "properties": {"n": {"type": "number"}}})
#: the families that type a raw text value by its schema, each as the issue named it
FLOOD_FAMILIES = ["qwen3_coder", "glm", "anthropic_xml", "minimax_m3", "cline_xml"]
DIGITS = 4000
MAX_RATIO = 10.0


def flood_value(digits: int) -> str:
    return "1" * digits + "x"


def flood_text(family: str, digits: int) -> str:
    """The family's own rendering of a call whose number argument is a digit run and one letter."""
    if family == "functiongemma":  # a bare word: the rendering would quote a string
        return f"<start_function_call>call:f{{n:{flood_value(digits)}}}<end_function_call>"
    return get_family(family).render([ToolCall("f", {"n": flood_value(digits)})])


def _cpu(fn: Callable[[], object], repeats: int = 3) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.process_time()
        fn()
        best = min(best, time.process_time() - start)
    return max(best, 1e-4)


def _growth(build: Callable[[int], Callable[[], object]]) -> float:
    build(DIGITS)()  # warm caches
    return _cpu(build(4 * DIGITS)) / _cpu(build(DIGITS))


@pytest.mark.parametrize("family", [*FLOOD_FAMILIES, "functiongemma"])
def test_a_digit_flood_in_a_typed_value_is_linear(family: str) -> None:
    parsed = parse_response(flood_text(family, DIGITS), tools=[TOOL], format=family)
    assert [c.arguments for c in parsed.tool_calls] == [{"n": flood_value(DIGITS)}]  # not a number: kept as text
    ratio = _growth(lambda n: lambda: parse_response(flood_text(family, n), tools=[TOOL], format=family))
    assert ratio < MAX_RATIO, f"{family}: {ratio:.1f}x for 4x the digits"


def test_a_digit_flood_in_a_native_call_validates_in_linear_time() -> None:
    outcome = validate_arguments(TOOL.parameters, {"n": flood_value(DIGITS)})
    assert not outcome.ok
    ratio = _growth(lambda n: lambda: validate_arguments(TOOL.parameters, {"n": flood_value(n)}))
    assert ratio < MAX_RATIO, f"validation: {ratio:.1f}x for 4x the digits"
