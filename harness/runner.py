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
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import httpx

from harness import provenance as provenance_mod
from harness.cassettes import CassetteTransport
from harness.cassette_file import CassetteError, CassetteMismatch, CassetteMissing, new_header
from harness.fixtures import build_registry
from harness.metrics import judge
from harness.outcomes import Outcome, classify
from harness.progress import Progress
from harness.records import RECORD_SCHEMA, append_record, completed_keys, is_done, model_slug
from harness.runrecord import RunRecord
from harness.scenario_model import Scenario, Suite
from utp.backends.deadline import SharedPool
from utp.formats import get_preset
from utp.negotiator import negotiated_for
from utp.types import Decision
from harness.runplan import (
    PROVENANCE_CASSETTE,
    CASSETTE_MODES,
    HostUnreachable,
    FATAL_PROVENANCE_ERRORS,
    check_models,
    cassette_path,
    recorded_request_settings,
    cassette_scenario_hash,
    RunnerConfig,
    RunSpec,
    EvalResult,
    EvalStopped,
    FailureStreak,
)

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
                            # written as the typed record reads it: a run that does not fit RunRecord is a
                            # harness bug caught here, not a line that breaks every later report
                            record = RunRecord.from_dict(record, where=f"{spec.key}").to_dict()
                        async with self._write_lock:
                            append_record(self.config.results_dir, record)
                            records.append(record)
                            failures.extend(conformance_messages(record, spec.scenario))
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
        scenarios = {(s.scenario.suite, s.scenario.id): s.scenario for s in planned}
        return EvalResult(records, skipped, len(planned), failures, time.perf_counter() - started, missing, self.stale,
                          stopped, scenarios)

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
            return record
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
        return record

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


# --------------------------------------------------------------------------- conformance


def conformance_messages(record: dict[str, Any], scenario: Scenario | None = None) -> list[str]:
    """What makes CI fail: UTP itself misbehaved, whatever the model did (computed, never stored).

    A finished run is read against its scenario by the metrics' own reading
    (:func:`harness.metrics.judge`): an out-of-tier call executed, a parser
    that raised. An errored run, or one that cannot be read, is checked for
    executed out-of-tier calls alone.
    """
    where = f"{record['model']} {record['format']} {record['suite']}/{record['scenario']} r{record['repeat']}"
    if classify(record).outcome is not Outcome.ERRORED:
        try:
            failures = judge(record, scenario).conformance_failures
        except Exception:  # noqa: BLE001 - a reading bug must not lose the run; reports read it again
            pass
        else:
            return [f"{where}: {failure.get('kind')}: {failure.get('detail')}" for failure in failures]
    return [f"{where}: {m}" for m in executed_violations(record)]


def executed_violations(record: dict[str, Any]) -> list[str]:
    """Out-of-tier calls that ran, read from the record alone (an errored run, or one that cannot be judged).

    The same reading as scoring's (:func:`harness.metrics.judge`), with the
    tools' tiers from the record instead of the scenario.
    """
    run = judge(record, None, triggers=())
    return [f"tier violation executed: {c.call.name} in turn {c.turn}"
            for c in run.calls if c.call.decision == Decision.EXECUTED and c.above_tier]


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
