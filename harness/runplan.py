"""What an evaluation is asked to do and what it gives back: the run plan, its settings and its result.

The matrix is model × format × scenario × repeat; this module holds the
pieces that describe it without running anything (which models and formats,
where each run's cassette lives and what was recorded there, the settings of
a run, the exit codes and the streak of failures that stops a dead host), so
the CLI and tests can plan and read results without the runner's machinery.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from harness.cassette_file import Cassette
from harness.outcomes import ADVICE, ERROR_CLASSES, HOST_FATAL_KINDS, ErrorClass, Outcome, classify
from harness.records import RunKey, model_slug
from utp.backends.deadline import DEFAULT_CONNECT_TIMEOUT_S, DEFAULT_RESPONSE_DEADLINE_S
from harness.scenario_model import Scenario, Suite
from utp.formats import PRESETS


#: sampling fixed so a run can be repeated (and its cassette replayed) exactly
DEFAULT_OPTIONS: dict[str, Any] = {"temperature": 0, "seed": 42, "num_ctx": 4096, "num_predict": 256}
PROVENANCE_CASSETTE = "provenance.json"
#: ``make eval MODEL=...`` with no FORMATS/SUITE: presets that separate models well (the server's own tool
#: parser, the two families local models are trained on, JSON and Python calls, taught by example or not)
QUICK_FORMATS = ("native", "prompt-hermes", "fewshot-hermes", "fewshot-json", "prompt-pythonic")
QUICK_SUITES = ("core",)
MODES = ("live", "record", "replay")
#: cassette mode per run mode (``None``: no cassette at all)
CASSETTE_MODES: dict[str, str | None] = {"live": None, "record": "all", "replay": "none"}


class RunnerError(Exception):
    """A configuration problem found before any run starts."""


class HostUnreachable(RunnerError):
    """The server (or embedded engine) cannot be used at all: nothing was run."""


#: provenance failures that would fail every run of a model the same way: stop early, say why
FATAL_PROVENANCE_ERRORS = {
    "connect_error": "is the server running? (set --host, or OLLAMA_HOST / OPENAI_BASE_URL for openai: models; or replay with --replay)",
    "model_not_found": "pull the model first (e.g. `ollama pull NAME`) or check its name",
    "not_installed": "install the embedded backend with `make local-models`",
}


def check_models(models: Iterable[str]) -> None:
    """Reject specs no backend accepts before anything runs."""
    from utp.backends import split_spec
    from utp.backends.models import get_local_model

    for model in models:
        try:
            scheme, name = split_spec(model)
            if scheme in ("local", "llamacpp"):
                get_local_model(name)
        except Exception as exc:  # ValueError or BackendError, both mean "bad --model"
            raise RunnerError(f"--model {model!r}: {exc}") from None


def canonical_model(spec: str) -> str:
    """``ollama:NAME`` and ``NAME`` are the same model; other prefixes are kept."""
    spec = spec.strip()
    return spec[len("ollama:"):] if spec.startswith("ollama:") else spec


def resolve_formats(text: str | Sequence[str] | None) -> list[str]:
    """``all`` → every preset; else a comma list (or list) of preset names, checked."""
    if text is None:
        return list(PRESETS)
    names = [n.strip() for n in (text.split(",") if isinstance(text, str) else text) if n.strip()]
    if not names or names == ["all"]:
        return list(PRESETS)
    unknown = [n for n in names if n not in PRESETS]
    if unknown:
        raise RunnerError(f"unknown format preset(s): {', '.join(unknown)}; known: {', '.join(PRESETS)} (or 'all')")
    return list(dict.fromkeys(names))


def cassette_path(cassette_dir: str | Path, model: str, format_name: str, suite: str, scenario: str, repeat: int) -> Path:
    return Path(cassette_dir) / model_slug(model) / format_name / Path(*suite.split("/")) / f"{model_slug(scenario)}.r{repeat}.json"


def recorded_models(cassette_dir: str | Path) -> list[str]:
    """Model specs with cassettes (their provenance cassette names the spec)."""
    found = []
    for provenance in sorted(Path(cassette_dir).glob(f"*/{PROVENANCE_CASSETTE}")):
        try:
            header = json.loads(provenance.read_text(encoding="utf-8")).get("header", {})
        except (OSError, ValueError, AttributeError):
            continue
        spec = header.get("model_spec") or header.get("model")
        if isinstance(spec, str) and spec:
            found.append(spec)
    return found


def recorded_formats(cassette_dir: str | Path, models: Sequence[str]) -> list[str]:
    """Presets the models have cassettes for, in preset order."""
    found: dict[str, None] = {}
    for model in models:
        base = Path(cassette_dir) / model_slug(model)
        for name in PRESETS:
            if (base / name).is_dir():
                found[name] = None
    return list(found)


def recorded_repeats(cassette_dir: str | Path, models: Sequence[str]) -> int:
    """How many repeats the models' cassettes hold (``<scenario>.r<k>.json``)."""
    highest = 0
    for model in models:
        for path in (Path(cassette_dir) / model_slug(model)).rglob("*.r*.json"):
            suffix = path.name[: -len(".json")].rpartition(".r")[2]
            if suffix.isdigit():
                highest = max(highest, int(suffix) + 1)
    return max(highest, 1)


