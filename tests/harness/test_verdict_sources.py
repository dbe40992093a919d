"""The verdict's sources sentence names each engine once, with its version."""

from harness.reporting.verdict import sources_summary


def test_an_engine_its_version_already_names_is_said_once() -> None:
    embedded = {"engines": ["embedded"], "server_versions": ["embedded-llama.cpp-0.3.36"], "hardware": ["2 cores"],
                "modes": {"record": 3}}
    assert sources_summary(3, embedded) == "3 runs recorded from embedded-llama.cpp-0.3.36 on 2 cores"
    server = {**embedded, "engines": ["llama-server"], "server_versions": ["llama-server b1-0c1e570"]}
    assert sources_summary(3, server) == "3 runs recorded from llama-server b1-0c1e570 on 2 cores"


def test_a_bare_version_keeps_its_engine_name() -> None:
    ollama = {"engines": ["ollama"], "server_versions": ["0.12.10"], "hardware": ["2 cores"], "modes": {"replay": 1}}
    assert sources_summary(1, ollama) == "1 run replayed from cassettes of ollama 0.12.10 on 2 cores"
