"""A family name or alias means exactly one family, decided by declaration, never by import order."""

from __future__ import annotations

from collections import Counter

import pytest

from utp.parsers import get_family
from utp.parsers.base import CallFamily, register_family, registered_families


def test_no_name_or_alias_is_claimed_twice() -> None:
    claims = Counter(n for name, family in registered_families().items() for n in (name, *family.aliases))
    assert [n for n, count in claims.items() if count > 1] == []


def test_the_aliases_that_used_to_clash_resolve_to_one_family() -> None:
    assert get_family("llama3").name == "json"  # Llama 3 writes bare JSON calls
    assert get_family("qwen_xml").name == "hermes"  # Qwen's <tool_call> tags
    assert get_family("hunyuan").name == "hunyuan"


def test_registering_a_clashing_alias_is_an_error_at_import() -> None:
    class Clash(CallFamily):
        name = "clash_probe"
        aliases = ("llama31",)

    with pytest.raises(ValueError, match="'llama31'.*already names family 'llama'"):
        register_family(Clash)
    assert "clash_probe" not in registered_families()
