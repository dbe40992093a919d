"""The evaluation matrix: model × format × scenario × repeat, live or from cassettes.

Every run gets a fresh registry (fixtures hold state), a fresh backend over its
own cassette transport, the real :class:`utp.loop.ToolLoop`, and the fixed
sampling options that make a run repeatable. A run that fails (a server that
refuses tools, a cassette without the request) is recorded as failed and the
matrix goes on; a run that finished is on disk before the next one starts, so
an interrupted evaluation resumes where it stopped.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from harness import provenance as provenance_mod
from harness.cassettes import Cassette, CassetteError, CassetteMismatch, CassetteMissing, CassetteTransport, new_header
from harness.fixtures import build_registry
from harness.outcomes import ADVICE, ERROR_CLASSES, HOST_FATAL_KINDS, ErrorClass, Outcome, classify
from harness.progress import Progress
from harness.records import RECORD_SCHEMA, RunKey, append_record, completed_keys, is_done, model_slug
from utp.backends.deadline import DEFAULT_CONNECT_TIMEOUT_S, DEFAULT_RESPONSE_DEADLINE_S, SharedPool
from harness.scenarios import Scenario, Suite
from utp.formats import PRESETS, get_preset
from utp.types import Decision
from utp.negotiator import negotiated_for

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


# --------------------------------------------------------------------------- backends


def _is_managed(model: str) -> bool:
    """Is this a model UTP runs itself (``local:``, ``llamacpp:``), with no host of the user's?"""
    from utp.backends import MANAGED_TRANSPORTS, split_spec

    return split_spec(model)[0] in MANAGED_TRANSPORTS


def _inner_transport(config: RunnerConfig, model: str, pool: SharedPool) -> httpx.AsyncBaseTransport:
    """The transport that really reaches the model (under a recording cassette)."""
    if config.live_transport_factory is not None:
        transport = config.live_transport_factory(model)
        if transport is not None:
            return transport
    return _managed_transport(config, model) or pool.lend()


def _managed_transport(config: RunnerConfig, model: str) -> httpx.AsyncBaseTransport | None:
    """A model UTP runs itself (embedded, or a llama-server it starts) with this run's threads and context."""
    from utp.backends import managed_transport

    return managed_transport(model, n_threads=config.options.get("num_thread"), n_ctx=config.options.get("num_ctx"))


def _make_backend(config: RunnerConfig, model: str, transport: httpx.AsyncBaseTransport | None) -> tuple[Any, str]:
    """The backend for ``model``; a cassette transport replaces the network (or the embedded model).

    The client's connect timeout is short (nobody there is an answer in
    seconds); the whole response is bounded by the deadline transport.
    """
    from utp.backends import make_backend

    timeout = httpx.Timeout(config.response_timeout_s, connect=config.connect_timeout_s)
    return make_backend(model, host=config.host, transport=transport, timeout=timeout)


def _header(model: str, prov: dict[str, Any], backend_kind: str | None) -> dict[str, Any]:
    info = prov.get("model") or {}
    engine = info.get("engine") or backend_kind
    version = info.get("engine_version") or prov.get("server_version")
    return new_header(
        model=info.get("name") or model,
        engine=f"{engine} {version}".strip() if engine or version else None,
        model_digest=info.get("digest"),
        recorded_by=f"utp {provenance_mod.utp_version()} harness",
        model_spec=model,
        backend=backend_kind,
        **({"host": prov["host"]} if prov.get("host") else {}),
    )


class _Transports:
    """Cassette transports for one model, per the run mode, over one connection pool."""

    def __init__(self, config: RunnerConfig, model: str):
        self.config = config
        self.model = model
        self.mode = CASSETTE_MODES[config.mode]
        self.pool = SharedPool(config.response_timeout_s, config.connect_timeout_s)
        self._inner: httpx.AsyncBaseTransport | None = None
        self.header: dict[str, Any] = {}

    def inner(self) -> httpx.AsyncBaseTransport:
        if self._inner is None:
            self._inner = _inner_transport(self.config, self.model, self.pool)
        return self._inner

    def for_path(self, path: Path, **header_extra: Any) -> CassetteTransport | None:
        if self.mode is None:
            return None
        inner = None if self.mode == "none" else self.inner()
        return CassetteTransport(path, self.mode, inner=inner, header={**self.header, **header_extra})

    def live(self) -> httpx.AsyncBaseTransport | None:
        """Live mode: a test-supplied transport, the shared pool (HTTP servers), or None (the embedded model)."""
        if self.config.live_transport_factory is not None:
            return self.config.live_transport_factory(self.model)  # one per backend: a backend closes its own
        return _managed_transport(self.config, self.model) or self.pool.lend()

    async def aclose(self) -> None:
        if self._inner is not None:
            await self._inner.aclose()
        await self.pool.aclose()


