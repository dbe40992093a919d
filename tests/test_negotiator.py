"""Negotiation order: explicit config beats tuned beats model override beats provider default."""

from __future__ import annotations

import pytest

from utp.adapters import (
    AnthropicDefinitionAdapter,
    AnthropicResultAdapter,
    OllamaDefinitionAdapter,
    OllamaResultAdapter,
    OpenAIDefinitionAdapter,
    OpenAIResultAdapter,
    PromptDefinitionAdapter,
    TextResultAdapter,
)
from utp.config import ConfigError, parse_config
from utp.formats import PRESETS, FormatBundle
from utp.negotiator import (
    MODEL_OVERRIDES,
    PROVIDER_DEFAULTS,
    FormatNegotiator,
    ModelOverride,
    Negotiated,
    fit_to_provider,
    negotiated_for,
)
from utp.protocols import ToolCallParser
from utp.tuned import TunedProfile
from utp.types import ToolFormat

CONFIG = parse_config(
    """
[profiles.boxxie]
provider = "ollama"
model = "qwen3:8b"
[profiles.boxxie.tools]
definition_format = "openai"
call_parser = "qwen_xml"
result_format = "openai"

[profiles.auto-box]
provider = "ollama"
model = "qwen3:8b"
[profiles.auto-box.tools]
call_parser = "auto"

[profiles.gemma]
provider = "ollama"
model = "gemma3:4b"
""",
    source="llmc.toml",
)

TUNED = {
    "qwen3:8b": TunedProfile(
        model="qwen3:8b",
        bundle=PRESETS["prompt-hermes"],
        preset="prompt-hermes",
        fallbacks=("native", "fewshot-json"),
        runner_up="native",
    ),
    "gemma3": TunedProfile(model="gemma3", bundle=PRESETS["prompt-json"], preset="prompt-json"),
}

WEATHER = {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}


def test_explicit_configuration_beats_everything():
    negotiated = FormatNegotiator(CONFIG, TUNED).negotiate("ollama", "qwen3:8b", profile="boxxie")
    assert negotiated.source == "explicit"
    assert negotiated.bundle == FormatBundle("openai", "hermes", "openai")
    assert isinstance(negotiated.definition_adapter, OpenAIDefinitionAdapter)
    assert isinstance(negotiated.result_adapter, OpenAIResultAdapter)
    assert negotiated.fallbacks == []
    assert "call_parser=hermes" in negotiated.reason


def test_profile_found_by_provider_and_model_when_not_named():
    negotiated = FormatNegotiator(CONFIG, TUNED).negotiate("ollama", "qwen3:8b")
    assert negotiated.source == "explicit"  # boxxie is the first profile for this model


def test_auto_configuration_defers_to_the_tuned_profile():
    negotiated = FormatNegotiator(CONFIG, TUNED).negotiate("ollama", "qwen3:8b", profile="auto-box")
    assert negotiated.source == "tuned"
    assert negotiated.bundle == PRESETS["prompt-hermes"]
    assert negotiated.fallbacks == [PRESETS["native"], PRESETS["fewshot-json"]]
    assert isinstance(negotiated.definition_adapter, PromptDefinitionAdapter)
    assert negotiated.definition_adapter.family_name == "hermes"
    assert isinstance(negotiated.result_adapter, TextResultAdapter)


def test_tuned_profile_matches_the_name_without_its_tag():
    negotiated = FormatNegotiator(tuned=TUNED).negotiate("ollama", "gemma3:27b")
    assert (negotiated.source, negotiated.bundle) == ("tuned", PRESETS["prompt-json"])


def test_tuned_beats_model_override():
    assert any(o.matches("gemma3:27b") for o in MODEL_OVERRIDES)
    assert FormatNegotiator(tuned=TUNED).negotiate("ollama", "gemma3:27b").source == "tuned"


def test_model_override_beats_provider_default():
    negotiated = FormatNegotiator().negotiate("ollama", "gemma3:4b")
    assert negotiated.source == "model_override"
    assert negotiated.bundle.definition_format == "prompt"
    assert "gemma3" in negotiated.reason


def test_model_override_matches_namespaced_models():
    assert FormatNegotiator().negotiate("ollama", "hf.co/someone/gemma3-GGUF:Q4_K_M").source == "model_override"


