"""``utp``: evaluate models, rebuild reports, tune formats, check scenario files.

Every failure a user can cause (a bad flag, a scenario typo) ends with one
``utp: error: ...`` line (or the list of scenario problems) and exit code 2.
``utp eval`` exits 0 only when every requested run completed or replayed; 1
for a conformance failure of UTP itself (an out-of-tier call executed, a
parser crash); 3 when runs errored (server, connection, timeout) or the eval
stopped early; 4 when cassettes are missing or corrupt (record them); model
quality alone never fails the command. ``UTP_DEBUG=1`` shows tracebacks for
the rare bug that deserves one.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import importlib.util
import json
import os
import sys
import traceback
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx

EXIT_OK, EXIT_CONFORMANCE, EXIT_USAGE, EXIT_ERRORED, EXIT_CASSETTES, EXIT_INTERRUPTED = 0, 1, 2, 3, 4, 130
DEFAULT_OLLAMA = "http://127.0.0.1:11434"
#: where recorded results and their reports live (history: only recording writes here)
RECORDED_RESULTS, RECORDED_REPORTS = Path("reports/results"), Path("reports")
#: where a replay writes (git-ignored): a replay is a view of the recordings, never new history
REPLAYED_RESULTS, REPLAYED_REPORTS = Path("reports/replayed/results"), Path("reports/replayed")


class UsageError(Exception):
    """A command line or configuration problem: exit 2 with one clear line."""


def _say(text: str = "", *, err: bool = False) -> None:
    print(text, file=sys.stderr if err else sys.stdout, flush=True)


# --------------------------------------------------------------------------- helpers


def split_models(values: Sequence[str] | None) -> list[str]:
    models: list[str] = []
    for value in values or []:
        models.extend(part.strip() for part in value.split(",") if part.strip())
    return list(dict.fromkeys(models))


def parse_options(pairs: Sequence[str] | None) -> dict[str, Any]:
    """``k=v`` pairs; values are read as JSON when they are JSON (``0.2``, ``true``, ``[1]``), else text."""
    options: dict[str, Any] = {}
    for pair in pairs or []:
        for item in pair.split(",") if "=" in pair and "[" not in pair else [pair]:
            key, sep, value = item.partition("=")
            if not sep or not key.strip():
                raise UsageError(f"--options expects key=value, got {item!r}")
            try:
                options[key.strip()] = json.loads(value)
            except ValueError:
                options[key.strip()] = value
    return options


def normalise_host(host: str | None) -> str:
    """Ollama's own rules (``host:port``, ``http://host:port``, ``0.0.0.0`` → loopback, port 11434)."""
    from utp.backends.http import resolve_ollama_host

    return resolve_ollama_host((host or "").strip() or DEFAULT_OLLAMA)


def probe_ollama(host: str, timeout_s: float = 1.0) -> str | None:
    """The server version when an Ollama answers at ``host`` within ``timeout_s``, else None."""
    try:
        response = httpx.get(f"{host}/api/version", timeout=timeout_s)
        if response.status_code == 200:
            return str(response.json().get("version") or "unknown")
    except (httpx.HTTPError, ValueError):
        return None
    return None


def _delegate(module: str, attribute: str, argv: Sequence[str]) -> int:
    """Hand a subcommand its argv; its module is part of the project, so a failed import is a bug, not a skip."""
    target = getattr(importlib.import_module(module), attribute)
    return int(target(list(argv)) or 0)


# --------------------------------------------------------------------------- eval


