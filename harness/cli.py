"""``utp``: evaluate models, rebuild reports, tune formats, check scenario files.

Every failure a user can cause (a bad flag, a scenario typo, a cassette that
does not match) ends with one ``utp: error: ...`` line (or the list of
scenario problems) and exit code 2; a conformance failure of UTP itself exits
1; model quality alone never fails the command. ``UTP_DEBUG=1`` shows
tracebacks for the rare bug that deserves one.
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
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx

EXIT_OK, EXIT_CONFORMANCE, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
DEFAULT_OLLAMA = "http://127.0.0.1:11434"


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


def _optional(module: str, attribute: str) -> Any:
    """A function another part of the project provides, or None while it does not exist."""
    try:
        return getattr(importlib.import_module(module), attribute)
    except (ImportError, AttributeError):
        return None


def _delegate(module: str, attribute: str, argv: Sequence[str], what: str) -> int:
    target = _optional(module, attribute)
    if target is None:
        raise UsageError(f"`utp {what}` is not available in this installation ({module}.{attribute} is missing)")
    code = target(list(argv))
    return int(code or 0)


# --------------------------------------------------------------------------- eval


def _cassette_formats(cassette_dir: Path, models: Sequence[str]) -> list[str]:
    from harness.records import model_slug
    from utp.formats import PRESETS

    found: dict[str, None] = {}
    for model in models:
        base = cassette_dir / model_slug(model)
        for name in PRESETS:
            if (base / name).is_dir():
                found[name] = None
    return list(found)


def _cassette_repeats(cassette_dir: Path, models: Sequence[str]) -> int:
    """How many repeats the models' cassettes hold (``<scenario>.r<k>.json``)."""
    from harness.records import model_slug

    highest = 0
    for model in models:
        for path in (cassette_dir / model_slug(model)).rglob("*.r*.json"):
            suffix = path.name[: -len(".json")].rpartition(".r")[2]
            if suffix.isdigit():
                highest = max(highest, int(suffix) + 1)
    return max(highest, 1)


def cmd_eval(args: argparse.Namespace) -> int:
    from harness.progress import one_line, summary_table
    from harness.runner import DEFAULT_OPTIONS, RunnerConfig, recorded_models, resolve_formats, run_matrix
    from harness.scenarios import SCENARIOS_ROOT, load_suites

    if args.record and args.replay:
        raise UsageError("--record and --replay exclude each other (record talks to the model, replay never does)")
    models = split_models(args.model)
    cassette_dir = Path(args.cassette_dir)
    host = normalise_host(args.host or os.environ.get("OLLAMA_HOST"))
    mode = "record" if args.record else "replay" if args.replay else "live"
    only_recorded = False
    if not models:
        models = recorded_models(cassette_dir)
        if args.record:
            raise UsageError("--record needs a model: name one with --model (e.g. --model llama3.2:3b)")
        version = probe_ollama(host)
        if version:
            _say(f"Ollama {version} answers at {host}; name a model with --model (MODEL=...) to evaluate it live.")
        else:
            _say(f"Ollama at {host} not reachable: replay only.")
        if importlib.util.find_spec("llama_cpp") is not None:
            _say("llama-cpp-python is installed: `make eval MODEL=local:smollm2-135m` runs the embedded model live.")
        if not models:
            raise UsageError(f"no model named and no recorded cassettes under {cassette_dir}; name one with --model")
        _say(f"No model named: replaying recorded cassettes for: {', '.join(models)}")
        mode, only_recorded = "replay", True
    elif mode == "replay" and not args.formats and not args.suite:
        # "replay this model": exactly what its cassettes hold; named formats/suites must all be there
        only_recorded = True
    if args.formats:
        formats = resolve_formats(args.formats)
    elif only_recorded:
        formats = _cassette_formats(cassette_dir, models) or resolve_formats(None)
    else:
        formats = resolve_formats(None)
    if args.repeats is None:
        args.repeats = _cassette_repeats(cassette_dir, models) if only_recorded else 1
    if args.repeats < 1:
        raise UsageError(f"--repeats must be at least 1 (got {args.repeats})")
    if args.concurrency < 1:
        raise UsageError(f"--concurrency must be at least 1 (got {args.concurrency})")
    options = dict(DEFAULT_OPTIONS)
    options.update(parse_options(args.options))
    selectors = [s for value in args.suite or [] for s in value.split(",") if s.strip()]
    suites = load_suites(selectors or None, root=Path(args.scenarios_root) if args.scenarios_root else SCENARIOS_ROOT)
    if not suites:
        raise UsageError("no scenario suites selected")
    if args.limit is not None:
        if args.limit < 1:
            raise UsageError(f"--limit must be at least 1 (got {args.limit})")
        suites = [dataclasses.replace(suite, scenarios=suite.scenarios[: args.limit]) for suite in suites]
    config = RunnerConfig(
        models=models,
        formats=formats,
        suites=suites,
        repeats=args.repeats,
        mode=mode,
        host=host,
        results_dir=Path(args.results_dir),
        cassette_dir=cassette_dir,
        options=options,
        concurrency=args.concurrency,
        resume=args.resume,
        hardware=args.hardware,
        stream=not args.no_stream,
        only_recorded=only_recorded,
    )
    scenario_count = sum(len(s.scenarios) for s in suites)
    _say(
        f"Evaluating {len(models)} model(s) × {len(formats)} format(s) × {scenario_count} scenario(s) × "
        f"{args.repeats} repeat(s) [{mode}]",
        err=True,
    )
    try:
        result = run_matrix(config)
    except KeyboardInterrupt:
        _say(
            f"utp: interrupted; every finished run is saved in {args.results_dir}. "
            "Continue with the same command plus --resume.",
            err=True,
        )
        return EXIT_INTERRUPTED
    _say(summary_table(result.records))
    _say(one_line(result, args.results_dir), err=True)
    if result.stale_cassettes:
        _say(
            f"Skipped {result.stale_cassettes} cassette(s) recorded for an older version of their scenario; "
            "re-record them with --record.",
            err=True,
        )
    if only_recorded and result.planned == 0:
        _say("No cassette matches the selected formats and suites; nothing was replayed.", err=True)
    _finish_reports(args, models)
    if result.conformance_failures:
        _say("Conformance failures (UTP misbehaved, whatever the model did):", err=True)
        for message in result.conformance_failures[:20]:
            _say(f"  {message.splitlines()[0]}", err=True)
        if len(result.conformance_failures) > 20:
            _say(f"  ... and {len(result.conformance_failures) - 20} more", err=True)
        first = next((m for m in result.conformance_failures if "\n" in m), None)
        if first:
            _say(first, err=True)
    return result.exit_code


