"""Starting and stopping llama-server, against a process test double (the real one: `make test-local`)."""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path

import pytest

from tests.support.gguf_writer import write_gguf
from utp.backends import managed_transport
from utp.backends.base import BackendError, BackendErrorKind
from utp.backends.llama_server import LlamaServerBackend, LlamaServerTransport, ServerPool, server_binary
from utp.backends.models import LocalModel

DOUBLE = Path(__file__).resolve().parents[1] / "support" / "fake_llama_server.py"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def fake_binary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    wrapper = tmp_path / "llama-server"
    wrapper.write_text(f"#!/bin/sh\nexec {sys.executable} {DOUBLE} \"$@\"\n")
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("UTP_LLAMA_SERVER", str(wrapper))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("FAKE_LLAMA_ARGV", str(tmp_path / "argv.json"))
    return wrapper


@pytest.fixture
def model(tmp_path: Path) -> LocalModel:
    gguf = write_gguf(tmp_path / "m.gguf", {"general.architecture": "qwen2"})
    return LocalModel(name="tiny-tools", package="none", loader=lambda: gguf, license="MIT", description="header only",
                      family="qwen2", parameter_size="0M", quantization_level="Q0", sha256="ab" * 32)


def test_a_missing_build_says_how_to_make_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("UTP_LLAMA_SERVER", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    with pytest.raises(BackendError) as info:
        server_binary()
    assert info.value.kind is BackendErrorKind.NOT_INSTALLED
    assert "make llama-server" in str(info.value) and str(tmp_path / "utp" / "llama-server" / "bin" / "llama-server") in str(info.value)
    monkeypatch.setenv("UTP_LLAMA_SERVER", str(tmp_path / "nowhere"))
    with pytest.raises(BackendError, match=r"\$UTP_LLAMA_SERVER=.*nowhere is missing"):
        server_binary()


@pytest.mark.anyio
async def test_started_on_first_request_shared_and_stopped(fake_binary: Path, model: LocalModel, tmp_path: Path) -> None:
    pool = ServerPool()
    transport = LlamaServerTransport(model, n_threads=1, n_ctx=2048, pool=pool)
    assert pool.running() == []  # nothing starts before a request
    backend = LlamaServerBackend(model, transport=transport)
    info = await backend.show(model.name)
    server = pool.running()[0]
    assert server.base_url.startswith("http://127.0.0.1:") and server.port > 0
    argv = json.loads((tmp_path / "argv.json").read_text())
    assert "--jinja" in argv and argv[argv.index("--threads") + 1] == "1" and argv[argv.index("--ctx-size") + 1] == "2048"
    assert argv[argv.index("--host") + 1] == "127.0.0.1"
    assert info.engine == "llama-server" and info.engine_version == "llama-server b0-fake"
    assert info.digest == "ab" * 32 and "tools" in info.capabilities and info.parser.startswith("llama.cpp --jinja")
    await backend.list_models()
    assert pool.running() == [server]  # the same process answers later requests
    await backend.aclose()
    process = server.process
    pool.stop_all()
    assert pool.running() == [] and process is not None and process.poll() is not None


def test_a_server_that_dies_while_starting_is_reported_with_its_output(fake_binary: Path, model: LocalModel,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_LLAMA_FAIL", "3")
    transport = LlamaServerTransport(model, pool=ServerPool())
    with pytest.raises(BackendError) as info:
        transport._pool.get(transport.settings())
    assert info.value.kind is BackendErrorKind.CONNECT_ERROR
    assert "exited with status 3" in str(info.value) and "failed to load model (fake)" in str(info.value)


def test_llamacpp_specs_get_a_managed_transport() -> None:
    assert isinstance(managed_transport("llamacpp:qwen2.5-coder-0.5b", n_threads=1), LlamaServerTransport)
    assert managed_transport("openai:gpt-x") is None and managed_transport("qwen3:8b") is None
    with pytest.raises(BackendError, match="unknown local model"):
        managed_transport("llamacpp:nope")


def test_an_eval_without_the_build_stops_with_one_instruction(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    from harness.cli import main

    monkeypatch.setenv("UTP_LLAMA_SERVER", str(tmp_path / "missing-llama-server"))
    code = main(["eval", "--model", "llamacpp:qwen2.5-coder-0.5b", "--suite", "core/01_single_call", "--limit", "1",
                 "--formats", "native-openai", "--record", "--no-reports", "--results-dir", str(tmp_path / "r"),
                 "--cassette-dir", str(tmp_path / "c")])
    error = capsys.readouterr().err
    assert code != 0 and "llama-server is not built" in error and "make llama-server" in error
    assert "make local-models" not in error  # one instruction, the right one
    assert not (tmp_path / "c").exists() or not any((tmp_path / "c").rglob("*.r0.json"))


def test_the_server_outlives_the_thread_that_asked_for_it(fake_binary: Path, model: LocalModel) -> None:
    """Linux's parent-death signal follows the starting thread; a retired worker thread must not stop the server."""
    import threading
    import time

    pool = ServerPool()
    transport = LlamaServerTransport(model, pool=pool)
    worker = threading.Thread(target=lambda: pool.get(transport.settings()))
    worker.start()
    worker.join()
    try:
        time.sleep(1.0)
        assert len(pool.running()) == 1
    finally:
        pool.stop_all()