def cmd_eval(args: argparse.Namespace) -> int:
    from harness.runner import run_matrix
    from harness.runplan import (
        DEFAULT_OPTIONS,
        QUICK_FORMATS,
        RunnerConfig,
        recorded_formats,
        recorded_repeats,
        resolve_formats,
    )

    if args.record and args.replay:
        raise UsageError("--record and --replay exclude each other (record talks to the model, replay never does)")
    cassette_dir = Path(args.cassette_dir)
    # --host names every model's server; without it each backend reads its own variable
    # (OLLAMA_HOST for Ollama, OPENAI_BASE_URL for openai:)
    host = normalise_host(args.host) if args.host else None
    models, mode, only_recorded = _eval_models(args, cassette_dir, host)
    quick = not only_recorded and not args.formats and not args.suite
    if args.formats:
        formats = resolve_formats(args.formats)
    elif only_recorded:
        formats = recorded_formats(cassette_dir, models) or resolve_formats(None)
    else:
        formats = list(QUICK_FORMATS)
    if args.repeats is None:
        args.repeats = recorded_repeats(cassette_dir, models) if only_recorded else 1
    _check_eval_numbers(args)
    replaying = mode == "replay"
    args.results_dir = Path(args.results_dir or (REPLAYED_RESULTS if replaying else RECORDED_RESULTS))
    args.reports_dir = Path(args.reports_dir or (REPLAYED_REPORTS if replaying else RECORDED_REPORTS))
    options = dict(DEFAULT_OPTIONS)
    options.update(parse_options(args.options))
    suites = _eval_suites(args, quick)
    config = RunnerConfig(
        models=models, formats=formats, suites=suites, repeats=args.repeats, mode=mode, host=host,
        results_dir=Path(args.results_dir), cassette_dir=cassette_dir, options=options,
        concurrency=args.concurrency, resume=args.resume, hardware=args.hardware, stream=not args.no_stream,
        only_recorded=only_recorded,
        **({"response_timeout_s": args.timeout} if args.timeout is not None else {}),
    )
    if replaying and not args.resume:
        _forget_replays(args.results_dir, models)
    scenarios = sum(len(s.scenarios) for s in suites)
    size = "what the cassettes hold" if only_recorded else f"{len(models) * len(formats) * scenarios * args.repeats} runs"
    _say(f"Evaluating {len(models)} model(s) × {len(formats)} format(s) × {scenarios} scenario(s) × "
         f"{args.repeats} repeat(s): {size} [{mode}]", err=True)
    if quick:
        _say(f"The quick default: the core suite under {', '.join(formats)}. FORMATS=all SUITE=all asks for the "
             "full matrix (every suite under every preset: many times longer).", err=True)
    try:
        result = run_matrix(config)
    except KeyboardInterrupt:
        _say(
            f"utp: interrupted; every finished run is saved in {args.results_dir}. "
            "Continue with the same command plus --resume.",
            err=True,
        )
        return EXIT_INTERRUPTED
    if only_recorded and result.planned == 0:
        _say(f"utp: error: no cassettes for {', '.join(models)} under {cassette_dir} match the selected formats and "
             "suites, so nothing was replayed. Record them first: `make eval MODEL=<model> RECORD=1` "
             "(against a running server), or `make eval` with no MODEL to replay what is committed.", err=True)
        return EXIT_CASSETTES
    _show_eval_result(args, result, models, formats, suites)
    return result.exit_code


def _eval_models(args: argparse.Namespace, cassette_dir: Path, host: str | None) -> tuple[list[str], str, bool]:
    """(models, mode, only what the cassettes hold): the named models, or with none every recorded one, replayed."""
    from harness.runplan import recorded_models

    models = split_models(args.model)
    mode = "record" if args.record else "replay" if args.replay else "live"
    if models:
        # "replay this model": exactly what its cassettes hold; named formats/suites must all be there
        return models, mode, mode == "replay" and not args.formats and not args.suite
    models = recorded_models(cassette_dir)
    if args.record:
        raise UsageError("--record needs a model: name one with --model (e.g. --model llama3.2:3b)")
    ollama = host or normalise_host(os.environ.get("OLLAMA_HOST"))
    version = probe_ollama(ollama)
    if version:
        _say(f"Ollama {version} answers at {ollama}; name a model with --model (MODEL=...) to evaluate it live.")
    else:
        _say(f"Ollama at {ollama} not reachable: replay only.")
    if importlib.util.find_spec("llama_cpp") is not None:
        _say("llama-cpp-python is installed: `make eval MODEL=local:smollm2-135m` runs the embedded model live.")
    if not models:
        raise UsageError(f"no model named and no recorded cassettes under {cassette_dir}; name one with --model")
    _say(f"No model named: replaying recorded cassettes for: {', '.join(models)}")
    return models, "replay", True


def _check_eval_numbers(args: argparse.Namespace) -> None:
    if args.repeats < 1:
        raise UsageError(f"--repeats must be at least 1 (got {args.repeats})")
    if args.concurrency < 1:
        raise UsageError(f"--concurrency must be at least 1 (got {args.concurrency})")
    if args.timeout is not None and args.timeout <= 0:
        raise UsageError(f"--timeout must be a positive number of seconds (got {args.timeout})")
    if args.limit is not None and args.limit < 1:
        raise UsageError(f"--limit must be at least 1 (got {args.limit})")