def test_custom_override_table_is_data():
    overrides = [ModelOverride("*coder*", "prompt-qwen3-coder", "writes XML in content")]
    negotiated = FormatNegotiator(model_overrides=overrides).negotiate("ollama", "qwen2.5-coder:7b")
    assert negotiated.bundle == PRESETS["prompt-qwen3-coder"]
    assert FormatNegotiator(model_overrides=overrides).negotiate("ollama", "gemma3:4b").source == "provider_default"
    with pytest.raises(ValueError, match="unknown preset 'prompt-klingon'"):
        ModelOverride("*", "prompt-klingon", "typo")


@pytest.mark.parametrize(
    ("provider", "definition", "result"),
    [
        ("ollama", OllamaDefinitionAdapter, OllamaResultAdapter),
        ("openai", OpenAIDefinitionAdapter, OpenAIResultAdapter),
        ("anthropic", AnthropicDefinitionAdapter, AnthropicResultAdapter),
        ("embedded", PromptDefinitionAdapter, TextResultAdapter),
    ],
)
def test_provider_defaults(provider, definition, result):
    negotiated = FormatNegotiator().negotiate(provider, "some-model")
    assert negotiated.source == "provider_default"
    assert negotiated.bundle == PROVIDER_DEFAULTS[provider]
    assert isinstance(negotiated.definition_adapter, definition)
    assert isinstance(negotiated.result_adapter, result)


def test_embedded_default_is_few_shot_json():
    negotiated = FormatNegotiator().negotiate("embedded", "smollm2-135m")
    assert negotiated.bundle == PRESETS["fewshot-json"]
    demos = negotiated.demonstrations([WEATHER])
    calls = [m["content"] for m in demos if m["role"] == "assistant" and '"name": "get_weather"' in m["content"]]
    assert calls, "the demonstrations show no call"


def test_native_formats_have_no_demonstrations():
    assert FormatNegotiator().negotiate("ollama", "qwen3:8b").demonstrations([WEATHER]) == []


def test_tuned_native_bundle_is_moved_to_the_providers_wire_shapes():
    tuned = {"llama3.2": TunedProfile(model="llama3.2", bundle=PRESETS["native"], preset="native")}
    negotiated = FormatNegotiator(tuned=tuned).negotiate("openai", "llama3.2")
    assert negotiated.bundle == PRESETS["native-openai"]
    assert fit_to_provider(PRESETS["prompt-hermes"], "openai") == PRESETS["prompt-hermes"]
    assert fit_to_provider(PRESETS["native"], "embedded") == PRESETS["native"]


def test_parser_factory_uses_the_bundles_parser_and_the_offered_tools():
    negotiated = FormatNegotiator(CONFIG).negotiate("ollama", "qwen3:8b", profile="boxxie")
    parser = negotiated.parser_factory([WEATHER])
    assert isinstance(parser, ToolCallParser)
    parsed = parser.parse('<tool_call>\n{"name": "get_wether", "arguments": {"city": "Oslo"}}\n</tool_call>')
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("get_weather", {"city": "Oslo"})]


def test_each_negotiation_gets_fresh_result_adapters():
    negotiator = FormatNegotiator()
    first = negotiator.negotiate("openai", "gpt-4o")
    second = negotiator.negotiate("openai", "gpt-4o")
    assert first.result_adapter is not second.result_adapter


def test_sdd_style_mapping_config_applies_to_every_model():
    negotiated = FormatNegotiator({"call_parser": "anthropic_xml"}).negotiate("ollama", "x")
    assert negotiated.source == "explicit"
    assert negotiated.bundle == PRESETS["native"].with_parser("anthropic_xml")


def test_sdd_style_mapping_config_is_validated():
    with pytest.raises(ConfigError, match="call_parer: unknown key; did you mean 'call_parser'"):
        FormatNegotiator({"call_parer": "auto"})


def test_unknown_profile_and_provider_are_clear_errors():
    with pytest.raises(ConfigError, match="no profile named 'nope'"):
        FormatNegotiator(CONFIG).negotiate("ollama", "m", profile="nope")
    with pytest.raises(ConfigError, match="no configuration was loaded"):
        FormatNegotiator().negotiate("ollama", "m", profile="boxxie")
    with pytest.raises(ValueError, match="unknown provider 'llamafile'; known: ollama"):
        FormatNegotiator().negotiate("llamafile", "m")


