"""Expected calls against actual calls: which pairs match, what is missing, what is extra.

Greedy first-fit pairing under-counts: if expected call A accepts actual calls
1 and 2 but expected call B accepts only 1, taking 1 for A leaves B unmatched
although a full matching exists. So pairs are chosen by *maximum* bipartite
matching (Kuhn's augmenting paths; the sets are a handful of calls) or, when
order matters, by a longest-common-subsequence over the compatibility matrix.
Every actual call is used at most once, so two identical expected calls need
two actual calls and a repeated actual call beyond that is an extra.

Argument rules
--------------
``strict``: the value must equal one acceptable value as JSON, after
canonicalisation (key order ignored, ``3 == 3.0``, but ``True != 1`` and
``"3" != 3``).

``bfcl``: the rules of BFCL's AST checker (``ast_checker.py`` in
berkeley-function-call-leaderboard), which UTP re-implements rather than
imports:

* ``""`` in an acceptable-values list means the parameter may be omitted;
* strings compare after removing spaces and ``, . / - _ * ^``, lowercasing and
  turning ``'`` into ``"`` (so "April 1, 2024" == "april 1,2024"), and only
  against string answers (``3`` does not match ``"3"``);
* an int is accepted for a float answer (Python's int→float promotion); a
  float is not accepted for a parameter whose schema type is ``integer``;
* lists compare element-wise, in order, with the same rules; dicts compare key
  by key where each answer value is itself a list of acceptable values and a
  key may be missing when ``""`` is among them;
* dates get no special treatment beyond the string normalisation (BFCL does
  the same);
* the function name matches with ``.`` and ``_`` treated alike (BFCL renames
  dotted names for providers that forbid dots).

Where UTP differs from BFCL: parallel calls are paired by optimal assignment
instead of BFCL's first-fit loop (which can reject a correct answer, see
above); nested values are checked recursively at any depth (BFCL checks one
level of nesting); without a schema, a number equal in value to the answer
matches (BFCL always knows the declared type); booleans never equal numbers
(BFCL relies on Python, where ``True == 1``); and the extra-parameter check
uses the expectation (``arguments`` + ``optional``) instead of the function
description, so a parameter the tool declares but the expectation does not
mention counts as unexpected unless listed in ``optional``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from utp.types import canonical_json

#: acceptable-value marker for "may be omitted" under BFCL rules
BFCL_OPTIONAL = ""

MATCH_MODES = ("strict", "bfcl")
ORDER_MODES = ("any", "ordered", "parallel")


@dataclass(frozen=True)
class Expected:
    """One expected call, independent of how the scenario file spelt it.

    ``arguments`` maps a parameter to its acceptable values; ``optional``
    names parameters that may be absent (and, when not in ``arguments``, may
    hold any value).
    """

    name: str
    arguments: Mapping[str, Sequence[Any]] = field(default_factory=dict)
    optional: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Actual:
    """One call the model made: name, arguments, and which response it came in."""

    name: str
    arguments: Mapping[str, Any]
    round: int = 0


@dataclass
class MatchResult:
    """The chosen pairs (expected index, actual index) and what is left over."""

    pairs: list[tuple[int, int]]
    expected_count: int
    actual_count: int
    order: str = "any"

    @property
    def matched(self) -> int:
        return len(self.pairs)

    @property
    def missing(self) -> list[int]:
        used = {e for e, _ in self.pairs}
        return [i for i in range(self.expected_count) if i not in used]

    @property
    def extras(self) -> list[int]:
        used = {a for _, a in self.pairs}
        return [i for i in range(self.actual_count) if i not in used]

    @property
    def complete(self) -> bool:
        """Every expected call found (extras are judged by the caller)."""
        return self.matched == self.expected_count


# ---------------------------------------------------------------------------
# value comparison


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _canonical(value: Any) -> Any:
    """JSON value with integral floats turned into ints, so 3.0 and 3 compare equal."""
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {str(k): _canonical(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_canonical(v) for v in value]
    return value


def strict_equal(value: Any, answer: Any) -> bool:
    """JSON equality after canonicalisation (bool and numbers never mix)."""
    return canonical_json(_canonical(value)) == canonical_json(_canonical(answer))


_BFCL_STRIP = re.compile(r"[ ,./\-_*^]")


def bfcl_normalise(text: str) -> str:
    """BFCL's ``standardize_string``: forgiving of spacing, case and punctuation."""
    return _BFCL_STRIP.sub("", text).lower().replace("'", '"')