def _eval_suites(args: argparse.Namespace, quick: bool) -> list[Any]:
    """The suites selected by --suite (``all``: every one; none named: the quick default), cut to --limit."""
    from harness.runplan import QUICK_SUITES
    from harness.scenarios import SCENARIOS_ROOT, load_suites

    selectors = [s for value in args.suite or [] for s in value.split(",") if s.strip()]
    if selectors == ["all"]:
        selectors = []
    elif quick:
        selectors = list(QUICK_SUITES)
    suites = load_suites(selectors or None, root=Path(args.scenarios_root) if args.scenarios_root else SCENARIOS_ROOT)
    if not suites:
        raise UsageError("no scenario suites selected")
    if args.limit is not None:
        suites = [dataclasses.replace(suite, scenarios=suite.scenarios[: args.limit]) for suite in suites]
    return suites


def _show_eval_result(args: argparse.Namespace, result: Any, models: Sequence[str], formats: Sequence[str],
                      suites: Sequence[Any]) -> None:
    """The summary table, what errored or was skipped, the reports, and any conformance failure."""
    from harness.progress import one_line, summary_table

    shown = _this_evaluation(args.results_dir, models, formats, suites)
    for line in errored_summary(shown):
        _say(line, err=True)
    _say(summary_table(shown))
    _say(one_line(result, args.results_dir), err=True)
    if result.stale_cassettes:
        _say(
            f"Skipped {result.stale_cassettes} cassette(s) recorded for an older version of their scenario; "
            "re-record them with --record.",
            err=True,
        )
    if result.stopped:
        _say(f"utp: {result.stopped}", err=True)
    _finish_reports(args, models, _scenarios_of(suites))
    _explain_cassette_errors(result)
    if result.conformance_failures:
        _say("Conformance failures (UTP misbehaved, whatever the model did):", err=True)
        for message in result.conformance_failures[:20]:
            _say(f"  {message.splitlines()[0]}", err=True)
        if len(result.conformance_failures) > 20:
            _say(f"  ... and {len(result.conformance_failures) - 20} more", err=True)
        first = next((m for m in result.conformance_failures if "\n" in m), None)
        if first:
            _say(first, err=True)


def _this_evaluation(results_dir: Path, models: Sequence[str], formats: Sequence[str], suites: Sequence[Any]) -> list[dict[str, Any]]:
    """Every record of what this command asked for, runs finished in an earlier session (--resume) included,
    with its scores derived for the summary table (records on disk hold none)."""
    from harness.records import read_records
    from harness.reporting.loading import ensure_scores

    wanted = _scenarios_of(suites)
    shown = [r for r in read_records(results_dir, models=models)
             if r.get("format") in formats and (r.get("suite"), r.get("scenario")) in wanted]
    return ensure_scores(shown, wanted)


def _scenarios_of(suites: Sequence[Any]) -> dict[tuple[str, str], Any]:
    """(suite id, scenario id) → scenario: what this evaluation's runs are judged against."""
    return {(suite.id, scenario.id): scenario for suite in suites for scenario in suite.scenarios}


def _forget_replays(results_dir: Path, models: Sequence[str]) -> None:
    """A replay starts from nothing: its records are a view of the cassettes, not history to append to."""
    from harness.records import results_path

    for model in models:
        results_path(results_dir, model).unlink(missing_ok=True)


def errored_summary(records: Sequence[dict[str, Any]]) -> list[str]:
    """The first lines of the screen summary when runs errored: how many, of which class, and what to do."""
    from harness.outcomes import ADVICE, ErrorClass, errored_by_class

    counts = errored_by_class(records)
    if not counts:
        return []
    total = sum(counts.values())
    lines = [f"utp eval: {total} of {len(records)} run(s) ERRORED and are not scored: "
             + ", ".join(f"{n} {c}" for c, n in counts.items())]
    lines += [f"  {c}: {ADVICE[ErrorClass(c)]}" for c in counts]
    return lines


#: the runner's note on a cassette recorded for an older version of its scenario
SCENARIO_CHANGED = "[the scenario changed since this cassette was recorded: re-record it with --record]"


