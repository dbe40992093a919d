"""The GGUF header reader and the 'does this template render tools' decision."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.gguf_writer import write_gguf
from utp.backends.gguf_meta import CHAT_TEMPLATE_KEY, GGUFError, chat_template, read_metadata, template_renders_tools

QWEN_STYLE = "{%- if tools %}# Tools<tools>{%- for tool in tools %}{{ tool | tojson }}{%- endfor %}</tools>{%- endif %}"
PLAIN = "{% for message in messages %}<|im_start|>{{ message['role'] }}\n{{ message['content'] }}<|im_end|>{% endfor %}"


def test_reads_the_template_after_skipping_large_arrays(tmp_path: Path) -> None:
    path = write_gguf(tmp_path / "m.gguf", {
        "general.architecture": "qwen2",
        "tokenizer.ggml.tokens": [f"tok{i}" for i in range(2000)],
        "tokenizer.ggml.token_type": list(range(2000)),
        "general.flag": True,
        "general.rope": 1.5,
        CHAT_TEMPLATE_KEY: QWEN_STYLE,
    })
    assert chat_template(path) == QWEN_STYLE
    assert read_metadata(path, {"general.architecture", "general.rope"}) == {"general.architecture": "qwen2", "general.rope": 1.5}
    assert read_metadata(path)["tokenizer.ggml.tokens"][1999] == "tok1999"


def test_a_file_without_a_template_has_none(tmp_path: Path) -> None:
    assert chat_template(write_gguf(tmp_path / "m.gguf", {"general.architecture": "gemma3"})) == ""


@pytest.mark.parametrize(
    ("content", "message"),
    [(b"NOPE" + bytes(40), "not a GGUF"), (b"GGUF\x03\x00\x00\x00" + bytes(8) + b"\x05" + bytes(7) + b"\xff" * 8, "more than the file holds")],
)
def test_a_broken_header_is_named(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "bad.gguf"
    path.write_bytes(content)
    with pytest.raises(GGUFError, match=message):
        read_metadata(path)
    assert chat_template(path) == ""  # llama.cpp's own load reports the file; tools are simply not offered


def test_truncated_value_is_named_with_its_key(tmp_path: Path) -> None:
    path = write_gguf(tmp_path / "m.gguf", {CHAT_TEMPLATE_KEY: QWEN_STYLE})
    path.write_bytes(path.read_bytes()[:-10])
    with pytest.raises(GGUFError, match="tokenizer.chat_template"):
        read_metadata(path)


@pytest.mark.parametrize(
    ("template", "renders"),
    [
        (QWEN_STYLE, True),
        ("{{- tools | length }}", True),
        ("{% set t = tools %}", True),
        (PLAIN, False),
        ("You may use tools in prose only: {{ messages[0]['content'] }}", False),
        ("", False),
    ],
)
def test_tool_section_detection(template: str, renders: bool) -> None:
    assert template_renders_tools(template) is renders