def _finish_reports(args: argparse.Namespace, models: Sequence[str]) -> None:
    """Rebuild reports and print the tuned recommendation, when those parts are installed."""
    if args.no_reports:
        return
    build_reports = _optional("harness.reporting", "build_reports")
    if build_reports is not None:
        try:
            written = build_reports(args.results_dir, args.reports_dir)
            index = next((p for p in written if Path(p).name == "index.md"), None)
            _say(f"Reports: {index or args.reports_dir}", err=True)
        except Exception as exc:  # a report bug must not hide the eval's result
            _say(f"utp: warning: reports not rebuilt: {exc}", err=True)
    recommendations = _optional("harness.tuning", "recommendations")
    if recommendations is not None:
        try:
            lines = recommendations([args.results_dir])
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
    families = _optional("utp.parsers", "family_names")
    if families is not None:
        _say("\nCall families: " + ", ".join(families()))
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
    "rescore": ("harness.rescore", "main", "re-score recorded runs from their cassettes with this UTP (no model runs)"),
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="utp", description="Unified Tool Protocol: evaluate and tune tool calling on local models.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    ev = sub.add_parser("eval", help="run the scenario matrix (live, recording or replaying cassettes)")
    ev.add_argument("--model", action="append", help="model spec (repeatable or comma list): NAME, ollama:NAME, openai:NAME, local:NAME (an embedded model), llamacpp:NAME (that model behind llama-server)")
    ev.add_argument("--host", help="server URL (default: $OLLAMA_HOST or http://127.0.0.1:11434)")
    ev.add_argument("--formats", help="comma list of format presets, or 'all' (default: all; see `utp formats`)")
    ev.add_argument("--suite", action="append", help="suite ids, files or directories (default: every suite under scenarios/ except examples)")
    ev.add_argument("--repeats", type=int, default=None,
                    help="runs per scenario and format (default: 1; when replaying what was recorded: as recorded)")
    ev.add_argument("--record", action="store_true", help="talk to the model and (re)write cassettes")
    ev.add_argument("--replay", action="store_true", help="answer from cassettes only; a missing one fails the run")
    ev.add_argument("--limit", type=int, default=None, help="only the first N scenarios of each suite (a quick look, or a budgeted recording)")
    ev.add_argument("--resume", action="store_true", help="skip runs already in the results (same scenario content)")
    ev.add_argument("--concurrency", type=int, default=1, help="runs in flight at once (default: 1)")
    ev.add_argument("--hardware", help="hardware label for provenance (default: from this machine)")
    ev.add_argument("--results-dir", default="reports/results", help="run records (default: %(default)s)")
    ev.add_argument("--reports-dir", default="reports", help="reports (default: %(default)s)")
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
    from harness.cassettes import CassetteError
    from harness.runner import RunnerError
    from harness.scenarios import ScenarioError

    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv and argv[0] in DELEGATED:
            module, attribute, _ = DELEGATED[argv[0]]
            return _delegate(module, attribute, argv[1:], argv[0])
        args = build_parser().parse_args(argv)
        return int(args.handler(args) or 0)
    except SystemExit as exc:  # argparse already printed usage and the error
        return int(exc.code) if isinstance(exc.code, int) else EXIT_USAGE
    except ScenarioError as exc:
        for message in exc.messages:
            _say(message, err=True)
        _say(f"utp: error: {len(exc.messages)} problem(s) in scenario files; nothing was run", err=True)
        return EXIT_USAGE
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