def test_negotiated_for_a_preset_and_its_field_order():
    negotiated = negotiated_for(PRESETS["fewshot-pythonic"], source="tuned")
    assert isinstance(negotiated, Negotiated)
    bundle, definition, factory, result, source = (
        negotiated.bundle,
        negotiated.definition_adapter,
        negotiated.parser_factory,
        negotiated.result_adapter,
        negotiated.source,
    )
    assert list(Negotiated.__dataclass_fields__)[:5] == ["bundle", "definition_adapter", "parser_factory", "result_adapter", "source"]
    assert definition.family_name == "pythonic" and callable(factory) and isinstance(result, TextResultAdapter)
    assert (bundle, source) == (PRESETS["fewshot-pythonic"], "tuned")
    with pytest.raises(ValueError, match="source 'magic'"):
        negotiated_for(PRESETS["native"], source="magic")


# -- the SDD's API --------------------------------------------------------------------


def test_detect_format_per_provider_and_model():
    negotiator = FormatNegotiator()
    assert negotiator.detect_format("openai", "gpt-4o") is ToolFormat.OPENAI
    assert negotiator.detect_format("anthropic", "claude") is ToolFormat.ANTHROPIC
    assert negotiator.detect_format("ollama", "qwen3") is ToolFormat.OLLAMA
    assert negotiator.detect_format("gemini", "gemini-2.0") is ToolFormat.OPENAI
    assert negotiator.detect_format("ollama", "gemma3:4b") is ToolFormat.PROMPT
    assert negotiator.detect_format("unknown-provider") is ToolFormat.AUTO


def test_detect_format_honours_explicit_config():
    assert FormatNegotiator({"definition_format": "anthropic"}).detect_format("ollama", "m") is ToolFormat.ANTHROPIC


def test_sdd_factories_accept_tool_formats_and_strings():
    negotiator = FormatNegotiator()
    assert isinstance(negotiator.get_definition_adapter(), OpenAIDefinitionAdapter)
    assert isinstance(negotiator.get_definition_adapter(ToolFormat.ANTHROPIC), AnthropicDefinitionAdapter)
    assert isinstance(negotiator.get_definition_adapter("ollama"), OllamaDefinitionAdapter)
    assert isinstance(negotiator.get_definition_adapter(ToolFormat.PROMPT), PromptDefinitionAdapter)
    assert isinstance(negotiator.get_result_adapter(ToolFormat.AUTO), OpenAIResultAdapter)
    assert isinstance(negotiator.get_result_adapter(ToolFormat.PROMPT), TextResultAdapter)
    assert isinstance(negotiator.get_result_adapter("anthropic"), AnthropicResultAdapter)


def test_sdd_call_parser_reads_native_and_content_calls():
    parser = FormatNegotiator().get_call_parser(ToolFormat.OLLAMA)
    response = {
        "message": {
            "tool_calls": [{"function": {"name": "native_tool", "arguments": {}}}],
            "content": '<tools>{"name": "xml_tool", "arguments": {}}</tools>',
        }
    }
    names = {c.name for c in parser.parse(response).tool_calls}
    assert "native_tool" in names and "xml_tool" in names
    only_native = FormatNegotiator().get_call_parser("openai")
    assert {c.name for c in only_native.parse(response).tool_calls} == {"native_tool"}


def test_from_files_reads_configuration_and_tuned_profiles(tmp_path):
    from utp.tuned import save_tuned

    config = tmp_path / "llmc.toml"
    config.write_text('[profiles.p]\nprovider = "ollama"\nmodel = "m"\n[profiles.p.tools]\ncall_parser = "hermes"\n')
    tuned = tmp_path / "tuned.toml"
    save_tuned({"qwen3:8b": TunedProfile(model="qwen3:8b", bundle=PRESETS["prompt-json"], preset="prompt-json")}, tuned)
    negotiator = FormatNegotiator.from_files(config=config, tuned=tuned)
    assert negotiator.negotiate("ollama", "qwen3:8b").source == "tuned"
    assert negotiator.negotiate("ollama", "m", profile="p").bundle.call_parser == "hermes"
    # a missing tuned file means "nothing measured yet"; a missing configuration named explicitly is an error
    assert FormatNegotiator.from_files(tuned=tmp_path / "absent.toml").negotiate("ollama", "x").source == "provider_default"
    with pytest.raises(ConfigError):
        FormatNegotiator.from_files(config=tmp_path / "absent.toml")
