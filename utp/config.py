"""Profiles from TOML: which backend, which model, and how to speak tools to it.

The file is the one the seeds describe (``llmc.toml``)::

    [profiles.boxxie]
    provider = "ollama"
    model = "qwen3-next-80b-tools"
    url = "http://athena:11434"

    [profiles.boxxie.tools]
    definition_format = "openai"
    call_parser = "auto"      # "auto" | "native" | "openai" | a call family ("hermes", "anthropic_xml", "qwen_xml", ...)
    result_format = "openai"

Validation is strict because a typo here fails silently later: a misspelt
``call_parer`` would simply never take effect. Every error names the file, the
line and the key. ``tomllib`` gives no positions, so lines come from a scan of
the text for table headers and ``key =`` assignments. Other top-level tables
belong to the host application sharing the file and are left alone.
"""

from __future__ import annotations

import difflib
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, NoReturn

from utp.formats import CONSTRAINED_DEFINITIONS, DEFINITION_FORMATS, PROMPT_STYLES, RESULT_FORMATS, FormatBundle
from utp.parsers import AUTO, NATIVE, UnknownFormatError, family_names, get_family

PROVIDERS = ("ollama", "openai", "anthropic", "embedded")

#: call_parser spellings from the seeds, mapped to registry names
CALL_PARSER_ALIASES = {"openai": NATIVE, "ollama": NATIVE, "anthropic": "anthropic_xml", "qwen_xml": "hermes"}

#: the native definition format each provider speaks (embedded serves Ollama's API)
NATIVE_FORMAT = {"ollama": "ollama", "embedded": "ollama", "openai": "openai", "anthropic": "anthropic"}

_PROFILE_KEYS = ("provider", "model", "url", "options", "tools")
TOOLS_KEYS = ("definition_format", "call_parser", "result_format", "prompt_style", "prompt_family")


class ConfigError(ValueError):
    """A configuration problem, located: ``file:line: key: what is wrong``."""

    def __init__(self, message: str, *, file: str | None = None, line: int | None = None, key: str | None = None):
        self.message = message
        self.file = file
        self.line = line
        self.key = key
        super().__init__(str(self))

    def __str__(self) -> str:
        where = self.file or "<config>"
        if self.line is not None:
            where += f":{self.line}"
        return f"{where}: {self.key}: {self.message}" if self.key else f"{where}: {self.message}"


@dataclass(frozen=True)
class ToolsSettings:
    """A profile's ``tools`` table: each field ``None`` (not set) or a validated value.

    ``"auto"`` in any field leaves that choice to negotiation (tuned profile,
    model overrides, provider default).
    """

    definition_format: str | None = None
    call_parser: str | None = None
    result_format: str | None = None
    prompt_style: str | None = None
    prompt_family: str | None = None

    def explicit(self) -> dict[str, str]:
        """The fields the user actually decided (set, and not ``"auto"``)."""
        return {f.name: v for f in fields(self) if (v := getattr(self, f.name)) is not None and v != AUTO}

    @property
    def is_explicit(self) -> bool:
        return bool(self.explicit())

    def apply_to(self, base: FormatBundle) -> FormatBundle:
        """``base`` with the explicit choices laid over it, kept consistent.

        Switching to prompt-based definitions also switches results to text and
        teaches with instructions unless those were chosen too; switching back
        to native definitions drops the prompt teaching the same way; switching
        to constrained definitions gives the rest of the ``constrained-json`` preset.
        Raises ``ValueError`` when the result is still not a valid bundle.
        """
        chosen: dict[str, str | None] = dict(self.explicit())
        merged: dict[str, str | None] = base.to_dict()
        natives = set(NATIVE_FORMAT.values())
        definition = chosen.get("definition_format")
        if definition == "prompt" and base.definition_format != "prompt":
            merged.update(result_format="text", prompt_style="instructions")
        elif definition in natives and base.definition_format not in natives:
            merged.update(result_format=definition, prompt_style="none", prompt_family=None)
        elif definition in CONSTRAINED_DEFINITIONS and base.definition_format != definition:
            # the constrained reply is the json family's; its answer branch needs the constrained reader
            merged.update(result_format=definition, prompt_style="instructions", prompt_family="json")
        if chosen.get("prompt_style") == "none" and "prompt_family" not in chosen:
            chosen["prompt_family"] = None
        merged.update(chosen)
        if merged["definition_format"] == "prompt" and not merged.get("prompt_family"):
            raise ValueError("definition_format 'prompt' needs prompt_family (the call family to teach, e.g. 'hermes')")
        if merged["definition_format"] == "prompt" and merged["prompt_style"] == "none":
            merged["prompt_style"] = "instructions"
        return FormatBundle(**merged)


