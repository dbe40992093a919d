"""The whole loop on a real model in-process: embedded SmolLM2-135M, few-shot JSON.

Opt-in (`make test-local`): needs llama-cpp-python (`make local-models`).
The model is tiny, so the request is the kind its demonstrations show; what
is checked is that a call the model really wrote was parsed, checked and
executed, and that its result went back to the model.
"""

from __future__ import annotations

import importlib.util

import pytest

from utp import Tool
from utp.backends import make_backend
from utp.formats import PRESETS
from utp.loop import LoopLimits, ToolLoop
from utp.negotiator import negotiated_for
from utp.registry import ToolRegistry

pytestmark = [
    pytest.mark.local,
    pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None, reason="llama-cpp-python not installed: run `make local-models`"),
]

WEATHER = Tool(
    "get_weather",
    "Get the current weather for a city.",
    {"type": "object", "properties": {"city": {"type": "string", "description": "City name, e.g. Paris"}}, "required": ["city"]},
)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_smollm2_calls_a_tool_through_the_loop() -> None:
    executed: list[str] = []
    registry = ToolRegistry()
    registry.register(WEATHER, lambda city: executed.append(city) or {"city": city, "temp_c": 18, "sky": "clear"})
    backend, model = make_backend("local:smollm2-135m")
    try:
        loop = ToolLoop(
            backend,
            registry,
            negotiated_for(PRESETS["fewshot-json"]),
            model,
            options={"temperature": 0, "seed": 42, "num_ctx": 4096, "num_predict": 128},
            limits=LoopLimits(max_rounds=3),
        )
        result = await loop.run("What is the weather in Tokyo?")
    finally:
        await backend.aclose()
    rounds = result.transcript.to_dict()
    calls = [call for rnd in rounds for call in rnd["calls"]]
    assert calls, f"the model made no call: {rounds[0]['raw_text']!r}"
    assert calls[0]["name"] == "get_weather" and calls[0]["format"] == "json"
    assert calls[0]["decision"] == "executed" and executed
    assert rounds[0]["counters"]["completion_tokens"] > 0
