"""Lead-ins: the sentence before call markup that says whether the markup is used or shown.

An answer may write a call after prose and go on writing after it. Whether that
call is made or only shown is in the lead-in: documentation presents a sample
("Example output:"), an answer that means its call speaks of someone doing it.
The fenced and JSON readers ask here, for offered tools' calls only.
"""

from __future__ import annotations

import re

#: the last sentence of a lead-in: from the previous sentence end or line break to the ``:``
_LEAD_IN_SENTENCE = re.compile(r"(?:^|[.!?]\s|\n)([^\n.!?]{0,160}):\s*$")
#: words that introduce a sample being shown, something that came back, or a listing, rather than
#: a call being made ("Example output:", "The API takes:", "The tool returned an error:", a prompt
#: echoed back: "You can call these tools:")
_SAMPLE_WORDS = re.compile(
    r"\b(?:examples?|e\.g|for instance|samples?|outputs?|format(?:ted)?|looks? like|like this|such as|syntax|schema|"
    r"respon(?:d|ds|se|ses)|return(?:s|ed)?|results?|errors?|takes|produces?|emits?|generates?|prints?|template|"
    r"structure|payload|request|definition|these|following|available|below)\b",
    re.IGNORECASE,
)
#: someone said to act: the model ("I can use the get_weather tool.", "Let me check:") or the user
#: it talks to ("you can use the write_file tool. Here's how you can do it:", the call it means to make)
_SOMEONE_ACTS = re.compile(r"\b(?:I|I'll|I'm|I've|I'd|me|let's|we'll|we will|you)\b", re.IGNORECASE)
#: a lead-in that is a step of the model's plan ("First, read the file:", "Then run the tests:")
_STEP_START = re.compile(r"\s*+(?:first|then|next|now|finally|after that|step \d+)\b", re.IGNORECASE)


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
