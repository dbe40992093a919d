"""Call markup a lead-in shows as an example is shown, not made, in every family.

An answer explaining a format writes a whole call after "For instance:" or
in a fence after "Look at this example:"; another agent's adapter tests that
such a ``rm -rf /`` is never run. JSON readers already asked the lead-in;
markup was read as a call wherever it stood. An answer that makes its call
does not call it an example, so a lead-in that names none changes nothing.
"""

from __future__ import annotations

import pytest

from tests.parsers.conftest import assert_every_cut_matches
from utp.parsers import parse_response
from utp.types import DiagnosticKind, Tool

BASH = Tool("bash", parameters={"type": "object", "properties": {"command": {"type": "string"}}})
TOOLS = [BASH]
QWEN = "<function=bash>\n<parameter=command>rm -rf /</parameter>\n</function>"
HERMES = '<tool_call>\n{"name": "bash", "arguments": {"command": "rm -rf /"}}\n</tool_call>'


@pytest.mark.parametrize(
    "text",
    [
        f"Here's how the tool format works:\n\n```\nFor instance:\n{QWEN}\nThat would be dangerous.\n```\n\nDoes that help?",
        f"Look at this example:\n\n```xml\n<tool_call>\n{QWEN}\n</tool_call>\n```\n",
        f"For example:\n{HERMES}",
        f"The model answers so. E.g.:\n```\n{HERMES}\n```",
        f"Sample:\n[TOOL_CALLS][{{\"name\": \"bash\", \"arguments\": {{\"command\": \"rm -rf /\"}}}}]",
        f"\u4f8b\u5982\uff1a\n{HERMES}",
        # the lead-in names the format's syntax (Router-Maestro's test: an answer explaining <invoke>)
        'The syntax looks like this:\n```\n<invoke name="bash">\n<parameter name="command">rm -rf /</parameter>\n</invoke>\n```\nas you can see above.',
    ],
)
def test_a_call_introduced_as_an_example_is_reported_and_stays_content(text: str) -> None:
    parsed = parse_response(text, tools=TOOLS)
    assert parsed.tool_calls == []
    assert [d.kind for d in parsed.diagnostics] == [DiagnosticKind.SHOWN]
    assert "rm -rf /" in parsed.content  # the sample is the answer's text
    assert_every_cut_matches(text, TOOLS, step=9)


@pytest.mark.parametrize(
    "text",
    [
        f"Let me clean up:\n{HERMES}",
        f"I read the example file. Now I will run it:\n{HERMES}",  # the example is in another sentence
        f"Running it:\n```xml\n<tool_call>\n{QWEN}\n</tool_call>\n```",
        f"For example, the weather.\n\n{HERMES}",  # no lead-in: the sentence does not end in a colon
        f"I'll call the tool using Hermes syntax:\n{HERMES}",  # the syntax named, but the model acts in it
        HERMES,
    ],
)
def test_a_call_whose_lead_in_names_no_example_runs(text: str) -> None:
    parsed = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("bash", {"command": "rm -rf /"})]
    assert_every_cut_matches(text, TOOLS, step=9)


def test_a_call_made_after_one_shown_as_the_syntax_runs_alone() -> None:
    """Both the shown ``<invoke>`` and the one made after it ran: "syntax" named no sample."""
    shown = '<invoke name="bash"><parameter name="command">rm -rf /</parameter></invoke>'
    made = '<invoke name="bash"><parameter name="command">ls</parameter></invoke>'
    text = f"Here is the syntax:\n```\n{shown}\n```\nnow really: {made}"
    parsed = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("bash", {"command": "ls"})]
    assert [d.kind for d in parsed.diagnostics] == [DiagnosticKind.SHOWN]
    assert_every_cut_matches(text, TOOLS, step=7)


def test_a_flood_of_example_lead_ins_is_bounded_like_any_flood_of_calls() -> None:
    """Each shown sample is a call span: past the limit the rest is content, reported once."""
    unit = f"Example:\n{HERMES}\n"
    parsed = parse_response(unit * 2000, tools=TOOLS)
    assert parsed.tool_calls == []
    kinds = [d.kind for d in parsed.diagnostics]
    assert kinds == [DiagnosticKind.SHOWN] * 1024 + [DiagnosticKind.UNPARSEABLE]
    assert parsed.content.strip() == (unit * 2000).strip()
