"""The sweep sizes of ``make test`` (quick) and ``make test-full`` (full), and that the suite applies them."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.sweeps import full_sweeps, set_sweep_mode, sweep_size, sweep_stride


@pytest.fixture
def restore_mode():
    mode = "full" if full_sweeps() else "quick"
    yield
    set_sweep_mode(mode)


def test_quick_runs_an_eighth_never_below_ten_nor_above_the_stated_size(restore_mode: None) -> None:
    set_sweep_mode("quick")
    assert [sweep_size(n) for n in (3000, 100, 30, 5)] == [375, 12, 10, 5]
    assert sweep_stride(17) == 136


def test_full_runs_every_sweep_as_written(restore_mode: None) -> None:
    set_sweep_mode("full")
    assert [sweep_size(n) for n in (3000, 100, 30, 5)] == [3000, 100, 30, 5]
    assert sweep_stride(17) == 17


def test_an_unknown_mode_is_refused_by_name(restore_mode: None) -> None:
    with pytest.raises(ValueError, match="'deep'"):
        set_sweep_mode("deep")


@settings(max_examples=50)
@given(st.integers())
def test_a_property_stating_fifty_examples(n: int) -> None:
    assert isinstance(n, int)


def test_collected_properties_run_at_this_sessions_size_without_a_deadline() -> None:
    applied = test_a_property_stating_fifty_examples._hypothesis_internal_use_settings
    assert applied.max_examples == sweep_size(50)
    assert applied.deadline is None