# --------------------------------------------------------------------------- one run


def _strip_unmeasured(turns: list[dict[str, Any]]) -> None:
    """Replay cannot measure time: client-side timings become None ("not measured")."""
    for turn in turns:
        for round_ in turn.get("rounds", []):
            counters = round_.get("counters")
            if isinstance(counters, dict):
                counters["wall_s"] = None
                counters["ttft_s"] = None
            round_["client_wall_s"] = None
            for call in round_.get("calls", []):
                result = call.get("result")
                if isinstance(result, dict):
                    result["duration_s"] = None


def _slim_round(round_: dict[str, Any]) -> dict[str, Any]:
    """Drop the full request (it repeats the whole history every round); the cassette keeps it."""
    round_.pop("request", None)
    return round_


def _error(kind: str, message: str) -> dict[str, str]:
    return {"kind": kind, "message": message}


def _cassette_error_kind(exc: BaseException) -> str:
    if isinstance(exc, CassetteMissing):
        return "missing_cassette"
    if isinstance(exc, CassetteMismatch):
        return "cassette_mismatch"
    return "cassette_error"


class Runner:
    def __init__(self, config: RunnerConfig, progress: Progress | None = None):
        self.config = config
        #: cassettes skipped by ``only_recorded`` because their scenario changed since recording
        self.stale = 0
        self.progress = progress
        self._write_lock = asyncio.Lock()

    # -- planning ------------------------------------------------------------------

    def plan(self) -> list[RunSpec]:
        # scenario-major: every format gets the same scenarios first, so a long recording stopped at
        # any point (hours on 2 cores) still compares formats on equal ground
        specs = [
            RunSpec(model, fmt, scenario, repeat)
            for model in self.config.models
            for repeat in range(self.config.repeats)
            for suite in self.config.suites
            for scenario in suite.scenarios
            for fmt in self.config.formats
        ]
        if self.config.only_recorded:
            recorded = [s for s in specs if self._cassette(s).exists()]
            specs = [s for s in recorded if cassette_scenario_hash(self._cassette(s)) in (None, s.scenario.scenario_hash)]
            self.stale = len(recorded) - len(specs)
        return specs

    def _cassette(self, spec: RunSpec) -> Path:
        return cassette_path(self.config.cassette_dir, spec.model, spec.format, spec.scenario.suite, spec.scenario.id, spec.repeat)

    # -- running ---------------------------------------------------------------------

    async def run(self) -> EvalResult:
        started = time.perf_counter()
        check_models(self.config.models)
        planned = self.plan()
        done = completed_keys(self.config.results_dir, self.config.models) if self.config.resume else {}
        todo = [s for s in planned if not is_done(done, s.key, s.scenario.scenario_hash)]
        skipped = len(planned) - len(todo)
        progress = self.progress or Progress(total=len(todo), enabled=self.config.show_progress)
        progress.announce(skipped, self.config.mode)
        records: list[dict[str, Any]] = []
        failures: list[str] = []
        stopped: str | None = None
        semaphore = asyncio.Semaphore(self.config.concurrency)
        watcher = asyncio.ensure_future(_watch_stalls(progress))
        try:
            for model in self.config.models:
                model_runs = [s for s in todo if s.model == model]
                if not model_runs:
                    continue
                transports = _Transports(self.config, model)
                streak = FailureStreak(self.config.stop_after_failures)
                try:
                    prov = await self._provenance(model, transports)
                    transports.header = _header(model, prov, prov.get("backend"))

                    async def one(spec: RunSpec) -> None:
                        async with semaphore:
                            progress.started(spec.key)
                            record = await self._run_one(spec, transports, prov)
                        async with self._write_lock:
                            append_record(self.config.results_dir, record)
                            records.append(record)
                            failures.extend(_conformance_messages(record))
                            progress.advance(record)
                            streak.note(record)

                    await _gather_or_stop(one(s) for s in model_runs)
                except EvalStopped as exc:
                    stopped = str(exc)
                    break
                finally:
                    await transports.aclose()
        finally:
            watcher.cancel()
            progress.close()
        missing = sum(1 for r in records if (r.get("error") or {}).get("kind") == "missing_cassette")
        return EvalResult(records, skipped, len(planned), failures, time.perf_counter() - started, missing, self.stale,
                          stopped)

    async def _provenance(self, model: str, transports: _Transports) -> dict[str, Any]:
        path = Path(self.config.cassette_dir) / model_slug(model) / PROVENANCE_CASSETTE
        cassette_ref = str(Path(self.config.cassette_dir) / model_slug(model)) if transports.mode else None
        options = dict(self.config.options)
        hardware = self.config.hardware or provenance_mod.hardware_label()
        transport: Any = None
        try:
            transport = transports.for_path(path) if transports.mode else transports.live()
        except CassetteError as exc:
            return {"backend": None, "errors": [str(exc)], "model": {"name": model}, "options": options,
                    "hardware": hardware, "cassette": cassette_ref, "utp_version": provenance_mod.utp_version()}
        backend, name = _make_backend(self.config, model, transport)
        try:
            prov = await provenance_mod.collect(backend, name, spec=model, options=options, hardware=hardware,
                                                cassette_dir=cassette_ref)
        except CassetteMismatch as exc:
            prov = {"backend": getattr(backend, "kind", None), "errors": [str(exc)], "model": {"name": name},
                    "options": options, "hardware": hardware, "cassette": cassette_ref,
                    "utp_version": provenance_mod.utp_version()}
        finally:
            await backend.aclose()
        if not _is_managed(model):
            # a replay's host answers nothing: the cassette says where the recording was made
            replayed_from = transport.header.get("host") if isinstance(transport, CassetteTransport) else None
            prov["host"] = replayed_from if transports.mode == "none" else getattr(backend, "base_url", None) or self.config.host
        unreachable = [k for k in prov.get("error_kinds", []) if k in FATAL_PROVENANCE_ERRORS]
        if unreachable and transports.mode != "none":
            message = prov["errors"][-1]  # a backend that already says which `make` target fixes it gets no second hint
            hint = "" if "`make " in message else f"; {FATAL_PROVENANCE_ERRORS[unreachable[0]]}"
            raise HostUnreachable(f"{model}: {message}{hint}")
        if isinstance(transport, CassetteTransport):
            if transport.cassette is not None and transport.mode != "none":
                transport.cassette.header.update(_header(model, prov, prov.get("backend")))
            transport.finish()
            prov["recorded_at"] = transport.header.get("recorded_at")
            prov["synthetic"] = bool(transport.header.get("synthetic"))
        else:
            prov["recorded_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
            prov["synthetic"] = False
        return prov

    async def _run_one(self, spec: RunSpec, transports: _Transports, prov: dict[str, Any]) -> dict[str, Any]:
        scenario = spec.scenario
        record: dict[str, Any] = {
            "schema": RECORD_SCHEMA,
            "model": spec.model,
            "format": spec.format,
            "suite": scenario.suite,
            "scenario": scenario.id,
            "repeat": spec.repeat,
            "scenario_hash": scenario.scenario_hash,
            "mode": self.config.mode,
            "synthetic": False,
            "bundle": get_preset(spec.format).to_dict(),
            "tools": [{"name": t.tool.name, "tier": t.tool.tier.name.lower()} for t in scenario.tools],
            "provenance": {k: v for k, v in prov.items() if k != "errors" or v},
            "turns": [],
            "error": None,
            "scores": {},
        }
        path = self._cassette(spec)
        transport: Any = None
        try:
            transport = (
                transports.for_path(path, format=spec.format, suite=scenario.suite, scenario=scenario.id,
                                    repeat=spec.repeat, scenario_hash=scenario.scenario_hash)
                if transports.mode else transports.live()
            )
        except CassetteError as exc:
            record["error"] = _error("cassette_error", str(exc))
            return self._score(record, scenario)
        options, stream = self.config.options, self.config.stream
        if isinstance(transport, CassetteTransport):
            record["provenance"]["cassette"] = str(path)
            if transport.mode == "none" and transport.cassette is not None:
                record["synthetic"] = bool(transport.header.get("synthetic"))
                options, stream = recorded_request_settings(transport.cassette, options, stream)
                record["provenance"]["options"] = options
        backend = None
        try:
            backend, model_name = _make_backend(self.config, spec.model, transport)
            await self._conversation(record, spec, backend, model_name, options, stream)
        except (CassetteMismatch, CassetteError) as exc:
            message = str(exc)
            if isinstance(exc, CassetteMismatch) and cassette_scenario_hash(path) not in (None, scenario.scenario_hash):
                message += " [the scenario changed since this cassette was recorded: re-record it with --record]"
            record["error"] = _error(_cassette_error_kind(exc), message)
        except Exception as exc:  # one broken run must not stop the matrix; it is recorded
            record["error"] = _error("harness_error", f"{type(exc).__name__}: {exc}")
        finally:
            if backend is not None:
                await backend.aclose()
        if isinstance(transport, CassetteTransport):
            if transport.failures and record["error"] is None:
                failure = transport.failures[0]
                record["error"] = _error(_cassette_error_kind(failure), str(failure))
        outcome = classify(record)
        record["outcome"] = outcome.to_dict()
        if isinstance(transport, CassetteTransport) and transport.mode != "none" and outcome.is_result:
            transport.finish()  # atomic; a run that errored never replaces what was recorded before
        if self.config.mode == "replay":
            _strip_unmeasured(record["turns"])
        return self._score(record, scenario)

    async def _conversation(
        self, record: dict[str, Any], spec: RunSpec, backend: Any, model_name: str, options: dict[str, Any], stream: bool
    ) -> None:
        from utp.loop import LoopLimits, ToolLoop

        scenario = spec.scenario
        registry = build_registry(scenario)
        loop = ToolLoop(
            backend,
            registry,
            negotiated_for(get_preset(spec.format)),  # the one assembly of a format, as agents get it
            model_name,
            options=options,
            limits=LoopLimits(max_rounds=scenario.max_rounds, call_timeout_s=self.config.call_timeout_s),
            system_prompt=scenario.system or "",
            stream=stream,
        )
        history: list[dict[str, Any]] = []
        for turn in scenario.turns:
            result = await loop.run(turn.user, history=history)
            data = result.to_dict()
            record["turns"].append(
                {
                    "user": turn.user,
                    "tier_start": data["tier_start"],
                    "tier_after_intent": data["tier_after_intent"],
                    "rounds": [_slim_round(r) for r in data["rounds"]],
                    "final_answer": data["final_answer"],
                    "termination": data["termination"],
                    "error": data["error"],
                    "format_switches": data["format_switches"],
                }
            )
            history = list(result.messages)
            if data["termination"] == "backend_error":
                break  # the server refused; later turns would only repeat the refusal

    def _score(self, record: dict[str, Any], scenario: Scenario) -> dict[str, Any]:
        """Scores for the screen and the exit code; reports and tuning score again from the records."""
        from harness.scoring import score_run

        if classify(record).outcome is Outcome.ERRORED:
            record["scores"] = {}
            return record
        try:
            record["scores"] = score_run(record, scenario)
        except Exception as exc:  # a scoring bug must not lose the run; reports score again
            record["scores"] = {"scoring_error": f"{type(exc).__name__}: {exc}"}
        return record


# --------------------------------------------------------------------------- conformance


def _conformance_messages(record: dict[str, Any]) -> list[str]:
    """What makes CI fail: UTP itself misbehaved, whatever the model did."""
    where = f"{record['model']} {record['format']} {record['suite']}/{record['scenario']} r{record['repeat']}"
    out: list[str] = []
    scores = record.get("scores") or {}
    for failure in scores.get("conformance_failures") or []:
        out.append(f"{where}: {failure.get('kind')}: {failure.get('detail')}")
    if "conformance_failures" not in scores:
        out.extend(f"{where}: {m}" for m in executed_violations(record))
    return out


def executed_violations(record: dict[str, Any]) -> list[str]:
    """Out-of-tier calls that ran; computed from decisions when no scorer is installed."""
    tiers = {"crawl": 0, "walk": 1, "run": 2}
    tool_tiers = {t["name"]: t.get("tier", "crawl") for t in (record.get("tools") or [])}
    found = []
    for t_index, turn in enumerate(record.get("turns") or []):
        allowed = tiers.get(str(turn.get("tier_after_intent")), 0)
        for round_ in turn.get("rounds") or []:
            for call in round_.get("calls") or []:
                tier = tiers.get(str(tool_tiers.get(call.get("name"), "crawl")), 0)
                if call.get("decision") == Decision.EXECUTED and tier > allowed:
                    found.append(f"tier violation executed: {call.get('name')} in turn {t_index}")
    return found


async def _watch_stalls(progress: Progress, every_s: float = 1.0) -> None:
    """Ticks the progress display so a request that hangs is shown as waiting, not as silence."""
    while True:
        await asyncio.sleep(every_s)
        progress.tick()


async def _gather_or_stop(runs: Iterable[Any]) -> None:
    """Run coroutines (at most ``concurrency`` at a time via their semaphore); the first EvalStopped cancels the rest."""
    tasks = [asyncio.ensure_future(r) for r in runs]
    try:
        await asyncio.gather(*tasks)
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


def run_matrix(config: RunnerConfig, progress: Progress | None = None) -> EvalResult:
    """Synchronous entry point (the CLI's)."""
    return asyncio.run(Runner(config, progress).run())


def planned_suites(suites: Iterable[Suite]) -> int:
    return sum(len(s.scenarios) for s in suites)