def _explain_cassette_errors(result: Any) -> None:
    """Missing or corrupt cassettes, by file: a recording problem, never blamed on the library."""
    broken = result.cassette_errors()
    if not broken:
        return
    _say(f"utp: {len(broken)} run(s) could not be replayed from their cassettes (record them with RECORD=1; "
         "this is not a UTP failure):", err=True)
    for record in broken[:10]:
        error = record.get("error") or {}
        message = str(error.get("message") or record.get("outcome", {}).get("message") or record.get("scenario"))
        note = SCENARIO_CHANGED if SCENARIO_CHANGED in message else ""
        _say(f"  {error.get('kind', 'cassette_error')}: {message.splitlines()[0]}{' ' + note if note else ''}", err=True)
    if len(broken) > 10:
        _say(f"  ... and {len(broken) - 10} more", err=True)


def _finish_reports(args: argparse.Namespace, models: Sequence[str], scenarios: dict[tuple[str, str], Any]) -> None:
    """Rebuild the reports of this results folder and print a recommendation for each model just evaluated.

    The runs are judged against the project's suites and the ones this evaluation ran (wherever they live).
    """
    if args.no_reports:
        return
    from harness.metrics import UnjudgedRunsWarning
    from harness.reporting import build_reports
    from harness.tuning import recommendations

    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", UnjudgedRunsWarning)
            build_reports(args.results_dir, args.reports_dir, scenarios=scenarios)
        for warning in caught:
            _say(f"utp: warning: {warning.message}", err=True)
        _say(f"Reports: {Path(args.reports_dir) / 'index.html'}", err=True)
    except Exception as exc:  # a report problem must not hide the eval's result
        _say(f"utp: warning: reports not rebuilt: {exc}", err=True)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UnjudgedRunsWarning)  # said once, with the reports
            lines = recommendations([args.results_dir], models=models, scenarios=scenarios)
    except Exception as exc:
        _say(f"utp: warning: no tuned recommendation: {exc}", err=True)
        return
    for line in lines:
        _say(line)


# --------------------------------------------------------------------------- other commands


def cmd_formats(args: argparse.Namespace) -> int:
    from tabulate import tabulate

    from utp.formats import PRESETS

    rows = [
        [name, b.definition_format, b.call_parser, b.result_format, b.prompt_style, b.prompt_family or "–"]
        for name, b in PRESETS.items()
    ]
    _say(tabulate(rows, headers=["preset", "definitions", "parser", "results", "prompt", "family"]))
    from utp.parsers import family_names

    _say("\nCall families: " + ", ".join(family_names()))
    return EXIT_OK


def cmd_validate(args: argparse.Namespace) -> int:
    from harness.scenarios import SCENARIOS_ROOT, ScenarioError, load_suites, suite_files

    root = Path(args.scenarios_root) if args.scenarios_root else SCENARIOS_ROOT
    selectors = args.paths or [str(p) for p in suite_files(root)]
    try:
        suites = load_suites(selectors, root=root)
    except ScenarioError as exc:
        for message in exc.messages:
            _say(message, err=True)
        _say(f"utp validate: {len(exc.messages)} problem(s)", err=True)
        return EXIT_USAGE
    count = sum(len(s.scenarios) for s in suites)
    _say(f"ok: {len(suites)} suite(s), {count} scenario(s)")
    return EXIT_OK


# --------------------------------------------------------------------------- parser


