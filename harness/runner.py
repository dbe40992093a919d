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
from harness.progress import Progress
from harness.records import RECORD_SCHEMA, RunKey, append_record, completed_keys, is_done, model_slug
from harness.scenarios import Scenario, Suite
from utp.formats import PRESETS, FormatBundle, get_preset

#: sampling fixed so a run can be repeated (and its cassette replayed) exactly
DEFAULT_OPTIONS: dict[str, Any] = {"temperature": 0, "seed": 42, "num_ctx": 4096, "num_predict": 256}
PROVENANCE_CASSETTE = "provenance.json"
MODES = ("live", "record", "replay")
#: cassette mode per run mode (``None``: no cassette at all)
CASSETTE_MODES: dict[str, str | None] = {"live": None, "record": "all", "replay": "none"}


class RunnerError(Exception):
    """A configuration problem found before any run starts."""


#: provenance failures that would fail every run of a model the same way: stop early, say why
FATAL_PROVENANCE_ERRORS = {
    "connect_error": "is the server running? (set --host / OLLAMA_HOST, or replay with --replay)",
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


@dataclass(frozen=True)
class PresetFormat:
    """What ToolLoop needs from a negotiation, built straight from a preset (no tuning)."""

    bundle: FormatBundle
    definition_adapter: Any
    result_adapter: Any
    parser_factory: Callable[[Any], Any]
    fallbacks: tuple[FormatBundle, ...] = ()
    source: str = "explicit"


def preset_format(name: str) -> PresetFormat:
    from utp.adapters import get_definition_adapter, get_result_adapter
    from utp.parsers import get_parser

    bundle = get_preset(name)
    return PresetFormat(
        bundle=bundle,
        definition_adapter=get_definition_adapter(
            bundle.definition_format, family=bundle.prompt_family, few_shot=bundle.prompt_style == "few_shot"
        ),
        result_adapter=get_result_adapter(bundle.result_format, family=bundle.prompt_family),
        parser_factory=lambda tools: get_parser(bundle.call_parser, tools),
    )


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


@dataclass
class EvalResult:
    records: list[dict[str, Any]]
    skipped: int
    planned: int
    conformance_failures: list[str]
    elapsed_s: float
    missing_cassettes: int = 0
    stale_cassettes: int = 0

    @property
    def exit_code(self) -> int:
        """CI: conformance failures fail the build; model quality alone never does."""
        return 1 if self.conformance_failures else 0


# --------------------------------------------------------------------------- backends


def _inner_transport(config: RunnerConfig, model: str) -> httpx.AsyncBaseTransport:
    """The transport that really reaches the model (under a recording cassette)."""
    if config.live_transport_factory is not None:
        transport = config.live_transport_factory(model)
        if transport is not None:
            return transport
    return _managed_transport(config, model) or httpx.AsyncHTTPTransport()


def _managed_transport(config: RunnerConfig, model: str) -> httpx.AsyncBaseTransport | None:
    """A model UTP runs itself (embedded, or a llama-server it starts) with this run's threads and context."""
    from utp.backends import managed_transport

    return managed_transport(model, n_threads=config.options.get("num_thread"), n_ctx=config.options.get("num_ctx"))


def _make_backend(config: RunnerConfig, model: str, transport: httpx.AsyncBaseTransport | None) -> tuple[Any, str]:
    """The backend for ``model``; a cassette transport replaces the network (or the embedded model)."""
    from utp.backends import make_backend

    return make_backend(model, host=config.host, transport=transport)


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
    )


