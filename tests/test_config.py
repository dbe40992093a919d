"""Configuration profiles (``llmc.toml``) and tuned-profile files.

Errors must name the file, the line and the key: a user with a typo in a
60-line config should not have to bisect it.
"""

from __future__ import annotations

import os
import textwrap
import tomllib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from utp.config import ConfigError, KeyLines, ToolsSettings, load_config, parse_config, split_dotted
from utp.formats import PRESETS, FormatBundle
from utp.tuned import (
    TunedProfile,
    TunedProfileError,
    find_tuned,
    load_tuned,
    render_llmc_snippet,
    save_tuned,
)

SEED_CONFIG = textwrap.dedent(
    """\
    # llmc.toml as the seeds write it
    [profiles.boxxie]
    provider = "ollama"
    model = "qwen3-next-80b-tools"
    url = "http://athena:11434"

    # Tool calling format configuration
    [profiles.boxxie.tools]
    definition_format = "openai"      # How to send tool definitions
    call_parser = "auto"              # How to parse tool calls
    result_format = "openai"          # How to format tool results

    [profiles.claude-agent]
    provider = "anthropic"
    model = "claude-sonnet-4-20250514"

    [profiles.claude-agent.tools]
    definition_format = "anthropic"
    call_parser = "anthropic_xml"
    result_format = "anthropic"
    """
)


