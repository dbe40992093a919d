"""The chat template's frame around an answer: a role header before it, end-of-turn tokens after it.

A server that does not strip special tokens (or a user pasting a raw
completion) leaves them in the text: ``<|im_start|>assistant`` before the
answer, ``<|im_end|>`` or ``</s>`` after it. They are the template's, not the
model's answer, so they are set aside before the answer is read: a shape that
must be the whole answer (``add(x=1)``, ``NAME key="v"``) reads the same with
them as without, and they are no part of the content.

Only a bounded frame is looked at (a header is one of a few fixed strings; an
end run is at most :data:`TURN_END_TOKENS_MAX` tokens, :data:`TURN_END_BLANKS_MAX`
blanks before each), so a flood of tokens costs a constant, and a stream can
hold either part back until it knows what it is (:mod:`utp.parsers.streaming`).
"""

from __future__ import annotations

import re

from utp.parsers.callends import END_OF_TURN_TOKENS

#: tokens that end a model's turn in the chat templates UTP meets (Qwen/ChatML, Llama 3, Mistral,
#: Gemma, Phi, gpt-oss, DeepSeek, Cohere); at an output's end they are the template's, not the answer's
TURN_END_TOKENS = (
    *END_OF_TURN_TOKENS, "<|end_of_text|>", "<|return|>", "<|eot|>", "<eos>", "<|END_OF_TURN_TOKEN|>",
    "<\uff5cend\u2581of\u2581sentence\uff5c>",
)
_SEQUENCE_END, _SEQUENCE_START = "</s>", "<s>"
#: the most tokens, and blanks before each, a trailing run is read for
TURN_END_TOKENS_MAX = 8
TURN_END_BLANKS_MAX = 64
_TURN_END_BY_LAST = {last: tuple(t for t in TURN_END_TOKENS if t[-2:] == last) for last in {t[-2:] for t in TURN_END_TOKENS}}
_TURN_END_PREFIXES = frozenset(t[:k] for t in TURN_END_TOKENS for k in range(1, len(t)))
_TURN_END_LONGEST = max(map(len, TURN_END_TOKENS))

#: the assistant's role header in those templates, as it opens an output; the last is ChatML's or
#: Llama 3's with the special tokens stripped, the role's name alone on the first line. Harmony's
#: ``<|start|>assistant`` is not here: its family reads the header (the channel and recipient follow).
ROLE_HEADERS = (
    "<|im_start|>assistant",
    "<|start_header_id|>assistant<|end_header_id|>",
    "<start_of_turn>model",
    "<|assistant|>",
    "<\uff5cAssistant\uff5c>",
    "<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>",
    "assistant\n",
)
#: the most blanks before a header
ROLE_HEADER_BLANKS_MAX = 16
_HEADER_PREFIXES = frozenset(h[:k] for h in ROLE_HEADERS for k in range(1, len(h)))
#: a header after at most ROLE_HEADER_BLANKS_MAX blanks (possessive: more blanks fail the header), then blanks
_ROLE_HEADER = re.compile(rf"\s{{0,{ROLE_HEADER_BLANKS_MAX}}}+(?:{'|'.join(re.escape(h) for h in ROLE_HEADERS)})\s*+")


def turn_end_at(text: str, end: int | None = None) -> int:
    """Where the run of end-of-turn tokens that ends ``text[:end]`` begins (``end`` when none does).

    The run is read backwards: up to :data:`TURN_END_BLANKS_MAX` blanks, then a
    token, at most :data:`TURN_END_TOKENS_MAX` times. The blanks before the run's
    first token are not part of it (the answer keeps what it wrote).
    """
    pos = cut = len(text) if end is None else end
    for _ in range(TURN_END_TOKENS_MAX):
        if not pos:
            break
        last = text[pos - 1]
        if last != ">":  # most answers end here: no token can end at a character other than ">"
            if not last.isspace():
                break
            window = text[max(0, pos - TURN_END_BLANKS_MAX) : pos]
            kept = len(window.rstrip())
            if not kept:
                break  # more blanks than a run has between its tokens
            pos -= len(window) - kept
        token = _token_ending_at(text, pos)
        if token is None or (token == _SEQUENCE_END and text.rfind(_SEQUENCE_START, 0, pos - len(token)) >= 0):
            break  # "</s>" after an "<s>": an element's close (a tool named "s"), not the end of sequence
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


def role_header_end(text: str) -> int:
    """Where the answer starts after a role header opening ``text``, and the blanks after it (0: no header)."""
    found = _ROLE_HEADER.match(text)
    return 0 if found is None else found.end()


def role_header_undecided(text: str) -> bool:
    """Could more text still make ``text`` open with a role header? (A stream holds it while so.)"""
    at = blanks_end(text)
    return at <= ROLE_HEADER_BLANKS_MAX and (at == len(text) or text[at:] in _HEADER_PREFIXES)


_BLANKS = re.compile(r"\s*+")


def blanks_end(text: str, pos: int = 0) -> int:
    """The end of the blanks at ``pos``."""
    found = _BLANKS.match(text, pos)
    assert found is not None
    return found.end()