@dataclass(frozen=True)
class Profile:
    name: str
    provider: str
    model: str
    url: str | None = None
    options: dict[str, Any] = field(default_factory=dict)
    tools: ToolsSettings = field(default_factory=ToolsSettings)


@dataclass
class UTPConfig:
    profiles: dict[str, Profile] = field(default_factory=dict)
    source: str | None = None

    def profile(self, name: str) -> Profile:
        try:
            return self.profiles[name]
        except KeyError:
            known = ", ".join(self.profiles) or "none defined"
            raise ConfigError(f"no profile named {name!r} (profiles: {known})", file=self.source) from None

    def find(self, provider: str, model: str) -> Profile | None:
        """The first profile for this provider and model, if the file has one."""
        for profile in self.profiles.values():
            if profile.provider == provider and profile.model == model:
                return profile
        return None


def load_config(path: str | os.PathLike[str]) -> UTPConfig:
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError("file not found", file=source) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read: {exc}", file=source) from None
    return parse_config(text, source=source)


def parse_config(text: str, source: str = "<string>") -> UTPConfig:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        match = re.search(r"at line (\d+)", str(exc))
        raise ConfigError(f"invalid TOML: {exc}", file=source, line=int(match.group(1)) if match else None) from None
    check = _Checker(source, KeyLines(text))
    for key in data:
        if key != "profiles" and difflib.get_close_matches(key, ["profiles"], n=1, cutoff=0.75):
            check.fail((key,), "unknown top-level table; did you mean 'profiles'?")
    raw_profiles = data.get("profiles", {})
    if not isinstance(raw_profiles, dict):
        check.fail(("profiles",), "must be a table of [profiles.NAME] tables")
    profiles = {name: check.profile(name, table) for name, table in raw_profiles.items()}
    return UTPConfig(profiles=profiles, source=source)


def parse_tools_table(table: Mapping[str, Any], source: str = "<tools>", text: str = "") -> ToolsSettings:
    """Validate a bare tools table (the SDD's ``{"call_parser": ...}`` dicts)."""
    return _Checker(source, KeyLines(text)).tools((), dict(table))


def normalize_call_parser(value: str) -> str:
    """The registry name for a ``call_parser`` value; ``ValueError`` if there is none."""
    value = value.strip()
    if value in (AUTO, NATIVE):
        return value
    # The seeds' spellings come first: "qwen_xml" must mean the Hermes-style
    # <tool_call> JSON family even if another family also claims the alias.
    target = CALL_PARSER_ALIASES.get(value, value)
    if target == NATIVE:
        return NATIVE
    try:
        return get_family(target).name
    except UnknownFormatError:
        aliases = [a for a, t in CALL_PARSER_ALIASES.items() if t == NATIVE or t in family_names()]
        known = ", ".join([AUTO, NATIVE, *family_names(), *aliases])
        raise ValueError(f"unknown call parser {value!r}; expected one of: {known}") from None


def normalize_family(value: str) -> str:
    target = CALL_PARSER_ALIASES.get(value.strip(), value.strip())
    try:
        return get_family(target).name
    except UnknownFormatError:
        raise ValueError(f"unknown call family {value!r}; known: {', '.join(family_names())}") from None


