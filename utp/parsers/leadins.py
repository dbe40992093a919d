"""Lead-ins: the sentence before call markup that says whether the markup is used or shown.

An answer may write a call after prose and go on writing after it. Whether that
call is made or only shown is in the lead-in: documentation presents a sample
("Example output:"), an answer that means its call speaks of someone doing it.
The fenced and JSON readers ask here, for offered tools' calls only.
"""

from __future__ import annotations

import re


#: the colons a lead-in ends with: ASCII's and the full-width one Chinese and Japanese text writes
LEAD_IN_COLONS = (":", "\uff1a")
#: the last sentence of a lead-in: from the previous sentence end (a CJK full stop has no blank
#: after it) or line break to the colon
_LEAD_IN_SENTENCE = re.compile(r"(?:^|[.!?]\s|[\u3002\uff01\uff1f]|\n)([^\n.!?\u3002\uff01\uff1f]{0,160})[:\uff1a]\s*$")
#: words that introduce a sample being shown, something that came back, or a listing, rather than
#: a call being made ("Example output:", "The API takes:", "The tool returned an error:", a prompt
#: echoed back: "You can call these tools:")
_SAMPLE_WORDS = re.compile(
    r"\b(?:examples?|e\.g|for instance|samples?|outputs?|format(?:ted)?|looks? like|like this|such as|syntax|schema|"
    r"respon(?:d|ds|se|ses)|return(?:s|ed)?|results?|errors?|takes|produces?|emits?|generates?|prints?|template|"
    r"structure|payload|request|definition|these|following|available|below)\b"
    # the same in Chinese: example, e.g., sample, output, format, returns, result, template, as follows
    r"|\u793a\u4f8b|\u4f8b\u5982|\u4f8b\u5b50|\u6bd4\u5982|\u6837\u4f8b|\u8f93\u51fa|\u683c\u5f0f|\u8fd4\u56de|\u7ed3\u679c|\u6a21\u677f|\u5982\u4e0b|\u4ee5\u4e0b",
    re.IGNORECASE,
)
#: someone said to act: the model ("I can use the get_weather tool.", "Let me check:") or the user
#: it talks to ("you can use the write_file tool. Here's how you can do it:", the call it means to make)
#: (Chinese "I", "we" and "you" stand without word boundaries: CJK text has no blanks)
_SOMEONE_ACTS = re.compile(r"\b(?:I|I'll|I'm|I've|I'd|me|let's|we'll|we will|you)\b|[\u6211\u4f60\u60a8]", re.IGNORECASE)
#: a lead-in that is a step of the model's plan ("First, read the file:", "Then run the tests:")
_STEP_START = re.compile(r"\s*+(?:first|then|next|now|finally|after that|step \d+)\b", re.IGNORECASE)


def ends_with_colon(text: str) -> bool:
    """Does ``text`` (trailing blanks ignored) end with a colon, ASCII or full-width?"""
    return text.rstrip(" \t").endswith(LEAD_IN_COLONS)


def introduces_a_call(text: str, pos: int) -> bool:
    """Does the text before ``pos`` end in a lead-in (``...:``) where someone is said to act
    ("I can use the get_weather tool. Here's how:", "First, read the file:")?

    Documentation introduces call JSON as a sample ("Example output:", "The API takes:")
    or as something that came back; an answer that offered tools' calls follow speaks of
    doing: the model's own, or the user's it tells how to run the call it means (small Qwen
    models answer a request so: "you can use the write_file function. Here's how you can do
    it:"). The callers ask that every name in what follows is an offered tool's.
    """
    before = text[max(0, pos - 240) : pos]
    lead_in = _LEAD_IN_SENTENCE.search(before)
    if lead_in is None or _SAMPLE_WORDS.search(lead_in.group(1)):
        return False
    return _STEP_START.match(lead_in.group(1)) is not None or _SOMEONE_ACTS.search(before) is not None


#: words that name what follows as a sample, whatever markup it is written in ("For example:",
#: "Look at this example:"; Chinese: example, for example, instance, e.g., sample)
_SAMPLE_NAMED = re.compile(
    r"\b(?:examples?|for instance|e\.g|samples?)\b|\u793a\u4f8b|\u4f8b\u5982|\u4f8b\u5b50|\u6bd4\u5982|\u6837\u4f8b", re.IGNORECASE
)
#: the format's syntax named where nobody acts ("The syntax looks like this:", "Here is the syntax:"; Chinese:
#: syntax): shown; "I'll call the tool using Cline syntax:" is the model acting in that syntax
_SYNTAX_NAMED = re.compile(r"\bsyntax\b|\u8bed\u6cd5", re.IGNORECASE)
#: a fence's opening line: three backticks and a label, or none
_FENCE_OPENING = re.compile(r"[ \t]*+```[\w+.\-]{0,32}+[ \t]*+")
#: the most of a lead-in line looked at, so a flood of lead-ins stays linear
_LEAD_IN_REACH = 400
#: what ends a sentence before the lead-in's (a CJK full stop has no blank after it)
_SENTENCE_ENDS = (". ", "! ", "? ", "\u3002", "\uff01", "\uff1f")


def shown_as_sample(text: str, pos: int) -> bool:
    """Is the call markup at ``pos`` shown as a sample rather than made?

    It is when the sentence right before it ends in a colon and names an
    example ("For instance:", "Look at this example:"), or the format's syntax
    where nobody acts ("The syntax looks like this:"), the markup following it
    directly or as the first thing in a fence opened right after it. An answer
    explaining a format shows ``<function=bash>…rm -rf /…`` that way, and it
    must not run; an answer that makes its call does not call it an example.
    Only the lead-in's line is read (at most a few hundred characters), with
    C-level string operations, so a reader may ask at every opener of a flood
    (and most calls, with no colon before them, cost one test).
    """
    window = text[max(0, pos - _LEAD_IN_REACH) : pos]
    if ":" not in window and "\uff1a" not in window:
        return False
    window = window.rstrip()
    line_start = window.rfind("\n") + 1
    if _FENCE_OPENING.fullmatch(window, line_start) is not None:
        window = window[:line_start].rstrip()
        line_start = window.rfind("\n") + 1
    if not window.endswith(LEAD_IN_COLONS) or (line_start == 0 and pos > _LEAD_IN_REACH):
        return False  # no colon ends it, or a line longer than the reach: not a lead-in's
    line = window[line_start:]
    sentence_start = max(line.rfind(end) + len(end) if end in line else 0 for end in _SENTENCE_ENDS)
    if _SAMPLE_NAMED.search(line, sentence_start) is not None:
        return True
    return _SYNTAX_NAMED.search(line, sentence_start) is not None and _SOMEONE_ACTS.search(line, sentence_start) is None
