"""Tuned profiles: the format measured best for each model, with the evidence.

``utp tune`` writes them from evaluation results; the negotiator reads them
when the configuration leaves the format to ``auto``. One TOML file may hold
several models::

    [models."qwen3:8b"]
    preset = "native"
    definition_format = "ollama"
    call_parser = "auto"
    result_format = "ollama"
    prompt_style = "none"
    fallbacks = ["prompt-hermes", "fewshot-json"]   # the next best presets, in measured order

    [models."qwen3:8b".evidence]
    runs = 40
    task_success = 0.925
    ci_low = 0.80
    ci_high = 0.97
    ...

The evidence travels with the choice so a reader can see how sure it is (an
interval overlapping the runner-up's means the pick is not settled).
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

import tomli_w

from utp.config import ConfigError, KeyLines, normalize_call_parser, normalize_family
from utp.fileio import write_text_atomic
from utp.formats import PRESETS, FormatBundle, get_preset

#: evidence keys and the type each must have (ints are accepted where floats are expected);
#: ``ci_low``/``ci_high`` bound ``call_task_success``, the figure the choice was made on
EVIDENCE_TYPES: dict[str, type] = {
    "runs": int,
    "call_tasks": int,
    "call_passed": int,
    "call_task_success": float,
    "restraint_tasks": int,
    "restraint_passed": int,
    "calls_meant": int,
    "task_success": float,
    "ci_low": float,
    "ci_high": float,
    "parse_success": float,
    "decode_tps": float,
    "runner_up": str,
    "margin": float,
    "overlaps_runner_up": bool,
}

_BUNDLE_KEYS = ("definition_format", "call_parser", "result_format", "prompt_style", "prompt_family")
_MODEL_KEYS = ("preset", *_BUNDLE_KEYS, "fallbacks", "evidence")


class TunedProfileError(ConfigError):
    """A tuned-profile file that cannot be used; located like a config error."""


@dataclass(frozen=True)
class TunedProfile:
    model: str
    bundle: FormatBundle
    preset: str | None = None
    evidence: dict[str, Any] = field(default_factory=dict)
    #: presets to fall back to at runtime, best first
    fallbacks: tuple[str, ...] = ()
    #: second-best preset (also stored as ``evidence.runner_up``)
    runner_up: str | None = None

    def __post_init__(self) -> None:
        # runner_up lives in the file's evidence table; keep both views equal
        # so a profile compares equal to itself after a save and load.
        object.__setattr__(self, "fallbacks", tuple(self.fallbacks))
        evidence = dict(self.evidence)
        if self.runner_up is None and isinstance(evidence.get("runner_up"), str):
            object.__setattr__(self, "runner_up", evidence["runner_up"])
        elif self.runner_up is not None:
            evidence["runner_up"] = self.runner_up
        object.__setattr__(self, "evidence", evidence)

    def fallback_bundles(self) -> list[FormatBundle]:
        return [get_preset(name) for name in self.fallbacks]

    def to_table(self) -> dict[str, Any]:
        """The ``[models."MODEL"]`` table (TOML has no null: unset values are left out)."""
        table: dict[str, Any] = {}
        if self.preset:
            table["preset"] = self.preset
        table.update({k: v for k, v in self.bundle.to_dict().items() if v is not None})
        table["fallbacks"] = list(self.fallbacks)
        evidence = {k: v for k, v in self.evidence.items() if v is not None}
        if evidence:
            table["evidence"] = evidence
        return table


def load_tuned(path: str | os.PathLike[str]) -> dict[str, TunedProfile]:
    """Profiles from one TOML file, or from every ``*.toml`` in a directory.

    A model tuned in two files of one directory is an error: which one wins
    would depend on file names, and the user should decide.
    """
    root = Path(path)
    if root.is_dir():
        merged: dict[str, TunedProfile] = {}
        origin: dict[str, Path] = {}
        for file in sorted(root.glob("*.toml")):
            for model, profile in _load_file(file).items():
                if model in merged:
                    raise TunedProfileError(
                        f"model {model!r} is also tuned in {origin[model]}", file=str(file), key=f'models."{model}"'
                    )
                merged[model] = profile
                origin[model] = file
        return merged
    if not root.exists():
        raise TunedProfileError("file not found", file=str(root))
    return _load_file(root)


def save_tuned(
    profiles: Mapping[str, TunedProfile] | Iterable[TunedProfile],
    path: str | os.PathLike[str],
    *,
    merge: bool = False,
    drop: Iterable[str] = (),
) -> Path:
    """Write profiles atomically; with ``merge=True`` keep the file's other models, except those in ``drop``.

    ``drop`` names models whose evidence was measured again and no longer
    earns a profile: the old choice must not outlive the evidence it rested on.
    """
    items = list(profiles.values()) if isinstance(profiles, Mapping) else list(profiles)
    target = Path(path)
    existing = _load_file(target) if merge and target.exists() else {}
    for model in drop:
        existing.pop(model, None)
    existing.update({p.model: p for p in items})
    data = {"models": {model: existing[model].to_table() for model in sorted(existing)}}
    text = "# Tuned tool-calling formats, written by `utp tune`. Edit with care.\n\n" + tomli_w.dumps(data)
    write_text_atomic(target, text)
    return target




#: how `utp eval` qualifies a model spec by backend ("local:smollm2-135m")
BACKEND_PREFIXES = ("local:", "ollama:", "openai:")


def _without_backend(name: str) -> str:
    for prefix in BACKEND_PREFIXES:
        if name.startswith(prefix):
            return name[len(prefix):]
    return name


def find_tuned(tuned: Mapping[str, TunedProfile], model: str) -> TunedProfile | None:
    """The profile for ``model``: exact name, then without its ``:tag``, then as ``:latest``.

    Profiles written by ``utp tune`` are keyed by the eval's model spec
    (``local:smollm2-135m``, ``ollama:qwen3``), while a backend reports the bare
    model name, so a backend prefix on either side is ignored.
    """
    by_name = dict(tuned)
    for key, profile in tuned.items():
        by_name.setdefault(_without_backend(key), profile)
    model = _without_backend(model)
    candidates = [model]
    base, _, tag = model.partition(":")
    if tag:
        candidates.append(base)
    else:
        candidates.append(f"{model}:latest")
    for name in candidates:
        if name in by_name:
            return by_name[name]
    return None


def render_llmc_snippet(profile_name: str, tuned: TunedProfile) -> str:
    """The ``[profiles.NAME.tools]`` block that pins this choice in ``llmc.toml``."""
    tools = {k: v for k, v in tuned.bundle.to_dict().items() if v is not None}
    body = tomli_w.dumps({"profiles": {profile_name: {"tools": tools}}})
    return "\n".join(_snippet_comments(tuned)) + "\n" + body


def _snippet_comments(tuned: TunedProfile) -> list[str]:
    ev = tuned.evidence
    lines = [f"# Tuned for {tuned.model} by `utp tune`" + (f" (preset {tuned.preset})" if tuned.preset else "")]
    if isinstance(ev.get("call_passed"), int) and isinstance(ev.get("call_tasks"), int):
        summary = f"# call tasks passed {ev['call_passed']}/{ev['call_tasks']}"
        if isinstance(ev.get("ci_low"), (int, float)) and isinstance(ev.get("ci_high"), (int, float)):
            summary += f" (95% interval {ev['ci_low']:.3f} to {ev['ci_high']:.3f})"
        if isinstance(ev.get("restraint_passed"), int) and isinstance(ev.get("restraint_tasks"), int):
            summary += f"; restraint {ev['restraint_passed']}/{ev['restraint_tasks']}"
        lines.append(summary)
    elif isinstance(ev.get("task_success"), (int, float)):
        summary = f"# task success {ev['task_success']:.3f}"
        if isinstance(ev.get("ci_low"), (int, float)) and isinstance(ev.get("ci_high"), (int, float)):
            summary += f" (95% interval {ev['ci_low']:.3f} to {ev['ci_high']:.3f})"
        if isinstance(ev.get("runs"), int):
            summary += f" over {ev['runs']} runs"
        lines.append(summary)
    if tuned.runner_up:
        runner = f"# runner-up {tuned.runner_up}"
        if isinstance(ev.get("margin"), (int, float)):
            runner += f", margin {ev['margin']:.3f}"
        if ev.get("overlaps_runner_up"):
            runner += "; the intervals overlap, so the choice is not settled"
        lines.append(runner)
    return lines


def _load_file(file: Path) -> dict[str, TunedProfile]:
    source = str(file)
    try:
        text = file.read_text(encoding="utf-8")
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise TunedProfileError(f"invalid TOML: {exc}", file=source) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise TunedProfileError(f"cannot read: {exc}", file=source) from None
    reader = _TableReader(source, KeyLines(text))
    for key in data:
        if key != "models":
            reader.fail((key,), "unknown top-level key; a tuned-profile file holds only [models.\"MODEL\"] tables")
    models = data.get("models", {})
    if not isinstance(models, dict):
        reader.fail(("models",), "must be a table of [models.\"MODEL\"] tables")
    return {model: reader.profile(model, table) for model, table in models.items()}


class _TableReader:
    def __init__(self, source: str, lines: KeyLines) -> None:
        self.source = source
        self.lines = lines

    def fail(self, path: tuple[str, ...], message: str) -> NoReturn:
        raise TunedProfileError(message, file=self.source, line=self.lines.line_of(path), key=".".join(path))

    def profile(self, model: str, table: Any) -> TunedProfile:
        base = ("models", model)
        if not isinstance(table, dict):
            self.fail(base, "must be a table")
        for key in table:
            if key not in _MODEL_KEYS:
                self.fail(base + (key,), f"unknown key; allowed: {', '.join(_MODEL_KEYS)}")
        preset = table.get("preset")
        if preset is not None and preset not in PRESETS:
            self.fail(base + ("preset",), f"unknown preset {preset!r}; known: {', '.join(PRESETS)}")
        bundle = self.bundle(base, table, preset)
        fallbacks = table.get("fallbacks", [])
        if not isinstance(fallbacks, list) or not all(isinstance(f, str) for f in fallbacks):
            self.fail(base + ("fallbacks",), "must be a list of preset names")
        for name in fallbacks:
            if name not in PRESETS:
                self.fail(base + ("fallbacks",), f"unknown preset {name!r}; known: {', '.join(PRESETS)}")
        evidence = self.evidence(base + ("evidence",), table.get("evidence", {}))
        return TunedProfile(model=model, bundle=bundle, preset=preset, evidence=evidence, fallbacks=tuple(fallbacks))

    def bundle(self, base: tuple[str, ...], table: dict[str, Any], preset: str | None) -> FormatBundle:
        given = {k: table[k] for k in _BUNDLE_KEYS if k in table}
        if not given and preset is None:
            self.fail(base, "needs a preset or the format fields (definition_format, call_parser, ...)")
        for key, value in given.items():
            if not isinstance(value, str):
                self.fail(base + (key,), f"must be a string, got {value!r}")
        try:
            if "call_parser" in given:
                given["call_parser"] = normalize_call_parser(given["call_parser"])
        except ValueError as exc:
            self.fail(base + ("call_parser",), str(exc))
        try:
            if "prompt_family" in given:
                given["prompt_family"] = normalize_family(given["prompt_family"])
        except ValueError as exc:
            self.fail(base + ("prompt_family",), str(exc))
        start = get_preset(preset).to_dict() if preset else {}
        try:
            return FormatBundle.from_dict({**start, **given})
        except ValueError as exc:
            key = next((k for k in _BUNDLE_KEYS if k in str(exc) and k in given), None)
            self.fail(base + ((key,) if key else ()), str(exc))

    def evidence(self, base: tuple[str, ...], table: Any) -> dict[str, Any]:
        if not isinstance(table, dict):
            self.fail(base, "must be a table")
        out: dict[str, Any] = {}
        for key, value in table.items():
            expected = EVIDENCE_TYPES.get(key)
            if expected is None:
                self.fail(base + (key,), f"unknown evidence key; allowed: {', '.join(EVIDENCE_TYPES)}")
            elif expected is float and isinstance(value, int) and not isinstance(value, bool):
                value = float(value)
            elif (expected is int and isinstance(value, bool)) or not isinstance(value, expected):
                self.fail(base + (key,), f"must be {expected.__name__}, got {value!r}")
            out[key] = value
        return out
