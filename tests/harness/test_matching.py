"""Expected-vs-actual call matching: optimal assignment, order modes, strict and BFCL rules."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.matching import (
    Actual,
    Expected,
    bfcl_equal,
    bfcl_normalise,
    call_matches,
    match_calls,
    max_bipartite_matching,
    ordered_matching,
    strict_equal,
)


def E(name: str, optional: tuple[str, ...] = (), **arguments: list) -> Expected:
    return Expected(name, arguments, frozenset(optional))


def A(name: str, round: int = 0, **arguments) -> Actual:
    return Actual(name, arguments, round)


# --------------------------------------------------------------------------- strict values


def test_strict_equal_canonicalises_numbers_and_key_order():
    assert strict_equal(3, 3.0)
    assert strict_equal({"a": 1, "b": [1, 2.0]}, {"b": [1.0, 2], "a": 1.0})
    assert not strict_equal(True, 1)
    assert not strict_equal("3", 3)
    assert not strict_equal([1, 2], [2, 1])


def test_acceptable_values_list_and_unexpected_argument():
    expected = E("get_weather", city=["Tokyo", "Tokyo, Japan"])
    assert call_matches(expected, A("get_weather", city="Tokyo, Japan"))
    assert not call_matches(expected, A("get_weather", city="tokyo"))  # strict: case matters
    assert not call_matches(expected, A("get_weather", city="Tokyo", units="C"))  # unexpected extra
    assert not call_matches(expected, A("get_weather"))  # required missing
    assert not call_matches(expected, A("get_time", city="Tokyo"))


def test_optional_parameters_may_be_absent_or_hold_anything():
    free = E("write_file", optional=("content",), path=["a.txt"])
    assert call_matches(free, A("write_file", path="a.txt"))
    assert call_matches(free, A("write_file", path="a.txt", content="anything at all"))
    constrained = E("get_weather", optional=("units",), city=["Tokyo"], units=["C"])
    assert call_matches(constrained, A("get_weather", city="Tokyo"))
    assert call_matches(constrained, A("get_weather", city="Tokyo", units="C"))
    assert not call_matches(constrained, A("get_weather", city="Tokyo", units="F"))


# --------------------------------------------------------------------------- BFCL rules


def test_bfcl_empty_string_marks_optional():
    expected = E("calc_area", base=[10], unit=["cm", ""])
    assert call_matches(expected, A("calc_area", base=10), mode="bfcl")
    assert call_matches(expected, A("calc_area", base=10, unit="CM"), mode="bfcl")
    assert not call_matches(expected, A("calc_area", base=10, unit="m"), mode="bfcl")
    # in strict mode "" is a literal value, so the parameter is required
    assert not call_matches(expected, A("calc_area", base=10), mode="strict")


def test_bfcl_int_promotes_to_float_but_float_is_not_an_integer():
    assert bfcl_equal(5, 5.0)
    assert call_matches(E("f", x=[2.5, 5.0]), A("f", x=5), mode="bfcl")
    types = {"f": {"n": "integer"}}
    result = match_calls([E("f", n=[5])], [A("f", n=5.0)], mode="bfcl", param_types=types)
    assert result.matched == 0
    assert match_calls([E("f", n=[5])], [A("f", n=5)], mode="bfcl", param_types=types).matched == 1
    assert not bfcl_equal(True, 1)
    assert not bfcl_equal("5", 5)


def test_bfcl_string_normalisation():
    assert bfcl_normalise("April 1, 2024") == bfcl_normalise("april 1,2024") == "april12024"
    assert bfcl_normalise("New-York_City*^/.") == "newyorkcity"
    assert bfcl_equal("San Francisco, CA", "san francisco ca")
    assert bfcl_equal("it's", 'it"s')
    assert not bfcl_equal("Paris", "London")


def test_bfcl_lists_and_dicts_compare_element_wise():
    assert bfcl_equal(["New York", "LA"], ["new york", "la"])
    assert not bfcl_equal(["LA", "New York"], ["new york", "la"])  # order matters
    answer = {"city": ["Boston", "boston ma"], "zip": ["", "02110"]}
    assert bfcl_equal({"city": "Boston, MA"}, answer)
    assert bfcl_equal({"city": "boston", "zip": "02110"}, answer)
    assert not bfcl_equal({"city": "boston", "country": "US"}, answer)  # unexpected key
    assert not bfcl_equal({"zip": "02110"}, answer)  # missing required key
    # list of dicts: each answer dict maps keys to acceptable-value lists, as in BFCL
    assert bfcl_equal([{"a": 1}, {"a": 2.0}], [{"a": [1]}, {"a": [2, 3]}])
    assert not bfcl_equal([{"a": 1}], [{"a": [1]}, {"a": [2]}])


def test_bfcl_name_treats_dot_and_underscore_alike():
    assert call_matches(E("math.factorial", n=[5]), A("math_factorial", n=5), mode="bfcl")
    assert not call_matches(E("math.factorial", n=[5]), A("math_factorial", n=5), mode="strict")


def test_unknown_modes_are_refused_with_their_name():
    with pytest.raises(ValueError, match="sideways"):
        match_calls([], [], order="sideways")
    with pytest.raises(ValueError, match="fuzzy"):
        call_matches(E("f"), A("f"), mode="fuzzy")


# --------------------------------------------------------------------------- assignment


def test_optimal_assignment_beats_greedy_first_fit():
    # Expected 0 accepts either city; expected 1 accepts only Tokyo. Greedy gives
    # actual 0 (Tokyo) to expected 0 and strands expected 1; the optimum matches both.
    expected = [E("get_weather", city=["Tokyo", "Paris"]), E("get_weather", city=["Tokyo"])]
    actual = [A("get_weather", city="Tokyo"), A("get_weather", city="Paris")]
    greedy_used: set[int] = set()
    greedy = 0
    for e in expected:
        for k, a in enumerate(actual):
            if k not in greedy_used and call_matches(e, a):
                greedy_used.add(k)
                greedy += 1
                break
    assert greedy == 1
    result = match_calls(expected, actual)
    assert result.matched == 2 and result.complete and result.extras == []


def test_duplicates_count_correctly():
    two_expected = [E("ping", host=["a"]), E("ping", host=["a"])]
    one = match_calls(two_expected, [A("ping", host="a")])
    assert one.matched == 1 and one.missing == [1] and not one.complete
    two_actual = match_calls([E("ping", host=["a"])], [A("ping", host="a"), A("ping", host="a")])
    assert two_actual.matched == 1 and two_actual.complete and two_actual.extras == [1]


def test_ordered_mode_respects_order():
    expected = [E("a"), E("b")]
    assert match_calls(expected, [A("a"), A("b")], order="ordered").matched == 2
    reversed_ = match_calls(expected, [A("b"), A("a")], order="ordered")
    assert reversed_.matched == 1 and not reversed_.complete
    assert match_calls(expected, [A("b"), A("a")], order="any").matched == 2


def test_parallel_mode_needs_one_response():
    expected = [E("a"), E("b")]
    together = match_calls(expected, [A("a", round=0), A("b", round=0)], order="parallel")
    assert together.complete
    apart = match_calls(expected, [A("a", round=0), A("b", round=1)], order="parallel")
    assert apart.matched == 1 and not apart.complete


def _brute_force_max(matrix: list[list[bool]], n_right: int) -> int:
    best = 0
    rights = list(range(n_right))
    for size in range(len(matrix), 0, -1):
        for lefts in itertools.combinations(range(len(matrix)), size):
            for perm in itertools.permutations(rights, size):
                if all(matrix[l][r] for l, r in zip(lefts, perm)):
                    return size
    return best


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 4).flatmap(
    lambda n: st.tuples(st.just(n), st.integers(0, 4)).flatmap(
        lambda nm: st.lists(st.lists(st.booleans(), min_size=nm[1], max_size=nm[1]), min_size=nm[0], max_size=nm[0])
        .map(lambda m: (m, nm[1]))
    )
))
def test_kuhn_matching_is_maximum_and_valid(case):
    matrix, n_right = case
    pairs = max_bipartite_matching(matrix, n_right)
    assert len({l for l, _ in pairs}) == len(pairs) == len({r for _, r in pairs})
    assert all(matrix[l][r] for l, r in pairs)
    assert len(pairs) == _brute_force_max(matrix, n_right)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from("abc"), max_size=5), st.lists(st.sampled_from("abc"), max_size=5))
def test_ordered_matching_is_a_longest_common_subsequence(left, right):
    matrix = [[x == y for y in right] for x in left]
    pairs = ordered_matching(matrix, len(right))
    assert all(matrix[l][r] for l, r in pairs)
    assert all(a[0] < b[0] and a[1] < b[1] for a, b in zip(pairs, pairs[1:]))
    lcs = [[0] * (len(right) + 1) for _ in range(len(left) + 1)]
    for i, x in enumerate(left):
        for j, y in enumerate(right):
            lcs[i + 1][j + 1] = lcs[i][j] + 1 if x == y else max(lcs[i][j + 1], lcs[i + 1][j])
    assert len(pairs) == lcs[len(left)][len(right)]


names = st.sampled_from(["get_weather", "search", "ping"])
values = st.sampled_from(["Tokyo", "Paris", "a", 1, 2.0])


@st.composite
def scenario_calls(draw):
    expected = [
        E(draw(names), **{"x": draw(st.lists(values, min_size=1, max_size=2, unique_by=repr))})
        for _ in range(draw(st.integers(0, 4)))
    ]
    actual = [A(draw(names), x=draw(values)) for _ in range(draw(st.integers(0, 5)))]
    return expected, actual


@settings(max_examples=200, deadline=None)
@given(scenario_calls(), st.randoms(use_true_random=False))
def test_permuting_expected_or_actual_never_changes_the_count(case, rnd):
    expected, actual = case
    base = match_calls(expected, actual)
    shuffled_e, shuffled_a = list(expected), list(actual)
    rnd.shuffle(shuffled_e)
    rnd.shuffle(shuffled_a)
    for mode in ("strict", "bfcl"):
        reference = match_calls(expected, actual, mode=mode)
        permuted = match_calls(shuffled_e, shuffled_a, mode=mode)
        assert permuted.matched == reference.matched
        assert len(permuted.extras) == len(reference.extras)
        assert len(permuted.missing) == len(reference.missing)
    assert base.matched + len(base.missing) == len(expected)
    assert base.matched + len(base.extras) == len(actual)


@pytest.mark.bench
def test_bench_match_calls_parallel_bfcl(benchmark):
    expected = [E("get_weather", city=[f"City {i}", f"city{i}"], unit=["c", ""]) for i in range(6)]
    actual = [A("get_weather", round=i % 2, city=f"city {i}", unit="C") for i in reversed(range(8))]
    result = benchmark(match_calls, expected, actual, mode="bfcl", order="any")
    assert result.matched == 6 and len(result.extras) == 2
