"""Suite-wide settings: how deep the sweeps go, and the Hypothesis profile.

``--sweeps=quick`` (the default, ``make test``) runs every Hypothesis property
at an eighth of the ``max_examples`` its test states (at least 10) and the
sweeps sized through :mod:`tests.support.sweeps` likewise; ``--sweeps=full``
(``make test-full``, also run by CI) runs each at its stated size. Both modes
run the same tests.

The profile has no deadline: a per-example wall-clock limit measures the
machine, not the code, and fails at random on a shared or parallel run
(performance is measured in ``make bench``; growth in the linear-time tests,
by CPU time).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import settings

from tests.support.sweeps import MODES, full_sweeps, set_sweep_mode, sweep_size

settings.register_profile("utp", deadline=None)
settings.load_profile("utp")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--sweeps",
        choices=MODES,
        default="quick",
        help="quick: property and flood sweeps at an eighth of their size (make test); full: as written (make test-full)",
    )


def pytest_configure(config: pytest.Config) -> None:
    set_sweep_mode(config.getoption("--sweeps"))


def _hypothesis_test(item: pytest.Item) -> Any:
    test = getattr(item, "obj", None)
    test = getattr(test, "__func__", test)  # a method's function, where the settings live
    return test if getattr(test, "is_hypothesis_test", False) else None


@pytest.hookimpl(tryfirst=True)  # before -k/-m deselect: every collected property is sized alike
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """In quick mode, size each property's stated ``max_examples`` with :func:`sweep_size`.

    An explicit ``@settings(max_examples=N)`` outranks any profile, so the
    sizing is applied to the settings ``@given`` keeps on the test (read by
    Hypothesis when the test runs). Should a Hypothesis release keep them
    elsewhere, collection stops here rather than silently running full size.
    """
    if full_sweeps():
        return
    sized: set[int] = set()
    for item in items:
        test = _hypothesis_test(item)
        if test is None or id(test) in sized:
            continue
        sized.add(id(test))
        stated = getattr(test, "_hypothesis_internal_use_settings", None)
        if not isinstance(stated, settings):
            raise pytest.UsageError(
                f"{item.nodeid}: this Hypothesis version keeps a test's settings elsewhere; "
                "update tests/conftest.py or run with --sweeps=full"
            )
        test._hypothesis_internal_use_settings = settings(stated, max_examples=sweep_size(stated.max_examples))


def pytest_report_header(config: pytest.Config) -> str:
    return f"sweeps: {config.getoption('--sweeps')} (make test: quick, make test-full: full)"