def recorded_request_settings(
    cassette: Cassette, default_options: dict[str, Any], default_stream: bool
) -> tuple[dict[str, Any], bool]:
    """The model options and streaming mode a run was recorded with.

    A replay must send byte-identical requests, so it reuses what the
    recording sent (``--options num_predict=128`` and the like) instead of
    today's defaults; a cassette without a chat request keeps the defaults.
    """
    for exchange in cassette.exchanges:
        body = (exchange.get("request") or {}).get("body")
        if isinstance(body, dict) and "messages" in body:
            options = body.get("options")
            stream = body.get("stream")
            return (dict(options) if isinstance(options, dict) else dict(default_options),
                    stream if isinstance(stream, bool) else default_stream)
    return dict(default_options), default_stream


def cassette_scenario_hash(path: Path) -> str | None:
    """The scenario hash a run cassette was recorded for (None: unknown, e.g. hand-made)."""
    try:
        header = json.loads(path.read_text(encoding="utf-8")).get("header", {})
    except (OSError, ValueError, AttributeError):
        return None
    value = header.get("scenario_hash") if isinstance(header, dict) else None
    return value if isinstance(value, str) else None


@dataclass
class RunnerConfig:
    models: list[str]
    formats: list[str]
    suites: list[Suite]
    repeats: int = 1
    mode: str = "live"  # live | record | replay
    host: str | None = None
    results_dir: Path = Path("reports/results")
    cassette_dir: Path = Path("scenarios/cassettes")
    options: dict[str, Any] = field(default_factory=lambda: dict(DEFAULT_OPTIONS))
    concurrency: int = 1
    resume: bool = False
    hardware: str | None = None
    stream: bool = True
    #: replay only runs that have a cassette (``utp eval`` with no model named)
    only_recorded: bool = False
    call_timeout_s: float = 30.0
    #: one model response, headers and whole body, must finish within this (a trickle ends too)
    response_timeout_s: float = DEFAULT_RESPONSE_DEADLINE_S
    connect_timeout_s: float = DEFAULT_CONNECT_TIMEOUT_S
    #: this many runs in a row failing the same host-wide way (refused, timed out, model missing) stop the eval
    stop_after_failures: int = 3
    #: tests swap the live transport (a scripted server's, or one that must never be used)
    live_transport_factory: Callable[[str], httpx.AsyncBaseTransport | None] | None = None
    show_progress: bool | None = None

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise RunnerError(f"unknown mode {self.mode!r}; expected one of {', '.join(MODES)}")
        if self.repeats < 1:
            raise RunnerError(f"--repeats must be at least 1 (got {self.repeats})")
        if self.concurrency < 1:
            raise RunnerError(f"--concurrency must be at least 1 (got {self.concurrency})")
        if self.response_timeout_s <= 0:
            raise RunnerError(f"--timeout must be positive (got {self.response_timeout_s})")
        self.models = [canonical_model(m) for m in self.models]
        self.results_dir = Path(self.results_dir)
        self.cassette_dir = Path(self.cassette_dir)


