"""Format auto-tuning from the real recorded evals in the repository.

Two real models (the embedded SmolLM2-135M and Gemma 3 270M) were evaluated
under every preset; `utp tune` must choose each one's best format from those
measurements, and a loop configured with `auto` must then use that choice.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.tuning import tune
from tests.support.scripted_server import ScriptedServer, Turn
from utp import Tool, ToolCall
from utp.backends.ollama import OllamaBackend
from utp.config import parse_config
from utp.formats import PRESETS
from utp.loop import LoopLimits, Termination, ToolLoop
from utp.negotiator import FormatNegotiator
from utp.parsers import get_family
from utp.registry import ToolRegistry
from utp.tuned import load_tuned

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "reports" / "results"
REAL_MODELS = ("local:smollm2-135m", "local:gemma3-270m")

WEATHER = Tool(
    "get_weather",
    "Get the current weather for a city.",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)


@pytest.fixture(scope="module")
def tuned_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("tuned") / "tuned_profiles.toml"
    tune([RESULTS], path)
    return path


def test_tune_picks_different_formats_for_the_two_real_models(tuned_path: Path):
    profiles = load_tuned(tuned_path)
    assert set(REAL_MODELS) <= set(profiles)
    chosen = {model: profiles[model].preset for model in REAL_MODELS}
    assert all(preset in PRESETS for preset in chosen.values())
    assert len(set(chosen.values())) == 2, f"both models tuned to the same format: {chosen}"
    for model in REAL_MODELS:
        evidence = profiles[model].evidence
        assert evidence["runs"] > 0
        assert 0 <= evidence["ci_low"] <= evidence["task_success"] <= evidence["ci_high"] <= 1
        assert profiles[model].runner_up in PRESETS
        assert profiles[model].fallbacks and profiles[model].preset not in profiles[model].fallbacks


@pytest.mark.parametrize("model", REAL_MODELS)
def test_auto_configuration_uses_the_tuned_choice_and_explicit_wins(model: str, tuned_path: Path):
    profiles = load_tuned(tuned_path)
    bare = model.split(":", 1)[1]  # what make_backend reports for a local: spec
    negotiated = FormatNegotiator(tuned=profiles).negotiate("embedded", bare)
    assert negotiated.source == "tuned"
    assert negotiated.bundle == PRESETS[profiles[model].preset]
    # fallbacks keep the measured order; native ones are fitted to the provider's wire shape
    expected = [PRESETS[p] for p in profiles[model].fallbacks]
    assert [(b.prompt_style, b.prompt_family) for b in negotiated.fallbacks] == [(b.prompt_style, b.prompt_family) for b in expected]

    explicit = parse_config(
        f'[profiles.mine]\nprovider = "embedded"\nmodel = "{bare}"\n[profiles.mine.tools]\n'
        'definition_format = "prompt"\ncall_parser = "auto"\nresult_format = "text"\n'
        'prompt_style = "instructions"\nprompt_family = "mistral"\n',
        "llmc.toml",
    )
    pinned = FormatNegotiator(config=explicit, tuned=profiles).negotiate("embedded", bare, profile="mine")
    assert pinned.source == "explicit" and pinned.bundle.prompt_family == "mistral"


@pytest.mark.anyio
@pytest.mark.parametrize("model", REAL_MODELS)
async def test_a_loop_with_auto_runs_in_the_tuned_format(model: str, tuned_path: Path):
    profiles = load_tuned(tuned_path)
    bare = model.split(":", 1)[1]
    negotiated = FormatNegotiator(tuned=profiles).negotiate("embedded", bare)
    bundle = negotiated.bundle
    call = ToolCall("get_weather", {"city": "Paris"})
    written = get_family(bundle.prompt_family).render([call]) if bundle.prompt_family else ""
    native = [{"name": "get_weather", "arguments": {"city": "Paris"}}] if not bundle.prompt_family else ()
    turns = [Turn(content=written, tool_calls=native), Turn(content="It is 18 degrees in Paris.")]
    executed: list[dict] = []
    registry = ToolRegistry()
    registry.register(WEATHER, lambda city: executed.append({"city": city}) or {"temp_c": 18})
    with ScriptedServer(turns) as server:  # a scripted Ollama test double on loopback
        backend = OllamaBackend(server.url, retries=0)
        try:
            result = await ToolLoop(backend, registry, negotiated, bare, limits=LoopLimits(max_rounds=4)).run(
                "What's the weather in Paris?"
            )
        finally:
            await backend.aclose()
        first = server.chat_bodies[0]
    assert result.termination is Termination.FINAL_ANSWER
    assert executed == [{"city": "Paris"}]
    if bundle.sends_native_tools:
        assert first.get("tools")
    else:
        assert not first.get("tools")
        system = first["messages"][0]["content"]
        assert written.strip().splitlines()[0] in system or any(
            written.strip() in (m.get("content") or "") for m in first["messages"]
        )


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