def bfcl_equal(value: Any, answer: Any, schema_type: str | None = None) -> bool:
    """One value against one acceptable answer under BFCL's rules (recursively)."""
    if isinstance(answer, str):
        return isinstance(value, str) and bfcl_normalise(value) == bfcl_normalise(answer)
    if isinstance(answer, bool):
        return isinstance(value, bool) and value == answer
    if _is_number(answer):
        if not _is_number(value):
            return False
        if schema_type == "integer" and isinstance(value, float):
            return False
        return float(value) == float(answer)
    if answer is None:
        return value is None
    if isinstance(answer, (list, tuple)):
        if not isinstance(value, (list, tuple)) or len(value) != len(answer):
            return False
        return all(bfcl_equal(v, a) for v, a in zip(value, answer))
    if isinstance(answer, dict):
        return isinstance(value, dict) and _bfcl_dict_matches(value, answer)
    return value == answer


def _bfcl_dict_matches(value: dict[str, Any], answer: dict[str, Any]) -> bool:
    """Answer values are acceptable-value lists, as in BFCL's possible answers."""
    for key, item in value.items():
        if key not in answer:
            return False
        if not _bfcl_any(item, _as_choices(answer[key])):
            return False
    return all(key in value or BFCL_OPTIONAL in _as_choices(choices) for key, choices in answer.items())


def _as_choices(choices: Any) -> list[Any]:
    return list(choices) if isinstance(choices, (list, tuple)) else [choices]


def _bfcl_any(value: Any, choices: Sequence[Any], schema_type: str | None = None) -> bool:
    return any(bfcl_equal(value, c, schema_type) for c in choices if not (isinstance(c, str) and c == BFCL_OPTIONAL))


ValueMatcher = Callable[[Any, Sequence[Any], "str | None"], bool]


def _strict_any(value: Any, choices: Sequence[Any], schema_type: str | None = None) -> bool:
    return any(strict_equal(value, c) for c in choices)


@dataclass(frozen=True)
class ArgumentRules:
    """How one match mode compares values and which parameters it lets be absent."""

    value_matches: ValueMatcher
    empty_string_is_optional: bool
    name_key: Callable[[str], str]


ARGUMENT_RULES: dict[str, ArgumentRules] = {
    "strict": ArgumentRules(_strict_any, False, lambda n: n),
    "bfcl": ArgumentRules(_bfcl_any, True, lambda n: n.replace(".", "_")),
}


def get_rules(mode: str) -> ArgumentRules:
    try:
        return ARGUMENT_RULES[mode]
    except KeyError:
        raise ValueError(f"unknown match mode {mode!r} (expected one of: {', '.join(ARGUMENT_RULES)})") from None


def call_matches(
    expected: Expected,
    actual: Actual,
    mode: str = "strict",
    param_types: Mapping[str, str] | None = None,
) -> bool:
    """Same tool, every checked argument acceptable, nothing unexpected passed."""
    rules = get_rules(mode)
    if rules.name_key(expected.name) != rules.name_key(actual.name):
        return False
    args = actual.arguments if isinstance(actual.arguments, Mapping) else {}
    types = param_types or {}
    for param, raw_choices in expected.arguments.items():
        choices = _as_choices(raw_choices)
        may_omit = param in expected.optional or (rules.empty_string_is_optional and BFCL_OPTIONAL in choices)
        if param not in args:
            if may_omit:
                continue
            return False
        if not rules.value_matches(args[param], choices, types.get(param)):
            return False
    allowed = set(expected.arguments) | set(expected.optional)
    return all(param in allowed for param in args)


# ---------------------------------------------------------------------------
# assignment


