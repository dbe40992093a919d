"""The JSON shapes chat servers must send, checked before anything reads them.

A reply that parses as JSON can still be the wrong shape: ``{"message":
"hello"}``, ``choices: [null]``, a streamed ``content`` that is a number. The
code that folds chunks and normalises replies is written for the API's shapes
(``.get`` on a message, ``"".join`` of argument fragments), so a wrong shape
would surface as an AttributeError or TypeError far from its cause. Each reply
and each streamed chunk is checked against a declared shape first, and the
first field of the wrong type becomes a ``malformed_response`` backend error
naming it (``choices[0].message is a string, expected an object``).

A field may always be absent or null: servers omit what they do not use.
Only what the backends and parsers read is declared; other fields pass.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from utp.backends.errors import malformed_response
from utp.types import json_type_name

_EXPECTED = {str: "a string", dict: "an object", list: "an array", bool: "a boolean", int: "an integer", float: "a number"}


@dataclass(frozen=True)
class Shape:
    """What one JSON value must be: one of ``types``; its ``fields`` (an object) or ``items`` (an array) in turn."""

    types: tuple[type, ...]
    fields: Mapping[str, "Shape"] = field(default_factory=dict)
    items: "Shape | None" = None

    def problem(self, value: Any, path: str) -> str | None:
        """The first field of ``value`` (at ``path``) that is the wrong type, said in words; None when none is."""
        if value is None:
            return None
        if not isinstance(value, self.types) or (isinstance(value, bool) and bool not in self.types):
            return self._wrong(value, path)
        if isinstance(value, dict):
            for key, shape in self.fields.items():
                found = shape.problem(value.get(key), f"{path}.{key}" if path else key)
                if found is not None:
                    return found
        elif isinstance(value, list) and self.items is not None:
            for index, item in enumerate(value):
                # an item of an array is never "absent": null there is a wrong item
                found = self.items._wrong(item, f"{path}[{index}]") if item is None else self.items.problem(item, f"{path}[{index}]")
                if found is not None:
                    return found
        return None

    def _wrong(self, value: Any, path: str) -> str:
        wanted = " or ".join(_EXPECTED.get(t, t.__name__) for t in self.types)
        return f"{path or 'the reply'} is {_article(json_type_name(value))}, expected {wanted}"


def _article(type_name: str) -> str:
    return {"object": "an object", "array": "an array", "integer": "an integer", "null": "null"}.get(type_name, f"a {type_name}")


TEXT = Shape((str,))
OBJECT = Shape((dict,))

#: Ollama ``/api/chat``: a reply, or one streamed chunk (the same shape)
OLLAMA_CHUNK = Shape((dict,), {
    "message": Shape((dict,), {"role": TEXT, "content": TEXT, "thinking": TEXT, "tool_calls": Shape((list,), items=OBJECT)}),
    "done": Shape((bool,)),
    "done_reason": TEXT,
})

_OPENAI_MESSAGE_FIELDS: dict[str, Shape] = {"role": TEXT, "content": TEXT, "reasoning_content": TEXT, "reasoning": TEXT}
#: ``/v1/chat/completions`` without streaming (arguments may come as an object from some servers)
OPENAI_COMPLETION = Shape((dict,), {
    "choices": Shape((list,), items=Shape((dict,), {
        "message": Shape((dict,), {**_OPENAI_MESSAGE_FIELDS, "tool_calls": Shape((list,), items=OBJECT)}),
        "finish_reason": TEXT,
    })),
    "usage": OBJECT,
})
#: one streamed ``chat.completion.chunk``: argument fragments are text that is joined
OPENAI_CHUNK = Shape((dict,), {
    "choices": Shape((list,), items=Shape((dict,), {
        "index": Shape((int,)),
        "delta": Shape((dict,), {**_OPENAI_MESSAGE_FIELDS, "tool_calls": Shape((list,), items=Shape((dict,), {
            "index": Shape((int,)), "id": TEXT, "type": TEXT,
            "function": Shape((dict,), {"name": TEXT, "arguments": TEXT}),
        }))}),
        "finish_reason": TEXT,
    })),
    "usage": OBJECT,
})


def check_shape(value: Any, shape: Shape, *, where: str, what: str = "reply") -> None:
    """Raise a ``malformed_response`` BackendError naming the first wrong field of ``value``."""
    problem = shape.problem(value, "")
    if problem is not None:
        raise malformed_response(f"{what}: {problem}", where=where)
