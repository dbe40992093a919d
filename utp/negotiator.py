"""Choosing the format for a provider and model, in a fixed order of authority.

1. **explicit**: the profile's ``[tools]`` table, wherever it says something
   other than ``"auto"``. The user knows things measurements do not.
2. **tuned**: the format ``utp tune`` measured best for this model.
3. **model_override**: a small table of models known to need something other
   than their provider's default (e.g. Ollama templates without tool support).
4. **provider_default**: the provider's native tool calling, parsed with
   ``auto`` so calls written as text are still found; for the embedded tiny
   models, few-shot prompting, since they have no native tool support.

The result bundles the adapters and a parser factory, so the loop never looks
at format names again. The SDD's factory methods (``detect_format``,
``get_call_parser``, ...) remain for callers written against it.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from utp.adapters import adapters_for, get_definition_adapter, get_result_adapter
from utp.config import (
    NATIVE_FORMAT,
    ConfigError,
    Profile,
    ToolsSettings,
    UTPConfig,
    load_config,
    normalize_call_parser,
    parse_tools_table,
)
from utp.formats import PRESETS, FormatBundle
from utp.parsers import AUTO, get_parser
from utp.protocols import ToolCallParser, ToolDefinitionAdapter, ToolResultAdapter
from utp.tuned import TunedProfile, find_tuned, load_tuned
from utp.types import ToolFormat

SOURCES = ("explicit", "tuned", "model_override", "provider_default")

#: where `utp tune` writes (relative to the working directory); UTP_TUNED_PROFILES overrides
DEFAULT_TUNED = os.environ.get("UTP_TUNED_PROFILES", "reports/tuned_profiles.toml")

PROVIDER_DEFAULTS: dict[str, FormatBundle] = {
    "ollama": PRESETS["native"],
    "openai": PRESETS["native-openai"],
    "anthropic": FormatBundle("anthropic", AUTO, "anthropic"),
    # Few-shot JSON: on SmolLM2-135M it made the most correct first calls of the
    # prompted formats (hermes demos were copied as <tool_response> blocks).
    "embedded": PRESETS["fewshot-json"],
    "gemini": PRESETS["native-openai"],  # OpenAI-compatible, as in the SDD's table
}

class UnknownProviderError(ValueError):
    """A provider name with no default format (the message lists the known ones)."""


#: the call family taught when a caller asks for ToolFormat.PROMPT without naming one
DEFAULT_PROMPT_FAMILY = "hermes"


@dataclass(frozen=True)
class ModelOverride:
    """Models matching ``pattern`` (a glob on the lower-cased name) start from ``preset``."""

    pattern: str
    preset: str
    reason: str

    def __post_init__(self) -> None:
        if self.preset not in PRESETS:
            raise ValueError(f"model override {self.pattern!r}: unknown preset {self.preset!r}; known: {', '.join(PRESETS)}")

    def matches(self, model: str) -> bool:
        name = model.lower()
        return fnmatch.fnmatchcase(name, self.pattern) or fnmatch.fnmatchcase(name.rsplit("/", 1)[-1], self.pattern)


_NO_TOOLS_TEMPLATE = "Ollama's chat template for this family has no tool support: a request with tools gets HTTP 400"

#: first match wins; a tuned profile or explicit configuration beats all of these
MODEL_OVERRIDES: tuple[ModelOverride, ...] = (
    ModelOverride("gemma3*", "fewshot-hermes", _NO_TOOLS_TEMPLATE),
    ModelOverride("gemma2*", "fewshot-hermes", _NO_TOOLS_TEMPLATE),
    ModelOverride("gemma:*", "fewshot-hermes", _NO_TOOLS_TEMPLATE),
    ModelOverride("phi3*", "fewshot-hermes", _NO_TOOLS_TEMPLATE),
    ModelOverride("llama2*", "fewshot-hermes", _NO_TOOLS_TEMPLATE),
    ModelOverride("codellama*", "fewshot-hermes", _NO_TOOLS_TEMPLATE),
)


@dataclass
class Negotiated:
    """Everything the loop needs to speak tools with one model."""

    bundle: FormatBundle
    definition_adapter: ToolDefinitionAdapter
    parser_factory: Callable[[Any], ToolCallParser]
    result_adapter: ToolResultAdapter
    source: str
    #: bundles to switch to at runtime when this one keeps failing, best first
    fallbacks: list[FormatBundle] = field(default_factory=list)
    #: why this bundle was chosen, for transcripts and ``utp`` diagnostics
    reason: str = ""

    def demonstrations(self, tools: Sequence[Any]) -> list[dict[str, Any]]:
        """Few-shot turns to put before the conversation (none for other formats)."""
        demonstrate = getattr(self.definition_adapter, "demonstrations", None)
        return list(demonstrate(tools)) if callable(demonstrate) else []


def negotiated_for(
    bundle: FormatBundle,
    *,
    source: str = "explicit",
    fallbacks: Sequence[FormatBundle] = (),
    reason: str = "",
) -> Negotiated:
    """Adapters and parser factory for a bundle chosen elsewhere (a preset, a fallback)."""
    if source not in SOURCES:
        raise ValueError(f"source {source!r}: expected one of {SOURCES}")
    definition, result = adapters_for(bundle)
    call_parser = bundle.call_parser

    def parser_factory(tools: Any = None) -> ToolCallParser:
        return get_parser(call_parser, tools)

    return Negotiated(
        bundle=bundle,
        definition_adapter=definition,
        parser_factory=parser_factory,
        result_adapter=result,
        source=source,
        fallbacks=list(fallbacks),
        reason=reason,
    )


class FormatNegotiator:
    """Picks a :class:`Negotiated` per (provider, model, profile).

    ``config`` may be a :class:`UTPConfig` or, as in the SDD, a plain tools
    mapping (``{"call_parser": "qwen_xml", ...}``) that applies to everything.
    """

    def __init__(
        self,
        config: UTPConfig | Mapping[str, Any] | None = None,
        tuned: Mapping[str, TunedProfile] | None = None,
        model_overrides: Sequence[ModelOverride] = MODEL_OVERRIDES,
    ) -> None:
        self.config = config if isinstance(config, UTPConfig) else None
        self._global_tools = parse_tools_table(config) if isinstance(config, Mapping) else None
        self.tuned = dict(tuned or {})
        self.model_overrides = tuple(model_overrides)

    @classmethod
    def from_files(
        cls, config: str | os.PathLike[str] | None = None, tuned: str | os.PathLike[str] | None = DEFAULT_TUNED
    ) -> "FormatNegotiator":
        """A negotiator reading ``llmc.toml``-style configuration and ``utp tune``'s profiles.

        The configuration must exist when named (a typo in a path should not
        silently mean "no configuration"); the tuned file is optional, since a
        model nobody has evaluated yet simply falls back to the defaults.
        """
        loaded = load_config(config) if config is not None else None
        profiles = load_tuned(tuned) if tuned is not None and Path(tuned).exists() else {}
        return cls(config=loaded, tuned=profiles)

    def negotiate(self, provider: str, model: str, profile: str | Profile | None = None) -> Negotiated:
        provider_key = _provider_key(provider)
        settings, profile_name = self._settings(provider_key, model, profile)
        bundle, source, fallbacks, reason = self._automatic(provider_key, model)
        if settings is not None and settings.is_explicit:
            try:
                bundle = settings.apply_to(bundle)
            except ValueError as exc:
                where = f"profiles.{profile_name}.tools" if profile_name else "tools"
                raise ConfigError(str(exc), file=self.config.source if self.config else None, key=where) from None
            chosen = ", ".join(f"{k}={v}" for k, v in settings.explicit().items())
            return negotiated_for(bundle, source="explicit", reason=f"configured: {chosen}")
        return negotiated_for(bundle, source=source, fallbacks=fallbacks, reason=reason)

    def _settings(self, provider: str, model: str, profile: str | Profile | None) -> tuple[ToolsSettings | None, str | None]:
        if isinstance(profile, Profile):
            return profile.tools, profile.name
        if isinstance(profile, str):
            if self.config is None:
                raise ConfigError(f"profile {profile!r} requested but no configuration was loaded")
            return self.config.profile(profile).tools, profile
        if self.config is not None:
            found = self.config.find(provider, model)
            if found is not None:
                return found.tools, found.name
        return self._global_tools, None

    def _automatic(self, provider: str, model: str) -> tuple[FormatBundle, str, list[FormatBundle], str]:
        tuned = find_tuned(self.tuned, model)
        if tuned is not None:
            fallbacks = [fit_to_provider(b, provider) for b in tuned.fallback_bundles()]
            label = tuned.preset or "custom bundle"
            return fit_to_provider(tuned.bundle, provider), "tuned", fallbacks, f"tuned profile for {tuned.model}: {label}"
        for override in self.model_overrides:
            if override.matches(model):
                bundle = fit_to_provider(PRESETS[override.preset], provider)
                return bundle, "model_override", [], f"{override.pattern} → {override.preset}: {override.reason}"
        return PROVIDER_DEFAULTS[provider], "provider_default", [], f"default for provider {provider}"

    # -- the SDD's factory API ------------------------------------------------

    def detect_format(self, provider: str, model: str = "") -> ToolFormat:
        """The definition family negotiation picks; ``AUTO`` for an unknown provider."""
        try:
            bundle = self.negotiate(provider, model).bundle
        except UnknownProviderError:
            return ToolFormat.AUTO
        return _TOOL_FORMAT_OF.get(bundle.definition_format, ToolFormat.AUTO)

    def get_call_parser(self, format: ToolFormat | str | None = None, tools: Any = None) -> ToolCallParser:
        """``ToolFormat`` members all read native calls plus every content family."""
        if format is None or isinstance(format, ToolFormat):
            return get_parser(AUTO, tools)
        return get_parser(normalize_call_parser(format), tools)

    def get_definition_adapter(self, format: ToolFormat | str | None = None) -> ToolDefinitionAdapter:
        name = _adapter_name(format)
        if name == "prompt":
            return get_definition_adapter("prompt", family=DEFAULT_PROMPT_FAMILY)
        return get_definition_adapter(name)

    def get_result_adapter(self, format: ToolFormat | str | None = None) -> ToolResultAdapter:
        name = _adapter_name(format)
        if name == "prompt":
            return get_result_adapter("text", family=DEFAULT_PROMPT_FAMILY)
        return get_result_adapter(name)


_TOOL_FORMAT_OF = {
    "openai": ToolFormat.OPENAI,
    "ollama": ToolFormat.OLLAMA,
    "anthropic": ToolFormat.ANTHROPIC,
    "prompt": ToolFormat.PROMPT,
    "none": ToolFormat.PROMPT,
}


def _provider_key(provider: str) -> str:
    key = str(provider).strip().lower()
    if key not in PROVIDER_DEFAULTS:
        raise UnknownProviderError(f"unknown provider {provider!r}; known: {', '.join(PROVIDER_DEFAULTS)}")
    return key


def _adapter_name(format: ToolFormat | str | None) -> str:
    """SDD default: OpenAI shapes when nothing (or ``auto``) is asked for."""
    name = str(getattr(format, "value", format) or "openai").strip().lower()
    return "openai" if name == AUTO else name


def fit_to_provider(bundle: FormatBundle, provider: str) -> FormatBundle:
    """A native bundle measured on one API, moved to the provider's own native shapes.

    A profile tuned through Ollama's native API is still right for the same
    model behind ``/v1``, but the wire shapes must be OpenAI's there (``/v1``
    rejects object arguments in history). Prompt-based bundles do not depend on
    the API and stay as they are.
    """
    native = NATIVE_FORMAT.get(provider, "openai")
    natives = set(NATIVE_FORMAT.values())
    if bundle.definition_format not in natives or bundle.definition_format == native:
        return bundle
    result = native if bundle.result_format in natives else bundle.result_format
    return replace(bundle, definition_format=native, result_format=result)