def compatibility(
    expected: Sequence[Expected],
    actual: Sequence[Actual],
    mode: str = "strict",
    param_types: Mapping[str, Mapping[str, str]] | None = None,
) -> list[list[bool]]:
    """``matrix[e][a]``: may actual call ``a`` stand for expected call ``e``?"""
    types = param_types or {}
    return [[call_matches(e, a, mode, types.get(e.name)) for a in actual] for e in expected]


def max_bipartite_matching(matrix: Sequence[Sequence[bool]], n_right: int) -> list[tuple[int, int]]:
    """Kuhn's algorithm: a maximum set of disjoint (left, right) pairs, sorted by left.

    Deterministic: left nodes are tried in index order, right nodes in index
    order, so equal inputs give equal pairings (reports stay reproducible).
    """
    owner: list[int | None] = [None] * n_right

    def augment(left: int, seen: list[bool]) -> bool:
        for right in range(n_right):
            if matrix[left][right] and not seen[right]:
                seen[right] = True
                current = owner[right]
                if current is None or augment(current, seen):
                    owner[right] = left
                    return True
        return False

    for left in range(len(matrix)):
        augment(left, [False] * n_right)
    return sorted((left, right) for right, left in enumerate(owner) if left is not None)


def ordered_matching(matrix: Sequence[Sequence[bool]], n_right: int) -> list[tuple[int, int]]:
    """Longest common subsequence: the most pairs whose order agrees on both sides."""
    n_left = len(matrix)
    best = [[0] * (n_right + 1) for _ in range(n_left + 1)]
    for i in range(n_left - 1, -1, -1):
        for j in range(n_right - 1, -1, -1):
            take = best[i + 1][j + 1] + 1 if matrix[i][j] else 0
            best[i][j] = max(take, best[i + 1][j], best[i][j + 1])
    pairs: list[tuple[int, int]] = []
    i = j = 0
    while i < n_left and j < n_right:
        if matrix[i][j] and best[i][j] == best[i + 1][j + 1] + 1:
            pairs.append((i, j))
            i, j = i + 1, j + 1
        elif best[i + 1][j] >= best[i][j + 1]:
            i += 1
        else:
            j += 1
    return pairs


def _parallel_matching(matrix: Sequence[Sequence[bool]], actual: Sequence[Actual]) -> list[tuple[int, int]]:
    """The best matching inside a single response (all calls must come together)."""
    best: list[tuple[int, int]] = []
    for round_index in sorted({a.round for a in actual}):
        columns = [k for k, a in enumerate(actual) if a.round == round_index]
        sub = [[row[k] for k in columns] for row in matrix]
        pairs = [(e, columns[a]) for e, a in max_bipartite_matching(sub, len(columns))]
        if len(pairs) > len(best):
            best = pairs
    return best


def match_calls(
    expected: Sequence[Expected],
    actual: Sequence[Actual],
    *,
    mode: str = "strict",
    order: str = "any",
    param_types: Mapping[str, Mapping[str, str]] | None = None,
) -> MatchResult:
    """Pair expected with actual calls under ``mode`` argument rules and ``order``.

    ``any``: maximum matching regardless of order. ``ordered``: matched pairs
    keep the expected order. ``parallel``: all matches come from one response.
    """
    if order not in ORDER_MODES:
        raise ValueError(f"unknown order {order!r} (expected one of: {', '.join(ORDER_MODES)})")
    matrix = compatibility(expected, actual, mode, param_types)
    if order == "any":
        pairs = max_bipartite_matching(matrix, len(actual))
    elif order == "ordered":
        pairs = ordered_matching(matrix, len(actual))
    else:
        pairs = _parallel_matching(matrix, actual)
    return MatchResult(pairs=pairs, expected_count=len(expected), actual_count=len(actual), order=order)


__all__ = [
    "ARGUMENT_RULES",
    "Actual",
    "Expected",
    "MATCH_MODES",
    "MatchResult",
    "ORDER_MODES",
    "bfcl_equal",
    "bfcl_normalise",
    "call_matches",
    "compatibility",
    "match_calls",
    "max_bipartite_matching",
    "ordered_matching",
    "strict_equal",
]