@dataclass(frozen=True)
class RunSpec:
    model: str
    format: str
    scenario: Scenario
    repeat: int

    @property
    def key(self) -> RunKey:
        return RunKey(self.model, self.format, self.scenario.suite, self.scenario.id, self.repeat)


#: exit codes a CI job can act on (documented in the README)
EXIT_OK = 0
EXIT_CONFORMANCE = 1  # UTP itself misbehaved: an out-of-tier call executed, a parser crashed
EXIT_ERRORED = 3  # runs errored (server, connection, timeout, harness): no result for them
EXIT_CASSETTES = 4  # replay: cassettes missing or corrupt (record them; not a UTP failure)


@dataclass
class EvalResult:
    records: list[dict[str, Any]]
    skipped: int
    planned: int
    conformance_failures: list[str]
    elapsed_s: float
    missing_cassettes: int = 0
    stale_cassettes: int = 0
    #: why the eval stopped before running everything (None: it did not)
    stopped: str | None = None
    #: (suite id, scenario id) → the scenario each run answered (to derive its scores)
    scenarios: dict[tuple[str, str], Scenario] = field(default_factory=dict)

    def scored(self) -> list[dict[str, Any]]:
        """The runs' records with their scores derived (:func:`harness.metrics.ensure_scores`); records hold none."""
        from harness.metrics import ensure_scores

        return ensure_scores(self.records, self.scenarios)

    def errored(self) -> list[dict[str, Any]]:
        return [r for r in self.records if classify(r).outcome is Outcome.ERRORED]

    def cassette_errors(self) -> list[dict[str, Any]]:
        return [r for r in self.errored() if classify(r).error_class is ErrorClass.CASSETTE]

    @property
    def exit_code(self) -> int:
        """0 only when every requested run completed (or replayed); model quality alone never fails."""
        if self.conformance_failures:
            return EXIT_CONFORMANCE
        errored = self.errored()
        if errored and len(self.cassette_errors()) == len(errored):
            return EXIT_CASSETTES
        if errored or self.stopped:
            return EXIT_ERRORED
        return EXIT_OK


class EvalStopped(Exception):
    """Several runs in a row failed the same host-wide way: more runs would only repeat it."""


class FailureStreak:
    """Counts consecutive host-wide failures (refused, timed out, model missing) for one model."""

    def __init__(self, limit: int):
        self.limit = limit
        self.count = 0
        self.last = ""

    def note(self, record: dict[str, Any]) -> None:
        outcome = classify(record)
        if outcome.outcome is Outcome.ERRORED and outcome.kind in HOST_FATAL_KINDS:
            self.count += 1
            self.last = outcome.message
            if self.count >= self.limit:
                raise EvalStopped(self.explain(record, outcome.kind or "error"))
        else:
            self.count = 0

    def explain(self, record: dict[str, Any], kind: str) -> str:
        host = (record.get("provenance") or {}).get("host") or "the server"
        klass = ERROR_CLASSES.get(kind, ErrorClass.SERVER)
        advice = "pull the model first or check its name" if kind == "model_not_found" else ADVICE[klass]
        return (f"stopped after {self.count} runs in a row failed with {kind} on {record['model']} at {host}; "
                f"last error: {self.last.splitlines()[0] if self.last else kind}. {advice}. Every finished run is "
                "kept: continue with the same command plus --resume.")
