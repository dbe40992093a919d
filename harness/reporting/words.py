"""The reader's words for the report: what each column means and what each internal value says.

Reports are read by people choosing a format, not by people who know the
scorer's enum names, so every internal value (``not_exercised``,
``tools_unsupported``, …) is shown through :data:`PLAIN`, and every column
header through :data:`COLUMNS`. One mapping each, here, so the markdown and
the HTML pages cannot describe the same thing two ways.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping

from harness.metrics import metrics
from utp.formats import PRESETS

#: internal value → plain words (statuses, error kinds and classes, run modes, conformance kinds)
PLAIN: dict[str, str] = {
    # how the model handles native tool definitions (verdict.native_tools)
    "works": "native tools work",
    "partial": "native tools work partly",
    "text_calls": "calls written as text",
    "unsupported": "the server refuses tool definitions",
    "untested": "not tested",
    # tier enforcement (verdict.tier_enforcement)
    "enforced": "held: every out-of-tier call was blocked",
    "violated": "FAILED: an out-of-tier call was executed",
    "not_exercised": "not exercised: no model tried a locked tool",
    # where a typed error came from
    "call": "refused call",
    "backend": "server answer",
    # why a call was refused (utp ErrorKind and the loop's decisions)
    "unknown_tool": "called a tool that does not exist",
    "tier_violation": "called a locked tool (blocked)",
    "invalid_arguments": "arguments failed the tool's schema",
    "path_violation": "path outside the allowed folders",
    "execution_error": "the tool raised an error",
    "confirmation_required": "needed a person's confirmation",
    "parse_error": "call could not be read",
    "duplicate_stopped": "same call repeated, loop stopped",
    # what the server answered (BackendErrorKind)
    "tools_unsupported": "the server refuses tool definitions",
    "thinking_unsupported": "the server refuses thinking mode",
    "structured_output_unsupported": "the server refuses structured output",
    "model_not_found": "model not found on the server",
    "bad_request": "request refused (HTTP 4xx)",
    "server_error": "server error (HTTP 5xx)",
    "stream_error": "error in the middle of the answer",
    "malformed_stream": "answer stream cut or unreadable",
    "connect_error": "no connection to the server",
    "not_installed": "engine not installed",
    "timeout": "timed out",
    "error": "other server error",
    # why an errored run has no result (harness.outcomes.ErrorClass)
    "connection": "no connection",
    "server": "server error",
    "cassette": "missing or broken recording",
    "harness": "harness bug",
    # conformance failures
    "parser_crash": "parser crashed",
    "tier_violation_executed": "out-of-tier call executed",
    # how a run stopped (utp.loop.Termination)
    "final_answer": "a final answer",
    "max_rounds": "the round limit",
    "repeated_call": "a repeated call",
    "token_budget": "the token budget",
    "completion_marker": "a completion marker",
    "backend_error": "a server error",
    "parse_failure": "an unreadable call",
    # run modes
    "record": "recorded",
    "replay": "replayed",
    "live": "live",
}

#: header → definition of the columns that are not a metric's (a metric's column defines itself)
_OTHER_COLUMNS: dict[str, str] = {
    "Format": "the format preset: how the tools are put to the model and how its calls are read "
              "(each preset is described under Formats)",
    "Call tasks": "passed/tasks over the tasks whose right answer includes a call, with the rate; the cell colour "
                  "follows the rate (scale below)",
    "Model": "the model evaluated; the link opens its page",
    "Recommended format": "the best-ranked format that passed at least one call task",
    "Runner-up": "the next format that passed a call task",
    "Native tools": "how the model handles tool definitions sent through the server's own tools field",
    "Tier enforcement": "whether calls above the scenario's permission tier were blocked",
    "Errored": "runs with no result (connection, server, recording or harness failures); never scored",
    "All formats": "every format pooled: passed/runs with the rate and its 95% interval",
    "Suite": "a scenario suite (BFCL suites are the Berkeley Function-Calling Leaderboard's)",
    "Category": "a Berkeley Function-Calling Leaderboard category",
    "Where": "a refused call (UTP refused to run it) or a server answer",
    "What happened": "the kind of refusal or server error; each format's column counts how often it happened "
                     "over all its runs (blank: never)",
}


class _ColumnDefinitions(Mapping[str, str]):
    """Column header → definition: the registered metrics' columns (read live) and the other columns."""

    def _all(self) -> dict[str, str]:
        return {**_OTHER_COLUMNS, **{c.header: c.definition for m in metrics() for c in m.columns}}

    def __getitem__(self, header: str) -> str:
        return self._all()[header]

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())


#: column header → definition, shown beside every table that uses the header
COLUMNS: Mapping[str, str] = _ColumnDefinitions()

#: how a preset teaches its call format, by FormatBundle.prompt_style
_PROMPT_STYLES = {
    "instructions": "the tools and the call format are described in the system prompt",
    "few_shot": "the system prompt describes the tools and shows worked example calls",
}

_CODE = re.compile(r"\b[a-z]+(?:_[a-z0-9]+)+\b")


def plain(value: object) -> str:
    """The reader's words for an internal value; unknown values lose their underscores."""
    text = str(value)
    return PLAIN.get(text, text.replace("_", " "))


def plain_sentence(text: str) -> str:
    """A generated sentence for the page: markdown bold dropped, internal codes in plain words.

    A code in parentheses repeats what the sentence already says in words, so it is dropped.
    """
    text = text.replace("**", "")
    text = re.sub(r" \(([a-z]+(?:_[a-z0-9]+)+)\)", lambda m: "" if m.group(1) in PLAIN else m.group(0), text)
    return _CODE.sub(lambda m: PLAIN.get(m.group(0), m.group(0)), text)


def column_paragraph(headers: list[str]) -> str:
    """``Runs = …. Parse = ….``: the definitions of these columns as one markdown paragraph."""
    return " ".join(f"{h} = {COLUMNS[h]}." for h in headers if h in COLUMNS)


def describe_preset(name: str) -> str:
    """What a format preset does, in words (derived from its bundle, so a new preset is described too)."""
    bundle = PRESETS.get(name)
    if bundle is None:
        return "a custom format (not one of UTP's presets)"
    if bundle.sends_native_tools:
        shape = {"openai": "OpenAI's", "anthropic": "Anthropic's"}.get(bundle.definition_format, "Ollama's")
        return f"tools sent in the server's own tools field ({shape} shape); calls read from its tool_calls field"
    style = _PROMPT_STYLES.get(bundle.prompt_style, "the call format is described in the system prompt")
    return f"{style}; calls asked for in the {bundle.prompt_family} family and read from the answer text"