class _Checker:
    """Turns raw TOML tables into validated objects, failing with a location."""

    def __init__(self, source: str, lines: "KeyLines") -> None:
        self.source = source
        self.lines = lines

    def fail(self, path: tuple[str, ...], message: str) -> NoReturn:
        raise ConfigError(message, file=self.source, line=self.lines.line_of(path), key=".".join(path))

    def profile(self, name: str, table: Any) -> Profile:
        base = ("profiles", name)
        if not isinstance(table, dict):
            self.fail(base, "must be a table ([profiles.NAME])")
        self.unknown_keys(base, table, _PROFILE_KEYS)
        provider = self.string(base + ("provider",), table.get("provider"), required=True)
        if provider not in PROVIDERS:
            self.fail(base + ("provider",), f"unknown provider {provider!r}; expected one of: {', '.join(PROVIDERS)}")
        model = self.string(base + ("model",), table.get("model"), required=True)
        url = self.string(base + ("url",), table.get("url"), required=False)
        if url is not None and not re.match(r"^https?://[^\s/]+", url):
            self.fail(base + ("url",), f"{url!r} is not an http(s) URL such as 'http://127.0.0.1:11434'")
        options = table.get("options", {})
        if not isinstance(options, dict):
            self.fail(base + ("options",), "must be a table of backend options ([profiles.NAME.options])")
        tools_table = table.get("tools", {})
        if not isinstance(tools_table, dict):
            self.fail(base + ("tools",), "must be a table ([profiles.NAME.tools])")
        tools = self.tools(base + ("tools",), tools_table)
        return Profile(name=name, provider=provider, model=model, url=url, options=dict(options), tools=tools)

    def tools(self, base: tuple[str, ...], table: dict[str, Any]) -> ToolsSettings:
        self.unknown_keys(base, table, TOOLS_KEYS)
        values: dict[str, str | None] = {}
        choices = {
            "definition_format": DEFINITION_FORMATS,
            "result_format": RESULT_FORMATS,
            "prompt_style": PROMPT_STYLES,
        }
        for key in TOOLS_KEYS:
            value = self.string(base + (key,), table.get(key), required=False)
            if value is None or value == AUTO:
                values[key] = value
            elif key in choices:
                if value not in choices[key]:
                    self.fail(base + (key,), f"{value!r} is not one of: {', '.join((AUTO, *choices[key]))}")
                values[key] = value
            else:
                normalize = normalize_call_parser if key == "call_parser" else normalize_family
                try:
                    values[key] = normalize(value)
                except ValueError as exc:
                    self.fail(base + (key,), str(exc))
        settings = ToolsSettings(**values)
        try:
            settings.apply_to(FormatBundle())
        except ValueError as exc:
            culprit = "prompt_style" if table.get("prompt_style") not in (None, AUTO, "none") else "definition_format"
            self.fail(base + (culprit,), str(exc))
        return settings

    def unknown_keys(self, base: tuple[str, ...], table: dict[str, Any], allowed: tuple[str, ...]) -> None:
        for key in table:
            if key not in allowed:
                close = difflib.get_close_matches(key, allowed, n=1)
                hint = f"; did you mean {close[0]!r}?" if close else f"; allowed: {', '.join(allowed)}"
                self.fail(base + (key,), f"unknown key{hint}")

    def string(self, path: tuple[str, ...], value: Any, *, required: bool) -> Any:
        if value is None:
            if required:
                self.fail(path, "is required")
            return None
        if not isinstance(value, str) or not value.strip():
            self.fail(path, f"must be a non-empty string, got {value!r}")
        return value.strip()


_BARE = r"[A-Za-z0-9_-]+"
_QUOTED = r'"(?:[^"\\]|\\.)*"' + r"|'[^']*'"
_KEY_PART = rf"(?:{_BARE}|{_QUOTED})"
_DOTTED = rf"{_KEY_PART}(?:\s*\.\s*{_KEY_PART})*"
_HEADER = re.compile(rf"^\[\[?\s*({_DOTTED})\s*\]\]?\s*(?:#.*)?$")
_ASSIGN = re.compile(rf"^({_DOTTED})\s*=")


class KeyLines:
    """Where each key of a TOML text is, by scanning headers and ``key =`` lines.

    Enough for error messages, not a parser: a key inside a multi-line string
    could be mistaken for one, and the first occurrence of a path wins.
    """

    def __init__(self, text: str) -> None:
        self._lines: dict[tuple[str, ...], int] = {}
        table: tuple[str, ...] = ()
        for number, line in enumerate(text.splitlines(), start=1):
            stripped = line.strip()
            if not stripped or stripped.startswith("#"):
                continue
            header = _HEADER.match(stripped)
            if header:
                table = split_dotted(header.group(1))
                self._remember(table, number)
                continue
            assign = _ASSIGN.match(stripped)
            if assign:
                self._remember(table + split_dotted(assign.group(1)), number)

    def _remember(self, path: tuple[str, ...], number: int) -> None:
        for end in range(1, len(path) + 1):
            self._lines.setdefault(path[:end], number)

    def line_of(self, path: tuple[str, ...]) -> int | None:
        """The line of ``path``, else of its nearest enclosing table or key."""
        for end in range(len(path), 0, -1):
            if path[:end] in self._lines:
                return self._lines[path[:end]]
        return None


def split_dotted(key: str) -> tuple[str, ...]:
    parts = re.findall(rf"\s*({_KEY_PART})\s*(?:\.|$)", key)
    return tuple(p[1:-1] if p[:1] in "\"'" and len(p) >= 2 else p for p in parts)
