"""What may follow a bare call object and still belong to it, not to the prose after it.

A model whose template's opening token was swallowed still writes the closing
tag (``{...}</tool_call>``, seen from Hermes 4 and Qwen): that tag is the
call's markup. A server that does not strip special tokens leaves the
end-of-turn token after the call (``</s>``, ``<|eot_id|>``, ``<|im_end|>``):
the answer ends there, and whatever follows it is another turn, not prose that
would make the call an example.

The same tokens at the very end of an output (:func:`turn_end_at`) are no part
of the answer: a shape that must be the whole answer (``add(x=1)``,
``NAME key="v"``) is read with them set aside, and they go with the last call
when it reaches them. Only a bounded run is looked at (:data:`TURN_END_TOKENS_MAX`
tokens, :data:`TURN_END_BLANKS_MAX` blanks before each), so a flood of tokens
costs a constant, and a stream can hold the run back until it knows the output
ended there.
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
#: tokens that end a model's turn in the chat templates UTP meets (Qwen/ChatML, Llama 3, Mistral,
#: Gemma, Phi, gpt-oss, DeepSeek, Cohere); at an output's end they are the template's, not the answer's
TURN_END_TOKENS = (
    *END_OF_TURN_TOKENS, "<|end_of_text|>", "<|return|>", "<|eot|>", "<eos>", "<|END_OF_TURN_TOKEN|>",
    "<\uff5cend\u2581of\u2581sentence\uff5c>",
)
#: the most tokens, and blanks before each, a trailing run is read for
TURN_END_TOKENS_MAX = 8
TURN_END_BLANKS_MAX = 64
_TURN_END_BY_LAST = {last: tuple(t for t in TURN_END_TOKENS if t[-2:] == last) for last in {t[-2:] for t in TURN_END_TOKENS}}
_TURN_END_PREFIXES = frozenset(t[:k] for t in TURN_END_TOKENS for k in range(1, len(t)))
_TURN_END_LONGEST = max(map(len, TURN_END_TOKENS))
#: what a stream may hold at its end that is still becoming one of these
_PREFIXES = frozenset(c[:k] for c in (*ORPHAN_CLOSERS, *END_OF_TURN_TOKENS) for k in range(1, len(c)))


def past_orphan_closer(text: str, end: int) -> int:
    """``end``, or past a closing tag (after blanks) that closes nothing; the text's end while one may be arriving."""
    after = skip_ws(text, end)
    closer = _ORPHAN_CLOSER.match(text, after)
    if closer is not None:
        return closer.end()
    if text[after:] in _PREFIXES:
        return len(text)  # streaming: "</tool" or "<|im" may be the start of one
    return end


def turn_end_at(text: str, end: int | None = None) -> int:
    """Where the run of end-of-turn tokens that ends ``text[:end]`` begins (``end`` when none does).

    The run is read backwards: up to :data:`TURN_END_BLANKS_MAX` blanks, then a
    token, at most :data:`TURN_END_TOKENS_MAX` times. The blanks before the run's
    first token are not part of it (the answer keeps what it wrote).
    """
    pos = cut = len(text) if end is None else end
    for _ in range(TURN_END_TOKENS_MAX):
        blanks_from = max(0, pos - TURN_END_BLANKS_MAX)
        while pos > blanks_from and text[pos - 1].isspace():
            pos -= 1
        token = _token_ending_at(text, pos)
        if token is None:
            break
        pos = cut = pos - len(token)
    return cut


def turn_end_held(text: str) -> int:
    """Where a stream should start holding ``text`` back: a trailing run of end-of-turn tokens,
    and after it the start of one still arriving (``<|im_``), may yet turn out to end the output."""
    end = len(text)
    opener = text.rfind("<", max(0, end - _TURN_END_LONGEST + 1))  # every token has one "<", its first character
    if opener >= 0 and text[opener:] in _TURN_END_PREFIXES:
        end = opener
    return turn_end_at(text, end)


def _token_ending_at(text: str, pos: int) -> str | None:
    if pos < 4 or text[pos - 1] != ">":
        return None
    for token in _TURN_END_BY_LAST.get(text[pos - 2 : pos], ()):
        if text.startswith(token, pos - len(token), pos):
            return token
    return None
