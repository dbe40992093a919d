"""What a metric is, and the registry that collects them.

A metric is one class in one module: how it scores a run (``score``: the
run's own figures, from the shared :class:`~harness.metrics.judge.RunJudgement`),
how it aggregates a group of runs (``summarise``: counts, the rate and its
interval), the report columns that show it and the words that define them.
``@register`` adds it to :data:`REGISTRY`; ``score_run``, the summaries, the
report schema's format rows and the tables' columns are all read from there,
so a new metric is one new file (and its test).

A metric's ``position`` orders the summary fields (and so the CSV and JSON
columns); a column's ``rank`` places it in a table. Neither depends on the
order modules happen to be imported in.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from harness.metrics.judge import RunJudgement


# --------------------------------------------------------------------------- what a table cell shows


@dataclass(frozen=True)
class CountedRate:
    """``passed/total (rate [low–high])``: a rate never stands without its count."""

    passed: str
    total: str
    low: str | None = None
    high: str | None = None


@dataclass(frozen=True)
class Figure:
    """A measured number with ``digits`` decimals (``missing`` when not measured; ``None``: a dash)."""

    key: str
    digits: int = 1
    missing: str | None = None


@dataclass(frozen=True)
class Count:
    """A whole number as it is."""

    key: str


@dataclass(frozen=True)
class Text:
    """Anything else: a function of the row (kept free of the reporting package)."""

    render: Callable[[Mapping[str, Any]], str]


Cell = CountedRate | Figure | Count | Text


@dataclass(frozen=True)
class Column:
    """One column of a report table: its header, what each cell shows, and what it means."""

    header: str
    cell: Cell
    definition: str
    #: ``formats`` (the per-format table) or ``safety`` (tier enforcement and conformance)
    table: str = "formats"
    #: place in its table (lower is further left); ties keep registration order
    rank: int = 1000
    #: also a column of the index's all-models table
    in_index: bool = False
    #: what the index's cell shows, when it is shorter than the format table's
    index_cell: Cell | None = None


# --------------------------------------------------------------------------- groups of runs


@dataclass(frozen=True)
class Group:
    """The runs one summary row is about (one model under one format, usually).

    ``scores`` are the per-run figures of the runs that are results (errored
    runs left out), in the order of ``records``; ``errored_by_class`` and
    ``unsupported`` count what was left out or refused.
    """

    records: Sequence[Mapping[str, Any]]
    scores: Sequence[Mapping[str, Any]]
    errored_by_class: Mapping[str, int] = field(default_factory=dict)
    unsupported: int = 0

    def total(self, key: str) -> int:
        """Σ of a per-run count over the group."""
        return sum(int(s.get(key) or 0) for s in self.scores)

    def runs_with(self, key: str) -> int:
        """Runs where a per-run figure is truthy."""
        return sum(1 for s in self.scores if s.get(key))

    def values(self, key: str) -> Iterator[Any]:
        return (s.get(key) for s in self.scores)


# --------------------------------------------------------------------------- the metric contract


class Metric:
    """Base of every metric; subclasses set the class attributes and override ``score``/``summarise``."""

    #: unique name (the module's name, by convention)
    name: ClassVar[str]
    #: bump when ``score`` or ``summarise`` changes what it computes
    version: ClassVar[int] = 1
    #: where its summary fields go among the others (CSV and JSON column order); new metrics go last
    position: ClassVar[int] = 1000
    #: what it measures and why, in a sentence or two (docs and ``utp`` help read it)
    description: ClassVar[str]
    #: per-run fields ``score`` returns, in order
    run_fields: ClassVar[tuple[str, ...]] = ()
    #: summary field → JSON Schema (the report schema's format rows are built from these), in order
    summary_fields: ClassVar[Mapping[str, Mapping[str, Any]]] = {}
    columns: ClassVar[tuple[Column, ...]] = ()

    def score(self, run: "RunJudgement") -> dict[str, Any]:
        """This metric's figures for one run (JSON-safe values, keys = ``run_fields``)."""
        return {}

    def summarise(self, group: Group) -> dict[str, Any]:
        """This metric's figures for a group of runs (keys = ``summary_fields``)."""
        return {}


#: name → metric, ordered by ``position`` (then name)
REGISTRY: dict[str, Metric] = {}


def register(cls: type[Metric]) -> type[Metric]:
    """Class decorator: add a metric to :data:`REGISTRY` (a second metric with the same name is an error)."""
    if cls.name in REGISTRY and type(REGISTRY[cls.name]) is not cls:
        raise ValueError(f"metric {cls.name!r} is registered twice ({type(REGISTRY[cls.name]).__name__}, {cls.__name__})")
    claimed = {f: m.name for m in REGISTRY.values() if m.name != cls.name for f in (*m.run_fields, *m.summary_fields)}
    for name in (*cls.run_fields, *cls.summary_fields):
        if name in claimed:
            raise ValueError(f"metric {cls.name!r} field {name!r} is already metric {claimed[name]!r}'s")
    REGISTRY[cls.name] = cls()
    ordered = sorted(REGISTRY.values(), key=lambda m: (m.position, m.name))
    REGISTRY.clear()
    REGISTRY.update((m.name, m) for m in ordered)
    return cls


def unregister(name: str) -> None:
    """Remove a metric (for tests that register one of their own)."""
    REGISTRY.pop(name, None)


def metrics() -> list[Metric]:
    return list(REGISTRY.values())


def columns(table: str = "formats") -> list[Column]:
    """A table's metric columns, left to right."""
    found = [c for m in REGISTRY.values() for c in m.columns if c.table == table]
    return sorted(found, key=lambda c: c.rank)


def metrics_version() -> tuple[tuple[str, int], ...]:
    """Every metric's name and version: what a cache of scores is keyed by."""
    return tuple((m.name, m.version) for m in REGISTRY.values())


__all__ = [
    "Cell",
    "Column",
    "Count",
    "CountedRate",
    "Figure",
    "Group",
    "Metric",
    "REGISTRY",
    "Text",
    "columns",
    "metrics",
    "metrics_version",
    "register",
    "unregister",
]