class _Transports:
    """Cassette transports for one model, per the run mode."""

    def __init__(self, config: RunnerConfig, model: str):
        self.config = config
        self.model = model
        self.mode = CASSETTE_MODES[config.mode]
        self._inner: httpx.AsyncBaseTransport | None = None
        self.header: dict[str, Any] = {}

    def inner(self) -> httpx.AsyncBaseTransport:
        if self._inner is None:
            self._inner = _inner_transport(self.config, self.model)
        return self._inner

    def for_path(self, path: Path, **header_extra: Any) -> CassetteTransport | None:
        if self.mode is None:
            return None
        inner = None if self.mode == "none" else self.inner()
        return CassetteTransport(path, self.mode, inner=inner, header={**self.header, **header_extra})

    def live(self) -> httpx.AsyncBaseTransport | None:
        """Live mode: a test-supplied transport, else None (the backend connects, or loads the embedded model)."""
        if self.config.live_transport_factory is not None:
            return self.config.live_transport_factory(self.model)  # one per backend: a backend closes its own
        return _managed_transport(self.config, self.model)

    async def aclose(self) -> None:
        if self._inner is not None:
            await self._inner.aclose()


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
        specs = [
            RunSpec(model, fmt, scenario, repeat)
            for model in self.config.models
            for fmt in self.config.formats
            for suite in self.config.suites
            for scenario in suite.scenarios
            for repeat in range(self.config.repeats)
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
        records: list[dict[str, Any]] = []
        failures: list[str] = []
        semaphore = asyncio.Semaphore(self.config.concurrency)
        try:
            for model in self.config.models:
                model_runs = [s for s in todo if s.model == model]
                if not model_runs:
                    continue
                transports = _Transports(self.config, model)
                try:
                    prov = await self._provenance(model, transports)
                    transports.header = _header(model, prov, prov.get("backend"))

                    async def one(spec: RunSpec) -> None:
                        async with semaphore:
                            record = await self._run_one(spec, transports, prov)
                        async with self._write_lock:
                            append_record(self.config.results_dir, record)
                            records.append(record)
                            failures.extend(_conformance_messages(record))
                            progress.advance(record)

                    await asyncio.gather(*(one(s) for s in model_runs))
                finally:
                    await transports.aclose()
        finally:
            progress.close()
        missing = sum(1 for r in records if (r.get("error") or {}).get("kind") == "missing_cassette")
        return EvalResult(records, skipped, len(planned), failures, time.perf_counter() - started, missing, self.stale)

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
        unreachable = [k for k in prov.get("error_kinds", []) if k in FATAL_PROVENANCE_ERRORS]
        if unreachable and transports.mode != "none":
            message = prov["errors"][-1]  # a backend that already says which `make` target fixes it gets no second hint
            raise RunnerError(f"{model}: {message}" + ("" if "`make " in message else f"; {FATAL_PROVENANCE_ERRORS[unreachable[0]]}"))
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
            if record["error"] is None or transport.mode != "none":
                transport.finish()
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
            preset_format(spec.format),
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
        scorer = _scorer()
        if scorer is not None:
            try:
                record["scores"] = scorer(record, scenario)
            except Exception as exc:  # a scoring bug must not lose the run; `utp report` rescores
                record["scores"] = {"scoring_error": f"{type(exc).__name__}: {exc}"}
        return record


def _scorer() -> Callable[[dict[str, Any], Scenario], dict[str, Any]] | None:
    try:
        from harness.scoring import score_run
    except ImportError:
        return None
    return score_run


# --------------------------------------------------------------------------- conformance


_CONFORMANCE_ERRORS = ("missing_cassette", "cassette_mismatch", "cassette_error")


def _conformance_messages(record: dict[str, Any]) -> list[str]:
    """What makes CI fail: UTP itself misbehaved, whatever the model did."""
    where = f"{record['model']} {record['format']} {record['suite']}/{record['scenario']} r{record['repeat']}"
    out: list[str] = []
    scores = record.get("scores") or {}
    for failure in scores.get("conformance_failures") or []:
        out.append(f"{where}: {failure.get('kind')}: {failure.get('detail')}")
    error = record.get("error") or {}
    if error.get("kind") in _CONFORMANCE_ERRORS and not any("cassette" in m for m in out):
        out.append(f"{where}: {error['kind']}: {error.get('message')}")
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
                if call.get("decision") == "executed" and tier > allowed:
                    found.append(f"tier violation executed: {call.get('name')} in turn {t_index}")
    return found


def run_matrix(config: RunnerConfig, progress: Progress | None = None) -> EvalResult:
    """Synchronous entry point (the CLI's)."""
    return asyncio.run(Runner(config, progress).run())


def planned_suites(suites: Iterable[Suite]) -> int:
    return sum(len(s.scenarios) for s in suites)
