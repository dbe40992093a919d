"""Which code fences may hold calls written as code, and how their opening line is read.

A fence labelled for Python (or not labelled) holds Gemma's and Gemini's
``tool_code`` drift; one labelled for JavaScript or TypeScript holds the same
calls from models that think of them as JS (Qwen served by MLX writes
```` ```javascript ```` around ``write_file({...})``). The pythonic family
decides what the body holds; this module only says where a body starts, what
a scan may skip, and what is still arriving in a stream.
"""

from __future__ import annotations

import re

#: a code fence, which may hold calls of offered tools when its label is Python's or missing
CODE_FENCE = "```"
#: the labels such a fence may carry: Python's, or JavaScript's and TypeScript's (Qwen served by MLX
#: writes ```` ```javascript ```` around ``write_file({...})``, gezel's captures); the body is read the same
_CODE_LABEL = r"(?:[Pp]ython3?+|py|[Jj]ava[Ss]cript|js|[Tt]ype[Ss]cript|ts)"
#: its opening line (one of those labels or none), then a call, ``print(call)`` or a call list; the
#: one-character lookahead first, so a run of backticks fails each position in one step, then the
#: two-character one, so ```` ```tool ```` fails at its second letter
CODE_FENCE_HEAD = rf"(?=[ \t\r\nPpJjTt])(?=[ \t\r\n]|[Pp]y|[Jj]a|js|[Tt]y|ts)[ \t]*+{_CODE_LABEL}?+[ \t]*+\r?\n\s*+(?:print\s*+\(\s*+)?+(?:\[\s*+)?+[A-Za-z_]"
CODE_FENCE_OPENING = re.compile(rf"```[ \t]*(?P<label>{_CODE_LABEL})?[ \t]*\r?\n")


def _growing(word: str) -> str:
    """A pattern matching every prefix of ``word`` (the empty one too), for text still arriving."""
    return "".join(f"(?:{re.escape(letter)}" for letter in word) + ")?" * len(word)


#: what may still grow into that opening line (streaming: wait for more text)
CODE_FENCE_PARTIAL = re.compile(
    r"```[ \t]*(?:" + "|".join(_growing(word) for word in ("python3", "javascript", "typescript")) + r"|js|ts)[ \t]*\r?",
    re.IGNORECASE,
)
