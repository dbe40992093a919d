"""The parameter schema every native definition format sends.

Servers differ in what they tolerate: Ollama decodes ``parameters`` into a
struct and drops keywords it has no field for, OpenAI rejects a function whose
schema has no ``type``. So the schema is passed on as written (the server
decides what it reads) with the two keys every consumer needs filled in.
"""

from __future__ import annotations

import copy
from typing import Any


def object_schema(parameters: Any) -> dict[str, Any]:
    """A copy of ``parameters`` that certainly has ``type`` and ``properties``."""
    schema = copy.deepcopy(parameters) if isinstance(parameters, dict) else {}
    schema.setdefault("type", "object")
    if not isinstance(schema.get("properties"), dict):
        schema["properties"] = {}
    return schema