#: subcommands other modules implement: name → (module, function(argv) -> exit code, help)
DELEGATED: dict[str, tuple[str, str, str]] = {
    "report": ("harness.reporting", "report_main", "rebuild reports from stored results (no model runs)"),
    "tune": ("harness.tuning", "tune_main", "pick the best format per model from stored results"),
    "import-bfcl": ("harness.bfcl", "main", "convert BFCL data into scenario files"),
    "rescore": ("harness.rescore", "main", "re-read recorded runs from their cassettes with this UTP (no model runs)"),
    "accuracy": ("harness.accuracy", "main", "measure how exactly UTP reads labelled model outputs (no model runs)"),
    "prose-check": ("harness.prose_check", "main", "list calls UTP finds in documents that hold none (false positives)"),
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="utp", description="Unified Tool Protocol: evaluate and tune tool calling on local models.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    ev = sub.add_parser("eval", help="run the scenario matrix (live, recording or replaying cassettes)")
    ev.add_argument("--model", action="append", help="model spec (repeatable or comma list): NAME, ollama:NAME, openai:NAME, local:NAME (an embedded model), llamacpp:NAME (that model behind llama-server)")
    ev.add_argument("--host", help="server URL for every model (default: $OLLAMA_HOST or http://127.0.0.1:11434; "
                                   "openai: models $OPENAI_BASE_URL)")
    ev.add_argument("--formats", help="comma list of format presets, or 'all' (default: a quick handful; see `utp formats`)")
    ev.add_argument("--suite", action="append",
                    help="suite ids, files or directories, or 'all' (default: core; with --formats: every suite)")
    ev.add_argument("--repeats", type=int, default=None,
                    help="runs per scenario and format (default: 1; when replaying what was recorded: as recorded)")
    ev.add_argument("--record", action="store_true", help="talk to the model and (re)write cassettes")
    ev.add_argument("--replay", action="store_true", help="answer from cassettes only; a missing one fails the run")
    ev.add_argument("--limit", type=int, default=None, help="only the first N scenarios of each suite (a quick look, or a budgeted recording)")
    ev.add_argument("--resume", action="store_true", help="skip runs already in the results (same scenario content)")
    ev.add_argument("--concurrency", type=int, default=1, help="runs in flight at once (default: 1)")
    ev.add_argument("--hardware", help="hardware label for provenance (default: from this machine)")
    ev.add_argument("--results-dir", default=None,
                    help=f"run records (default: {RECORDED_RESULTS}; a replay writes to {REPLAYED_RESULTS}, git-ignored)")
    ev.add_argument("--reports-dir", default=None,
                    help=f"reports (default: {RECORDED_REPORTS}; a replay writes to {REPLAYED_REPORTS}, git-ignored)")
    ev.add_argument("--timeout", type=float, default=None,
                    help="seconds one model response may take, headers and whole body (default: 300)")
    ev.add_argument("--cassette-dir", default="scenarios/cassettes", help="cassettes (default: %(default)s)")
    ev.add_argument("--scenarios-root", help=argparse.SUPPRESS)
    ev.add_argument("--options", action="append", help="model options k=v (repeatable or comma list), e.g. num_ctx=8192")
    ev.add_argument("--no-stream", action="store_true", help="ask for non-streamed responses")
    ev.add_argument("--no-reports", action="store_true", help="do not rebuild reports afterwards")
    ev.set_defaults(handler=cmd_eval)

    for name, (_, _, text) in DELEGATED.items():
        sub.add_parser(name, help=text, add_help=False)  # listed in help; main() hands them their argv

    fm = sub.add_parser("formats", help="list format presets and call families")
    fm.set_defaults(handler=cmd_formats)

    va = sub.add_parser("validate", help="validate scenario files and print every problem")
    va.add_argument("paths", nargs="*", help="files, directories or suite ids (default: every suite)")
    va.add_argument("--scenarios-root", help=argparse.SUPPRESS)
    va.set_defaults(handler=cmd_validate)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from harness.cassette_file import CassetteError
    from harness.runplan import HostUnreachable, RunnerError
    from harness.scenarios import ScenarioError

    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv and argv[0] in DELEGATED:
            module, attribute, _ = DELEGATED[argv[0]]
            return _delegate(module, attribute, argv[1:])
        args = build_parser().parse_args(argv)
        return int(args.handler(args) or 0)
    except SystemExit as exc:  # argparse already printed usage and the error
        return int(exc.code) if isinstance(exc.code, int) else EXIT_USAGE
    except ScenarioError as exc:
        for message in exc.messages:
            _say(message, err=True)
        _say(f"utp: error: {len(exc.messages)} problem(s) in scenario files; nothing was run", err=True)
        return EXIT_USAGE
    except HostUnreachable as exc:
        _say(f"utp: error: {exc}", err=True)
        return EXIT_ERRORED
    except (UsageError, RunnerError, CassetteError) as exc:
        _say(f"utp: error: {exc}", err=True)
        return EXIT_USAGE
    except KeyboardInterrupt:
        _say("utp: interrupted", err=True)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # `utp formats | head`: the reader left, nothing is wrong
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK
    except Exception as exc:
        if os.environ.get("UTP_DEBUG"):
            traceback.print_exc()
        else:
            _say(f"utp: error: {type(exc).__name__}: {exc} (set UTP_DEBUG=1 for the traceback)", err=True)
        return EXIT_CONFORMANCE


if __name__ == "__main__":
    sys.exit(main())
