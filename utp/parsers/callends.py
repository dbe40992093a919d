"""What may follow a bare call object and still belong to it, not to the prose after it.

A model whose template's opening token was swallowed still writes the closing
tag (``{...}</tool_call>``, seen from Hermes 4 and Qwen): that tag is the
call's markup. A server that does not strip special tokens leaves the
end-of-turn token after the call (``</s>``, ``<|eot_id|>``, ``<|im_end|>``):
the answer ends there, and whatever follows it is another turn, not prose that
would make the call an example.

A JavaScript client that appends an ``undefined`` value to the reply string
leaves ``undefined`` glued to the call's last brace (``{...}undefined``): the
client's word, not the model's.

At the very end of an output those tokens are the template's frame, not the answer's:
see :mod:`utp.parsers.turnframe`.
"""

from __future__ import annotations

import re

from utp.parsers.callshape import skip_ws

#: closing tags a model writes after a bare call it never opened
ORPHAN_CLOSERS = ("</tool_call>", "</tool_calls>", "</function_call>", "</function_calls>", "</tool_use>", "</toolcall>")
_ORPHAN_CLOSER = re.compile("|".join(re.escape(c) for c in ORPHAN_CLOSERS))
#: end-of-turn tokens a server left in the text
END_OF_TURN_TOKENS = ("</s>", "<|eot_id|>", "<|eom_id|>", "<|im_end|>", "<|end|>", "<|endoftext|>", "<end_of_turn>")
END_OF_TURN = re.compile("|".join(re.escape(c) for c in END_OF_TURN_TOKENS))
#: JavaScript's ``String(undefined)`` glued to the closer by the client that built the reply
_JS_UNDEFINED = re.compile(r"undefined(?![\w$])")
#: what a stream may hold at its end that is still becoming one of these
_PREFIXES = frozenset(c[:k] for c in (*ORPHAN_CLOSERS, *END_OF_TURN_TOKENS) for k in range(1, len(c)))


def past_orphan_closer(text: str, end: int) -> int:
    """``end``, or past a closing tag (after blanks) that closes nothing, or past a glued ``undefined``;
    the text's end while one may be arriving."""
    glued = _JS_UNDEFINED.match(text, end)
    if glued is not None:
        return glued.end()
    if 0 < len(text) - end < len("undefined") and "undefined".startswith(text[end:]):
        return len(text)  # streaming: the glued word may be arriving
    after = skip_ws(text, end)
    closer = _ORPHAN_CLOSER.match(text, after)
    if closer is not None:
        return closer.end()
    if text[after:] in _PREFIXES:
        return len(text)  # streaming: "</tool" or "<|im" may be the start of one
    return end
