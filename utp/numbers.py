"""Numbers written as text: the one reading every parser and the validator share.

A model writes numbers as text everywhere: raw XML values, Python literals,
JSON, digit strings where the schema wants an integer. Python converts
between ``int`` and decimal text only up to ``sys.get_int_max_str_digits()``
digits (4,300 by default) and raises ``ValueError`` past that, so a model
that writes 5,000 digits would crash whatever converts them; ``float`` takes
them silently and rounds to ``inf``. Here such a number is *too long*: the
readers return None for it (the caller keeps the text), :func:`too_long_digits`
says how long it was so validation can name the argument, and
:func:`integer_text` spells an ``int`` of any size exactly.
"""

from __future__ import annotations

import re
import sys
from functools import lru_cache
from typing import Any

#: Possessive runs (``\d++``): what follows a digit run is never a digit, so giving digits back
#: can never help a match, and a long run followed by a letter fails in one pass. The fraction is
#: one optional group: ``\d+\.?\d*`` tried every split of a digit run between integer and
#: fraction parts before failing (quadratic: 18 s for 20,000 digits and a letter).
INTEGER_TEXT = re.compile(r"[-+]?\d++")
NUMBER_TEXT = re.compile(r"[-+]?(?:\d++(?:\.\d*+)?|\.\d++)(?:[eE][-+]?\d++)?")
_DIGIT = re.compile(r"\d")
#: log10(2) as a ratio: an int of b bits has about b * 30103 / 100000 decimal digits
_LOG10_2 = (30103, 100000)


def digit_limit() -> int:
    """How many digits Python converts between ``int`` and text (0: no limit)."""
    return sys.get_int_max_str_digits() if hasattr(sys, "get_int_max_str_digits") else 0


def too_long_digits(text: str) -> int:
    """The digit count of a number ``text`` too long to read exactly, else 0.

    A number's digits (its integer and fraction parts, not an exponent)
    counted only when ``text`` is a number at all, so a long word is not one.
    """
    limit = digit_limit()
    stripped = text.strip()
    if not limit or len(stripped) <= limit or NUMBER_TEXT.fullmatch(stripped) is None:
        return 0
    mantissa = re.split(r"[eE]", stripped, maxsplit=1)[0]
    digits = sum(1 for _ in _DIGIT.finditer(mantissa))
    return digits if digits > limit else 0


def read_integer(text: str) -> int | None:
    """The ``int`` that integer ``text`` spells; None when it is none, or too long to read."""
    stripped = text.strip()
    if INTEGER_TEXT.fullmatch(stripped) is None or too_long_digits(stripped):
        return None
    return int(stripped)


def read_number(text: str) -> int | float | None:
    """An ``int`` for integer text, a finite ``float`` for other number text, else None.

    None also for a number too long to read exactly and for one past the float
    range (``1e999``): no JSON value spells it, and ``inf`` is not what was written.
    """
    stripped = text.strip()
    if INTEGER_TEXT.fullmatch(stripped) is not None:
        return read_integer(stripped)
    if NUMBER_TEXT.fullmatch(stripped) is None or too_long_digits(stripped):
        return None
    number = float(stripped)
    return number if number - number == 0 else None  # inf - inf is nan


def int_or_digits(text: str) -> int | str:
    """For ``json.loads(parse_int=…)``: the ``int``, or the digits themselves when too long to read."""
    return text if too_long_digits(text) else int(text)


def int_too_long(value: int) -> bool:
    """Whether ``str(value)`` would refuse ``value`` for its number of digits."""
    limit = digit_limit()
    return bool(limit) and abs(value) >= _power_of_ten(limit)


def integer_text(value: int) -> str:
    """The exact decimal text of ``value``, however many digits it has.

    Past the limit the value is split at a power of ten into halves that are
    each spelled on their own (recursively), so no single conversion is too long.
    """
    if value < 0:
        return "-" + integer_text(-value)
    if not int_too_long(value):
        return str(value)
    half = max(1, value.bit_length() * _LOG10_2[0] // _LOG10_2[1] // 2)
    high, low = divmod(value, _power_of_ten(half))
    return integer_text(high) + integer_text(low).rjust(half, "0")


def spell_huge_ints(value: Any) -> Any:
    """``value`` with each ``int`` too long to print replaced by its exact digits (a string).

    For what must write or print a value a caller handed over as it is
    (``json.dumps`` and the schema validator's messages raise on such an int).
    """
    if isinstance(value, dict):
        return {key: spell_huge_ints(item) for key, item in value.items()}
    if isinstance(value, list):
        return [spell_huge_ints(item) for item in value]
    if isinstance(value, int) and not isinstance(value, bool) and int_too_long(value):
        return integer_text(value)
    return value


def safe_repr(value: Any) -> str:
    """``repr(value)`` for a diagnostic, with an int too long to print spelled as its digits."""
    try:
        return repr(value)
    except ValueError:
        try:
            return repr(spell_huge_ints(value))
        except ValueError:
            return f"<{type(value).__name__} that cannot be printed>"


@lru_cache(maxsize=64)
def _power_of_ten(exponent: int) -> int:
    return 10**exponent
