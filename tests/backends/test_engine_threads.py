"""``num_thread`` bounds the embedded engine's prompt processing as well as its decoding.

llama-cpp-python batches the prompt on every core unless told otherwise, so
``num_thread=1`` used to run prompt evaluation on two threads: two engines on
a 2-core machine then ran four spinning threads and each evaluated prompts
several times slower. Ollama's ``num_thread`` sets both.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from utp.backends import llama_engine
from utp.backends.models import LOCAL_MODELS


class _RecordingLlama:
    created: list[dict[str, Any]] = []

    def __init__(self, **kwargs: Any) -> None:
        self.created.append(kwargs)
        self.metadata = {"tokenizer.chat_template": "{{ messages }}"}


@pytest.fixture
def fake_llama_cpp(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    _RecordingLlama.created = []
    monkeypatch.setattr(llama_engine, "import_llama_cpp", lambda: SimpleNamespace(Llama=_RecordingLlama))
    monkeypatch.setattr(llama_engine, "ensure_engine_runs", lambda path: None)
    return _RecordingLlama.created


def test_num_thread_sets_the_batch_threads_too(fake_llama_cpp: list[dict[str, Any]], tmp_path: Path) -> None:
    spec = LOCAL_MODELS["qwen2.5-coder-0.5b"]
    llama_engine.EngineCache._load(spec, tmp_path / "model.gguf", 2048, 1)
    assert fake_llama_cpp[-1]["n_threads"] == 1
    assert fake_llama_cpp[-1]["n_threads_batch"] == 1


def test_no_num_thread_leaves_the_engine_its_default(fake_llama_cpp: list[dict[str, Any]], tmp_path: Path) -> None:
    spec = LOCAL_MODELS["qwen2.5-coder-0.5b"]
    llama_engine.EngineCache._load(spec, tmp_path / "model.gguf", 2048, None)
    assert "n_threads" not in fake_llama_cpp[-1] and "n_threads_batch" not in fake_llama_cpp[-1]