def _write(tmp_path, text, name="llmc.toml"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def _error(tmp_path, text) -> ConfigError:
    path = _write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(path) in str(info.value)
    return info.value


# -- loading ------------------------------------------------------------------


def test_seed_config_loads(tmp_path):
    config = load_config(_write(tmp_path, SEED_CONFIG))
    boxxie = config.profile("boxxie")
    assert (boxxie.provider, boxxie.model, boxxie.url) == ("ollama", "qwen3-next-80b-tools", "http://athena:11434")
    assert boxxie.tools == ToolsSettings(definition_format="openai", call_parser="auto", result_format="openai")
    claude = config.profile("claude-agent")
    assert claude.tools.call_parser == "anthropic_xml"
    assert claude.tools.is_explicit


def test_seed_call_parser_spellings_are_accepted_and_normalised():
    def parser_of(value):
        text = f'[profiles.p]\nprovider = "ollama"\nmodel = "m"\n[profiles.p.tools]\ncall_parser = "{value}"\n'
        return parse_config(text).profile("p").tools.call_parser

    assert parser_of("openai") == "native"
    assert parser_of("native") == "native"
    assert parser_of("auto") == "auto"
    assert parser_of("qwen_xml") == "hermes"
    assert parser_of("anthropic_xml") == "anthropic_xml"
    assert parser_of("hermes") == "hermes"


def test_options_table_and_quoted_profile_names(tmp_path):
    config = load_config(
        _write(
            tmp_path,
            """
            [profiles."qwen3:8b"]
            provider = "ollama"
            model = "qwen3:8b"
            [profiles."qwen3:8b".options]
            num_ctx = 8192
            temperature = 0.2
            """,
        )
    )
    assert config.profile("qwen3:8b").options == {"num_ctx": 8192, "temperature": 0.2}
    assert config.profile("qwen3:8b").tools == ToolsSettings()


def test_other_top_level_tables_belong_to_the_host_application(tmp_path):
    config = load_config(_write(tmp_path, '[agent]\nname = "boxxie"\n[profiles.p]\nprovider = "openai"\nmodel = "gpt"\n'))
    assert list(config.profiles) == ["p"]


def test_find_profile_by_provider_and_model(tmp_path):
    config = load_config(_write(tmp_path, SEED_CONFIG))
    assert config.find("anthropic", "claude-sonnet-4-20250514").name == "claude-agent"
    assert config.find("ollama", "claude-sonnet-4-20250514") is None


# -- errors name file, line and key -------------------------------------------------


def test_unknown_key_in_tools_is_rejected_with_line_and_suggestion(tmp_path):
    error = _error(
        tmp_path,
        """\
        [profiles.boxxie]
        provider = "ollama"
        model = "qwen3"

        [profiles.boxxie.tools]
        definition_format = "openai"
        call_parer = "auto"
        """,
    )
    assert error.key == "profiles.boxxie.tools.call_parer"
    assert error.line == 7
    assert "did you mean 'call_parser'" in str(error)
    assert str(error).startswith(f"{error.file}:7: profiles.boxxie.tools.call_parer:")


def test_unknown_profile_key_is_rejected(tmp_path):
    error = _error(tmp_path, '[profiles.p]\nprovider = "ollama"\nmodel = "m"\ntemperature = 0.1\n')
    assert (error.key, error.line) == ("profiles.p.temperature", 4)
    assert "unknown key" in error.message


def test_bad_call_parser_value_names_key_and_line(tmp_path):
    error = _error(tmp_path, SEED_CONFIG.replace('call_parser = "anthropic_xml"', 'call_parser = "qwen_xmll"'))
    assert error.key == "profiles.claude-agent.tools.call_parser"
    assert error.line == 19
    assert "unknown call parser 'qwen_xmll'" in error.message
    assert "hermes" in error.message


@pytest.mark.parametrize(
    ("line", "key", "fragment"),
    [
        ('definition_format = "xml"', "definition_format", "'xml' is not one of"),
        ('result_format = "tool"', "result_format", "'tool' is not one of"),
        ('prompt_style = "fewshot"', "prompt_style", "'fewshot' is not one of"),
        ('prompt_family = "klingon"', "prompt_family", "unknown call family 'klingon'"),
        ("call_parser = 3", "call_parser", "must be a non-empty string"),
        ('prompt_style = "few_shot"', "prompt_style", "needs a prompt_family"),
        ('definition_format = "prompt"', "definition_format", "needs prompt_family"),
    ],
)
def test_bad_tools_values(tmp_path, line, key, fragment):
    error = _error(tmp_path, f'[profiles.p]\nprovider = "ollama"\nmodel = "m"\n\n[profiles.p.tools]\n{line}\n')
    assert error.key == f"profiles.p.tools.{key}"
    assert error.line == 6
    assert fragment in error.message


@pytest.mark.parametrize(
    ("body", "key", "line", "fragment"),
    [
        ('provider = "llamafile"\nmodel = "m"', "provider", 2, "unknown provider 'llamafile'"),
        ('model = "m"', "provider", 1, "is required"),
        ('provider = "ollama"', "model", 1, "is required"),
        ('provider = "ollama"\nmodel = ""', "model", 3, "non-empty string"),
        ('provider = "ollama"\nmodel = "m"\nurl = "athena:11434"', "url", 4, "not an http(s) URL"),
        ('provider = "ollama"\nmodel = "m"\noptions = 3', "options", 4, "must be a table"),
        ('provider = "ollama"\nmodel = "m"\ntools = "auto"', "tools", 4, "must be a table"),
    ],
)
def test_bad_profile_values(tmp_path, body, key, line, fragment):
    error = _error(tmp_path, f"[profiles.p]\n{body}\n")
    assert error.key == f"profiles.p.{key}"
    assert error.line == line
    assert fragment in error.message


def test_inline_tools_table_errors_point_at_the_tools_line(tmp_path):
    error = _error(tmp_path, '[profiles.p]\nprovider = "ollama"\nmodel = "m"\ntools = { call_parser = "nope" }\n')
    assert (error.key, error.line) == ("profiles.p.tools.call_parser", 4)


def test_dotted_keys_are_located(tmp_path):
    error = _error(tmp_path, '[profiles.p]\nprovider = "ollama"\nmodel = "m"\ntools.result_format = "xml"\n')
    assert (error.key, error.line) == ("profiles.p.tools.result_format", 4)


def test_misspelt_profiles_table_is_an_error(tmp_path):
    error = _error(tmp_path, '[profile.p]\nprovider = "ollama"\n')
    assert error.key == "profile"
    assert error.line == 1
    assert "did you mean 'profiles'" in error.message


def test_invalid_toml_reports_the_line(tmp_path):
    error = _error(tmp_path, '[profiles.p]\nprovider = "ollama\n')
    assert error.line == 2
    assert "invalid TOML" in error.message


def test_missing_file_and_unknown_profile(tmp_path):
    with pytest.raises(ConfigError, match="file not found"):
        load_config(tmp_path / "absent.toml")
    config = parse_config(SEED_CONFIG, source="llmc.toml")
    with pytest.raises(ConfigError, match="no profile named 'box' .profiles: boxxie, claude-agent."):
        config.profile("box")


def test_key_lines_scanner():
    lines = KeyLines('a = 1\n[t."x.y"]\n  b.c = 2 # note\n[[arr]]\nd = 3\n')
    assert lines.line_of(("a",)) == 1
    assert lines.line_of(("t", "x.y", "b", "c")) == 3
    assert lines.line_of(("t", "x.y", "zzz")) == 2
    assert lines.line_of(("arr", "d")) == 5
    assert lines.line_of(("nothing",)) is None
    assert split_dotted('profiles . "a.b" . \'c\'') == ("profiles", "a.b", "c")


# -- ToolsSettings.apply_to -------------------------------------------------------


def test_auto_fields_leave_the_base_alone():
    base = PRESETS["prompt-hermes"]
    assert ToolsSettings(call_parser="auto", definition_format="auto").apply_to(base) == base
    assert not ToolsSettings(call_parser="auto").is_explicit


def test_switching_to_prompt_definitions_switches_results_and_style():
    bundle = ToolsSettings(definition_format="prompt", prompt_family="json").apply_to(PRESETS["native"])
    assert bundle == FormatBundle("prompt", "auto", "text", "instructions", "json")


def test_switching_to_native_definitions_drops_prompt_teaching():
    bundle = ToolsSettings(definition_format="openai").apply_to(PRESETS["fewshot-hermes"])
    assert bundle == FormatBundle("openai", "auto", "openai", "none", None)


def test_switching_to_constrained_definitions_gives_the_constrained_preset():
    assert ToolsSettings(definition_format="constrained").apply_to(PRESETS["native"]) == PRESETS["constrained-json"]
    assert ToolsSettings(definition_format="constrained").apply_to(PRESETS["fewshot-hermes"]) == PRESETS["constrained-json"]


def test_explicit_parser_only_overrides_the_parser():
    bundle = ToolsSettings(call_parser="hermes").apply_to(PRESETS["native"])
    assert bundle == PRESETS["native"].with_parser("hermes")


# -- tuned profiles -------------------------------------------------------------------

EVIDENCE = {
    "runs": 40,
    "task_success": 0.925,
    "ci_low": 0.8,
    "ci_high": 0.97,
    "parse_success": 1.0,
    "decode_tps": 41.5,
    "margin": 0.05,
    "overlaps_runner_up": True,
}


def _tuned(model="qwen3:8b", preset="prompt-hermes"):
    return TunedProfile(
        model=model,
        bundle=PRESETS[preset],
        preset=preset,
        evidence=dict(EVIDENCE),
        fallbacks=("native", "fewshot-json"),
        runner_up="native",
    )


def test_tuned_round_trip_keeps_everything(tmp_path):
    path = save_tuned([_tuned(), _tuned("llama3.2:3b", "native")], tmp_path / "tuned.toml")
    loaded = load_tuned(path)
    assert loaded == {"qwen3:8b": _tuned(), "llama3.2:3b": _tuned("llama3.2:3b", "native")}
    assert loaded["qwen3:8b"].fallback_bundles() == [PRESETS["native"], PRESETS["fewshot-json"]]


def test_tuned_file_layout_matches_the_documented_format(tmp_path):
    path = save_tuned({"qwen3:8b": _tuned()}, tmp_path / "tuned.toml")
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    table = data["models"]["qwen3:8b"]
    assert table["preset"] == "prompt-hermes"
    assert table["definition_format"] == "prompt"
    assert table["prompt_family"] == "hermes"
    assert table["fallbacks"] == ["native", "fewshot-json"]
    assert table["evidence"]["runner_up"] == "native"
    assert table["evidence"]["overlaps_runner_up"] is True


def test_save_is_atomic_and_merge_keeps_other_models(tmp_path):
    path = tmp_path / "tuned.toml"
    save_tuned([_tuned("a")], path)
    save_tuned([_tuned("b")], path, merge=True)
    assert set(load_tuned(path)) == {"a", "b"}
    save_tuned([_tuned("c")], path)
    assert set(load_tuned(path)) == {"c"}
    assert [p.name for p in tmp_path.iterdir()] == ["tuned.toml"]  # no temp files left behind


def test_failed_save_leaves_the_old_file(tmp_path, monkeypatch):
    path = save_tuned([_tuned("a")], tmp_path / "tuned.toml")
    before = path.read_text(encoding="utf-8")

    def broken_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        save_tuned([_tuned("b")], path)
    assert path.read_text(encoding="utf-8") == before
    assert [p.name for p in tmp_path.iterdir()] == ["tuned.toml"]


def test_load_directory_merges_files_and_rejects_duplicates(tmp_path):
    save_tuned([_tuned("a")], tmp_path / "one.toml")
    save_tuned([_tuned("b")], tmp_path / "two.toml")
    assert set(load_tuned(tmp_path)) == {"a", "b"}
    save_tuned([_tuned("a")], tmp_path / "three.toml")
    with pytest.raises(TunedProfileError, match="also tuned in"):
        load_tuned(tmp_path)


def test_preset_alone_is_enough(tmp_path):
    path = _write(tmp_path, '[models."m"]\npreset = "fewshot-json"\n', "t.toml")
    assert load_tuned(path)["m"].bundle == PRESETS["fewshot-json"]


@pytest.mark.parametrize(
    ("body", "key", "line", "fragment"),
    [
        ('preset = "native"\ncolour = "red"', 'models.m.colour', 3, "unknown key"),
        ('preset = "nativ"', "models.m.preset", 2, "unknown preset 'nativ'"),
        ('definition_format = "ollama"\ncall_parser = "nope"', "models.m.call_parser", 3, "unknown call parser"),
        ('preset = "native"\nfallbacks = ["prompt-hermes", "bogus"]', "models.m.fallbacks", 3, "unknown preset 'bogus'"),
        ('preset = "native"\n[models."m".evidence]\nruns = "forty"', "models.m.evidence.runs", 4, "must be int"),
        ('preset = "native"\n[models."m".evidence]\nruns = true', "models.m.evidence.runs", 4, "must be int"),
        ('preset = "native"\n[models."m".evidence]\nluck = 1', "models.m.evidence.luck", 4, "unknown evidence key"),
        ('fallbacks = []', "models.m", 1, "needs a preset or the format fields"),
        ('definition_format = "prompt"\nprompt_style = "few_shot"', "models.m.prompt_style", 3, "needs a prompt_family"),
    ],
)
def test_bad_tuned_files_name_file_line_and_key(tmp_path, body, key, line, fragment):
    path = _write(tmp_path, f'[models."m"]\n{body}\n', "t.toml")
    with pytest.raises(TunedProfileError) as info:
        load_tuned(path)
    assert (info.value.key, info.value.line) == (key, line)
    assert fragment in info.value.message
    assert str(path) in str(info.value)


def test_integer_evidence_is_accepted_where_a_rate_is_expected(tmp_path):
    path = _write(tmp_path, '[models."m"]\npreset = "native"\n[models."m".evidence]\ntask_success = 1\n', "t.toml")
    assert load_tuned(path)["m"].evidence == {"task_success": 1.0}


def test_find_tuned_matches_exact_then_without_tag_then_latest():
    tuned = {"qwen3:8b": _tuned("qwen3:8b"), "llama3.2": _tuned("llama3.2"), "phi4:latest": _tuned("phi4:latest")}
    assert find_tuned(tuned, "qwen3:8b").model == "qwen3:8b"
    assert find_tuned(tuned, "llama3.2:3b").model == "llama3.2"
    assert find_tuned(tuned, "phi4").model == "phi4:latest"
    assert find_tuned(tuned, "qwen3:4b") is None


def test_llmc_snippet_is_a_pasteable_tools_block():
    snippet = render_llmc_snippet("boxxie", _tuned())
    assert "[profiles.boxxie.tools]" in snippet
    assert "task success 0.925 (95% interval 0.800 to 0.970) over 40 runs" in snippet
    assert "intervals overlap" in snippet
    pasted = parse_config('[profiles.boxxie]\nprovider = "ollama"\nmodel = "qwen3:8b"\n' + snippet)
    assert pasted.profile("boxxie").tools.apply_to(FormatBundle()) == PRESETS["prompt-hermes"]


def test_llmc_snippet_quotes_awkward_profile_names():
    assert '[profiles."my box".tools]' in render_llmc_snippet("my box", _tuned(preset="native"))


_BUNDLES = st.sampled_from(list(PRESETS.values())) | st.builds(
    FormatBundle,
    definition_format=st.sampled_from(["openai", "ollama", "anthropic", "none"]),
    call_parser=st.sampled_from(["auto", "native", "hermes", "json", "pythonic"]),
    result_format=st.sampled_from(["openai", "ollama", "anthropic", "text"]),
)
_EVIDENCE = st.fixed_dictionaries(
    {},
    optional={
        "runs": st.integers(0, 10_000),
        "task_success": st.floats(0, 1),
        "ci_low": st.floats(0, 1),
        "ci_high": st.floats(0, 1),
        "decode_tps": st.floats(0, 500),
        "margin": st.floats(-1, 1),
        "overlaps_runner_up": st.booleans(),
    },
)


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    models=st.dictionaries(
        st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789.:-_/ ", min_size=1, max_size=30),
        st.tuples(_BUNDLES, _EVIDENCE, st.lists(st.sampled_from(list(PRESETS)), max_size=3), st.sampled_from([None, *PRESETS])),
        min_size=1,
        max_size=3,
    )
)
def test_tuned_round_trip_property(tmp_path, models):
    profiles = [
        TunedProfile(model=name, bundle=bundle, preset=None, evidence=evidence, fallbacks=tuple(fallbacks), runner_up=runner_up)
        for name, (bundle, evidence, fallbacks, runner_up) in models.items()
    ]
    path = save_tuned(profiles, tmp_path / "prop.toml")
    assert load_tuned(path) == {p.model: p for p in profiles}


def test_tuned_profile_keyed_by_eval_spec_matches_the_backends_model_name():
    from utp.formats import PRESETS
    from utp.tuned import TunedProfile, find_tuned

    tuned = {"local:smollm2-135m": TunedProfile(model="local:smollm2-135m", bundle=PRESETS["fewshot-json"], preset="fewshot-json")}
    assert find_tuned(tuned, "smollm2-135m") is tuned["local:smollm2-135m"]
    assert find_tuned(tuned, "local:smollm2-135m") is tuned["local:smollm2-135m"]
    assert find_tuned(tuned, "gemma3-270m") is None
