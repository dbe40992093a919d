"""The SDD's section 6.1 and the HLD's section 8 parser tests, ported to UTP's API.

The seeds test three classes (OpenAINativeParser, XMLToolParser,
CompositeParser); UTP has one composite parser whose ``format`` selects the
families: ``"native"`` is the SDD's native parser, ``"hermes"`` its XML
parser (``<tools>``, ``<tool_call>``, ``<function_call>``, ``<tool_use>``),
``"auto"`` the composite. Where the seeds disagree (the SDD's
``test_tries_native_first`` comment says "find native first and return", the
HLD's ``test_composite_parser_mixed`` expects both calls), UTP follows the
HLD: native and content calls are merged, duplicates dropped.
"""

from __future__ import annotations

from utp.parsers import get_parser
from utp.types import ParsedResponse


def native_parser():
    return get_parser("native")


def xml_parser():
    return get_parser("hermes")


def composite_parser():
    return get_parser("auto")


# ---------------------------------------------------------------- SDD 6.1: native


def test_native_can_parse_with_tool_calls() -> None:
    assert native_parser().can_parse({"message": {"tool_calls": [{"function": {"name": "test"}}]}}) is True


def test_native_can_parse_without_tool_calls() -> None:
    assert native_parser().can_parse({"message": {"content": "Hello"}}) is False


def test_native_parse_extracts_tool_call() -> None:
    response = {"message": {"tool_calls": [{"id": "call_123", "function": {"name": "search_code", "arguments": '{"query": "test"}'}}]}}
    parsed = native_parser().parse(response)
    assert len(parsed.tool_calls) == 1
    assert parsed.tool_calls[0].name == "search_code"
    assert parsed.tool_calls[0].arguments == {"query": "test"}
    assert parsed.tool_calls[0].id == "call_123"


# ---------------------------------------------------------------- SDD 6.1: XML


def test_xml_can_parse_qwen_format() -> None:
    assert xml_parser().can_parse({"message": {"content": '<tools>{"name": "test"}</tools>'}}) is True


def test_xml_parse_qwen_format() -> None:
    content = 'I will search.\n\n<tools>\n{"name": "search_code", "arguments": {"query": "auth"}}\n</tools>'
    parsed = xml_parser().parse({"message": {"content": content}})
    assert len(parsed.tool_calls) == 1
    assert parsed.tool_calls[0].name == "search_code"
    assert parsed.tool_calls[0].arguments == {"query": "auth"}
    assert "I will search." in parsed.content
    assert "<tools>" not in parsed.content


def test_xml_parse_anthropic_format() -> None:
    parsed = xml_parser().parse({"message": {"content": '<tool_use>{"name": "read_file", "arguments": {"path": "foo.py"}}</tool_use>'}})
    assert len(parsed.tool_calls) == 1
    assert parsed.tool_calls[0].name == "read_file"


# ---------------------------------------------------------------- SDD 6.1: composite


def test_composite_tries_native_first() -> None:
    response = {"message": {"tool_calls": [{"function": {"name": "native_tool"}}], "content": '<tools>{"name": "xml_tool"}</tools>'}}
    parsed = composite_parser().parse(response)
    assert parsed.tool_calls[0].name == "native_tool"  # native comes first...
    assert [c.name for c in parsed.tool_calls] == ["native_tool", "xml_tool"]  # ...and the XML call is kept (HLD)


def test_composite_falls_back_to_xml() -> None:
    parsed = composite_parser().parse({"message": {"content": '<tools>{"name": "xml_only"}</tools>'}})
    assert len(parsed.tool_calls) == 1
    assert parsed.tool_calls[0].name == "xml_only"


def test_composite_handles_malformed_gracefully() -> None:
    parsed = composite_parser().parse({"message": {"content": "<tools>broken json</tools>"}})
    assert parsed.tool_calls == []


# ---------------------------------------------------------------- HLD 8.1 / 8.3


def test_hld_openai_native_parser() -> None:
    parsed = native_parser().parse({"message": {"tool_calls": [{"function": {"name": "search", "arguments": "{}"}}]}})
    assert len(parsed.tool_calls) == 1
    assert parsed.tool_calls[0].name == "search"


def test_hld_xml_parser_anthropic() -> None:
    parsed = xml_parser().parse('<tool_use>{"name": "search", "arguments": {"query": "test"}}</tool_use>')
    assert parsed.tool_calls[0].arguments["query"] == "test"


def test_hld_composite_parser_mixed() -> None:
    response = {"message": {"tool_calls": [{"function": {"name": "tool1", "arguments": "{}"}}], "content": '<tools>{"name": "tool2"}</tools>'}}
    parsed = composite_parser().parse(response)
    assert len(parsed.tool_calls) == 2


def test_hld_malformed_xml_graceful() -> None:
    malformed_inputs = ["<tools>not json</tools>", "<tool_use><name>test</broken xml", '{"name": "test", unclosed', "", None]
    parser = composite_parser()
    for item in malformed_inputs:
        result = parser.parse(item)
        assert isinstance(result, ParsedResponse)
        assert all(call.name for call in result.tool_calls)
