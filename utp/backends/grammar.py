"""Ollama's ``format`` field as a llama.cpp grammar, for the embedded engine.

Ollama takes ``"json"`` or a JSON Schema and samples under the grammar built
from it. llama-cpp-python can build that grammar, but its ``response_format``
path falls back to "any JSON" when the schema cannot be converted: a reply
that looks constrained but is not. Here the conversion fails loudly instead,
so the caller can refuse the request as unsupported.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any


class GrammarError(ValueError):
    """A ``format`` value no grammar can be built from (the message says why)."""


def reply_grammar(fmt: Any, load_llama_cpp: Callable[[], Any]) -> Any | None:
    """The ``LlamaGrammar`` for a ``format`` value, or ``None`` for free-form output.

    ``load_llama_cpp`` imports llama_cpp (or raises its own not-installed error).
    """
    if fmt is None or fmt == "":
        return None
    load_llama_cpp()
    from llama_cpp.llama_grammar import JSON_GBNF, LlamaGrammar

    if fmt == "json":
        return LlamaGrammar.from_string(JSON_GBNF, verbose=False)
    if not isinstance(fmt, dict):
        raise GrammarError(f'format {json.dumps(fmt)[:60]} is neither "json" nor a JSON Schema object')
    try:
        return LlamaGrammar.from_json_schema(json.dumps(fmt), verbose=False)
    except Exception as exc:  # the converter's own words say which keyword it could not follow
        raise GrammarError(f"no grammar can be built from the JSON Schema ({type(exc).__name__}: {exc})") from None
