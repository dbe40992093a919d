"""Definition and result adapters, looked up by name.

A :class:`~utp.formats.FormatBundle` names its adapters
(``definition_format``, ``result_format``, plus ``prompt_family`` and
``prompt_style`` for prompt-based formats); this registry turns those names
into objects. Adding a wire format is adding a factory here.

>>> get_definition_adapter("openai").format_tools([{"name": "ping"}])[0]["type"]
'function'
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from utp.adapters.anthropic import AnthropicDefinitionAdapter, AnthropicResultAdapter
from utp.adapters.constrained import ConstrainedDefinitionAdapter, ConstrainedResultAdapter
from utp.adapters.none import NoToolsDefinitionAdapter
from utp.adapters.ollama import OllamaDefinitionAdapter, OllamaResultAdapter
from utp.adapters.openai import OpenAIDefinitionAdapter, OpenAIResultAdapter
from utp.adapters.prompt import PromptDefinitionAdapter
from utp.adapters.taught import TaughtNativeDefinitionAdapter
from utp.adapters.text import TextResultAdapter
from utp.formats import FormatBundle
from utp.protocols import ToolDefinitionAdapter, ToolResultAdapter


class UnknownAdapterError(ValueError):
    """An adapter name nothing is registered under (or missing a required option)."""


def _prompt(family: str | None, few_shot: bool) -> ToolDefinitionAdapter:
    if not family:
        raise UnknownAdapterError("the 'prompt' definition adapter needs family=<call family name>, e.g. 'hermes'")
    return PromptDefinitionAdapter(family, few_shot=few_shot)


_DEFINITION_ADAPTERS: dict[str, Callable[[str | None, bool], ToolDefinitionAdapter]] = {
    "openai": lambda family, few_shot: OpenAIDefinitionAdapter(),
    "ollama": lambda family, few_shot: OllamaDefinitionAdapter(),
    "anthropic": lambda family, few_shot: AnthropicDefinitionAdapter(),
    "prompt": _prompt,
    "none": lambda family, few_shot: NoToolsDefinitionAdapter(),
    "constrained": lambda family, few_shot: ConstrainedDefinitionAdapter(),
    "constrained_call": lambda family, few_shot: ConstrainedDefinitionAdapter(answer="call"),
}

_RESULT_ADAPTERS: dict[str, Callable[[str | None], ToolResultAdapter]] = {
    "openai": lambda family: OpenAIResultAdapter(),
    "ollama": lambda family: OllamaResultAdapter(),
    "anthropic": lambda family: AnthropicResultAdapter(),
    "text": lambda family: TextResultAdapter(family),
    "constrained": lambda family: ConstrainedResultAdapter(family),
    "constrained_call": lambda family: ConstrainedResultAdapter(family, answer="call"),
}


def definition_adapter_names() -> list[str]:
    return list(_DEFINITION_ADAPTERS)


def result_adapter_names() -> list[str]:
    return list(_RESULT_ADAPTERS)


def _key(name: Any) -> str:
    return str(getattr(name, "value", name)).strip().lower()  # ToolFormat members too


def get_definition_adapter(name: Any, *, family: str | None = None, few_shot: bool = False) -> ToolDefinitionAdapter:
    """A fresh definition adapter; ``family``/``few_shot`` matter only for ``prompt``."""
    key = _key(name)
    try:
        factory = _DEFINITION_ADAPTERS[key]
    except KeyError:
        raise UnknownAdapterError(
            f"unknown definition format {name!r}; known: {', '.join(_DEFINITION_ADAPTERS)}"
        ) from None
    return factory(family, few_shot)


def get_result_adapter(name: Any, *, family: str | None = None) -> ToolResultAdapter:
    """A fresh result adapter (it may number call ids: use one per conversation)."""
    key = _key(name)
    try:
        factory = _RESULT_ADAPTERS[key]
    except KeyError:
        raise UnknownAdapterError(f"unknown result format {name!r}; known: {', '.join(_RESULT_ADAPTERS)}") from None
    return factory(family)


def adapters_for(bundle: FormatBundle) -> tuple[ToolDefinitionAdapter, ToolResultAdapter]:
    """The definition and result adapters a bundle names.

    A native definition format with a ``prompt_style`` other than ``none`` both
    sends the tools natively and teaches the family in the prompt.
    """
    few_shot = bundle.prompt_style == "few_shot"
    definition = get_definition_adapter(bundle.definition_format, family=bundle.prompt_family, few_shot=few_shot)
    if bundle.sends_native_tools and bundle.prompt_style != "none" and bundle.prompt_family:
        teacher = PromptDefinitionAdapter(bundle.prompt_family, few_shot=few_shot)
        definition = TaughtNativeDefinitionAdapter(definition, teacher)
    # Text results use the taught family's wrapping even when definitions are native.
    result = get_result_adapter(bundle.result_format, family=bundle.prompt_family)
    return definition, result


__all__ = [
    "AnthropicDefinitionAdapter",
    "AnthropicResultAdapter",
    "ConstrainedDefinitionAdapter",
    "ConstrainedResultAdapter",
    "NoToolsDefinitionAdapter",
    "OllamaDefinitionAdapter",
    "OllamaResultAdapter",
    "OpenAIDefinitionAdapter",
    "OpenAIResultAdapter",
    "PromptDefinitionAdapter",
    "TaughtNativeDefinitionAdapter",
    "TextResultAdapter",
    "UnknownAdapterError",
    "adapters_for",
    "definition_adapter_names",
    "get_definition_adapter",
    "get_result_adapter",
    "result_adapter_names",
]
