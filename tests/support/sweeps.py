"""How deep the suite's sweeps go: ``quick`` for ``make test``, ``full`` for ``make test-full``.

A sweep is a test that samples a space rather than checking one case:
Hypothesis properties, every-cut streaming, replaying every recorded run.
``make test`` runs each sweep at an eighth of its written size so a contributor
gets an answer in minutes; ``make test-full`` (which CI also runs) runs every
sweep at the size its test states. Both run the same tests: ``quick`` samples
less of each space, it never leaves a behaviour untested.

The mode is chosen once per session by the root ``conftest.py`` (``--sweeps``)
before any test module is imported, so module-level sizes may call
:func:`sweep_size`.
"""

from __future__ import annotations

MODES = ("quick", "full")
#: quick runs a sweep of n cases as n // QUICK_DIVISOR, but never below QUICK_FLOOR (nor above n)
QUICK_DIVISOR = 8
QUICK_FLOOR = 10

_mode = "quick"


def set_sweep_mode(mode: str) -> None:
    global _mode
    if mode not in MODES:
        raise ValueError(f"sweep mode must be one of {', '.join(MODES)}, not {mode!r}")
    _mode = mode


def full_sweeps() -> bool:
    """True under ``--sweeps=full`` (``make test-full``)."""
    return _mode == "full"


def sweep_size(full: int) -> int:
    """How many cases a sweep written for ``full`` cases runs in this session."""
    if full_sweeps():
        return full
    return min(full, max(QUICK_FLOOR, full // QUICK_DIVISOR))


def sweep_stride(full: int) -> int:
    """The step of a sweep written to visit every ``full``-th position: wider in quick mode."""
    return full if full_sweeps() else full * QUICK_DIVISOR


#: quick mode streams a text cut at every QUICK_CUT_STEP-th position (full mode: at every one)
QUICK_CUT_STEP = 2


def single_cuts(length: int) -> range:
    """The positions at which a sweep cuts a text of ``length`` characters once.

    Full mode tries every one. Quick mode tries every second, starting from the
    length's parity, so texts of either parity between them cover both kinds of
    position; the two ends (no cut at all) are tried by the full sweep in CI.
    """
    if full_sweeps():
        return range(length + 1)
    return range(length % QUICK_CUT_STEP, length + 1, QUICK_CUT_STEP)
