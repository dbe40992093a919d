"""Cassettes: record over real HTTP, replay without it, and fail loudly when they disagree."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.cassettes import CassetteTransport, RecordingTransport, _RecordingStream, ReplayTransport
from harness.cassette_file import (
    REDACTED,
    Cassette,
    CassetteError,
    CassetteMismatch,
    CassetteMissing,
    new_header,
    request_hash,
)
from tests.support.scripted_server import ScriptedServer, Turn

pytestmark = pytest.mark.anyio

CHAT = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True}


class ExplodingTransport(httpx.AsyncBaseTransport):
    """Fails the test if anything tries to reach the network."""

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        raise AssertionError(f"replay touched the network: {request.method} {request.url}")


async def _stream_chat(transport: httpx.AsyncBaseTransport, url: str, body: dict[str, Any] = CHAT,
                       headers: dict[str, str] | None = None) -> tuple[int, list[bytes]]:
    async with httpx.AsyncClient(transport=transport, base_url=url) as client:
        async with client.stream("POST", "/api/chat", json=body, headers=headers) as response:
            pieces = [piece async for piece in response.aiter_bytes()]
            return response.status_code, pieces


def _content(pieces: list[bytes]) -> str:
    lines = b"".join(pieces).decode().splitlines()
    return "".join(json.loads(line)["message"]["content"] for line in lines)


def _header() -> dict[str, Any]:
    return new_header("m", engine="ollama test", recorded_by="tests")


async def test_record_streams_through_and_keeps_ndjson_lines_one_by_one(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    with ScriptedServer([Turn(content="Hello there, general Kenobi")], chunk_size=5) as server:
        transport = RecordingTransport(httpx.AsyncHTTPTransport(), path, header=_header(), close_inner=True)
        status, pieces = await _stream_chat(transport, server.url)
        transport.finish()
        await transport.aclose()
    assert status == 200
    body = b"".join(pieces).decode()
    cassette = Cassette.load(path)
    [exchange] = cassette.exchanges
    chunks = exchange["response"]["chunks"]
    assert len(chunks) > 3  # content split across several NDJSON lines
    assert all(chunk.endswith("\n") and chunk.count("\n") == 1 for chunk in chunks)
    assert "".join(chunks) == body
    assert json.loads(chunks[-1])["done"] is True
    assert exchange["request"]["hash"] == request_hash("POST", "/api/chat", CHAT)
    assert exchange["response"]["complete"] is True
    assert cassette.header["recorded_at"] and cassette.header["synthetic"] is False


async def test_replay_serves_the_same_chunks_and_never_touches_the_network(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    with ScriptedServer([Turn(content="one two three four")], chunk_size=4) as server:
        recorder = RecordingTransport(httpx.AsyncHTTPTransport(), path, header=_header(), close_inner=True)
        _, live = await _stream_chat(recorder, server.url)
        recorder.finish()
        await recorder.aclose()
    replay = ReplayTransport(path)
    assert replay._inner is None
    status, replayed = await _stream_chat(replay, "http://nowhere.invalid:1")
    assert status == 200
    assert b"".join(replayed) == b"".join(live)
    assert [p.decode() for p in replayed] == Cassette.load(path).exchanges[0]["response"]["chunks"]
    # the same holds with a transport that fails the test if it is ever called
    guarded = CassetteTransport(path, "none", inner=ExplodingTransport())
    _, again = await _stream_chat(guarded, "http://nowhere.invalid:1")
    assert b"".join(again) == b"".join(live)


async def test_missing_cassette_in_mode_none_fails_loudly_naming_the_hash(tmp_path: Path) -> None:
    transport = ReplayTransport(tmp_path / "absent.json")
    with pytest.raises(CassetteMissing) as caught:
        await _stream_chat(transport, "http://x")
    digest = request_hash("POST", "/api/chat", CHAT)
    assert digest in str(caught.value)
    assert str(tmp_path / "absent.json") in str(caught.value)
    assert transport.failures and transport.failures[0].request_hash == digest


async def test_changed_request_shows_a_diff_against_the_closest_recorded_one(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    other = {"model": "m", "messages": [{"role": "user", "content": "something else entirely"}], "stream": False}
    with ScriptedServer([Turn(content="a"), Turn(content="b")]) as server:
        recorder = RecordingTransport(httpx.AsyncHTTPTransport(), path, header=_header(), close_inner=True)
        await _stream_chat(recorder, server.url, CHAT)
        await _stream_chat(recorder, server.url, other)
        recorder.finish()
        await recorder.aclose()
    changed = {"model": "m", "messages": [{"role": "user", "content": "hi!"}], "stream": True}
    with pytest.raises(CassetteMismatch) as caught:
        await _stream_chat(ReplayTransport(path), "http://x", changed)
    message = str(caught.value)
    assert request_hash("POST", "/api/chat", changed) in message
    diff_lines = [line.strip() for line in message.splitlines()]
    assert '-    "content": "hi",'.strip() in diff_lines
    assert '+    "content": "hi!",'.strip() in diff_lines
    assert "something else entirely" not in message  # the diff is against the CLOSEST request
    assert f"recorded {request_hash('POST', '/api/chat', CHAT)[:12]}" in message


async def test_identical_requests_get_their_responses_in_recorded_order(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    with ScriptedServer([Turn(content="first"), Turn(content="second")]) as server:
        recorder = RecordingTransport(httpx.AsyncHTTPTransport(), path, header=_header(), close_inner=True)
        await _stream_chat(recorder, server.url)
        await _stream_chat(recorder, server.url)
        recorder.finish()
        await recorder.aclose()
    replay = ReplayTransport(path)
    texts = []
    for _ in range(2):
        _, pieces = await _stream_chat(replay, "http://x")
        texts.append(_content(pieces))
    assert texts == ["first", "second"]
    with pytest.raises(CassetteMismatch, match="recorded only 2 time"):
        await _stream_chat(replay, "http://x")


@pytest.mark.parametrize(
    "content, expected",
    [
        ("{not json", "not valid JSON"),
        ('{"exchanges": []}', "'header'"),
        ('{"header": {"cassette_version": 1, "model": "m", "recorded_at": "x", "synthetic": false}}', "'exchanges'"),
        ('{"header": {"cassette_version": 1, "model": "m"}, "exchanges": []}', "recorded_at"),
        ('{"header": {"cassette_version": 1, "model": "m", "recorded_at": "x", "synthetic": false},'
         ' "exchanges": [{"request": {"method": "POST", "path": "/api/chat", "hash": "h"}, "response": {"status": 200}}]}',
         "exchanges[0].response.chunks"),
        ('{"header": {"cassette_version": 1, "model": "m", "recorded_at": "x", "synthetic": true}, "exchanges": []}',
         "synthetic_reason"),
    ],
)
def test_corrupt_cassette_is_a_clear_error_naming_the_file(tmp_path: Path, content: str, expected: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(CassetteError) as caught:
        ReplayTransport(path)
    assert str(path) in str(caught.value)
    assert expected in str(caught.value)


async def test_mode_once_records_when_absent_then_only_replays(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    with ScriptedServer([Turn(content="recorded once")]) as server:
        first = CassetteTransport(path, "once", inner=httpx.AsyncHTTPTransport(), header=_header(), close_inner=True)
        assert first.mode == "all"
        await _stream_chat(first, server.url)
        first.finish()
        await first.aclose()
        second = CassetteTransport(path, "once", inner=ExplodingTransport(), header=_header())
        assert second.mode == "none"
        _, pieces = await _stream_chat(second, server.url)
        assert len(server.chat_bodies) == 1
    assert _content(pieces) == "recorded once"


async def test_mode_new_episodes_replays_known_and_records_new(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    other = {**CHAT, "messages": [{"role": "user", "content": "new question"}]}
    with ScriptedServer([Turn(content="old"), Turn(content="new")]) as server:
        recorder = RecordingTransport(httpx.AsyncHTTPTransport(), path, header=_header(), close_inner=True)
        await _stream_chat(recorder, server.url)
        recorder.finish()
        await recorder.aclose()
        episodes = CassetteTransport(path, "new_episodes", inner=httpx.AsyncHTTPTransport(), header=_header(), close_inner=True)
        await _stream_chat(episodes, server.url)  # known: replayed
        await _stream_chat(episodes, server.url, other)  # new: recorded
        episodes.finish()
        await episodes.aclose()
        assert len(server.chat_bodies) == 2
    assert (episodes.replayed, episodes.recorded) == (1, 1)
    hashes = [e["request"]["hash"] for e in Cassette.load(path).exchanges]
    assert hashes == [request_hash("POST", "/api/chat", CHAT), request_hash("POST", "/api/chat", other)]


async def test_mode_all_rerecords_everything(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    with ScriptedServer([Turn(content="v1"), Turn(content="v2")]) as server:
        for _ in range(2):
            transport = CassetteTransport(path, "all", inner=httpx.AsyncHTTPTransport(), header=_header(), close_inner=True)
            await _stream_chat(transport, server.url)
            transport.finish()
            await transport.aclose()
        assert len(server.chat_bodies) == 2
    [exchange] = Cassette.load(path).exchanges
    assert "v2" in "".join(exchange["response"]["chunks"])
    assert not list(tmp_path.glob("*.tmp"))  # atomic write left no temp file


async def test_secrets_in_headers_never_reach_the_file(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    secret = "sk-very-secret-123"
    headers = {"Authorization": f"Bearer {secret}", "X-Api-Key": secret, "Cookie": f"session={secret}"}
    with ScriptedServer([Turn(content="ok")]) as server:
        transport = RecordingTransport(httpx.AsyncHTTPTransport(), path, header=_header(), close_inner=True)
        await _stream_chat(transport, server.url, headers=headers)
        transport.finish()
        await transport.aclose()
        sent = {k.lower(): v for k, v in server.requests[-1].headers.items()}
        assert sent["authorization"] == f"Bearer {secret}"  # the server did get it
    text = path.read_text(encoding="utf-8")
    assert secret not in text
    recorded = Cassette.load(path).exchanges[0]["request"]["headers"]
    assert recorded["authorization"] == recorded["x-api-key"] == recorded["cookie"] == REDACTED


async def test_sse_responses_are_recorded_event_by_event(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True}
    with ScriptedServer([Turn(content="streamed over server-sent events")], chunk_size=6) as server:
        transport = RecordingTransport(httpx.AsyncHTTPTransport(), path, header=_header(), close_inner=True)
        async with httpx.AsyncClient(transport=transport, base_url=server.url) as client:
            async with client.stream("POST", "/v1/chat/completions", json=body) as response:
                received = b"".join([p async for p in response.aiter_bytes()]).decode()
        transport.finish()
        await transport.aclose()
    chunks = Cassette.load(path).exchanges[0]["response"]["chunks"]
    assert "".join(chunks) == received
    assert all(c.startswith("data: ") and c.endswith("\n\n") for c in chunks)
    assert chunks[-1] == "data: [DONE]\n\n"


def test_replay_of_a_cassette_object_and_header_rules(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="synthetic_reason"):
        new_header("m", synthetic=True)
    header = new_header("m", synthetic=True, synthetic_reason="hand-written for a parser test")
    cassette = Cassette(tmp_path / "s.json", header={**header, "recorded_at": "2026-01-01T00:00:00Z"}, exchanges=[])
    cassette.save()
    assert Cassette.load(cassette.path).header["synthetic_reason"] == "hand-written for a parser test"
    assert ReplayTransport(cassette).cassette is cassette
    with pytest.raises(ValueError, match="inner transport"):
        CassetteTransport(tmp_path / "x.json", "all")
    with pytest.raises(ValueError, match="unknown cassette mode"):
        CassetteTransport(tmp_path / "x.json", "sometimes")


class _Pieces(httpx.AsyncByteStream):
    def __init__(self, pieces: list[bytes]):
        self.pieces = pieces

    async def __aiter__(self) -> Any:  # type: ignore[override]
        for piece in self.pieces:
            yield piece


def _split_points(draw_lines: list[str], cuts: list[int]) -> tuple[bytes, list[bytes]]:
    body = "".join(line + "\n" for line in draw_lines).encode("utf-8")
    points = sorted({c % (len(body) + 1) for c in cuts} | {0, len(body)})
    return body, [body[a:b] for a, b in zip(points, points[1:])]


@settings(max_examples=75, deadline=None)
@given(
    lines=st.lists(st.text(alphabet=st.characters(blacklist_characters="\n\r", blacklist_categories=("Cs",)), max_size=30), max_size=8),
    cuts=st.lists(st.integers(min_value=0, max_value=10_000), max_size=12),
)
def test_recorded_chunks_are_the_lines_however_the_network_cut_them(lines: list[str], cuts: list[int]) -> None:
    body, pieces = _split_points(lines, cuts)
    captured: dict[str, Any] = {}

    def done(chunks: list[str], complete: bool) -> None:
        captured.update(chunks=chunks, complete=complete)

    async def consume() -> bytes:
        stream = _RecordingStream(_Pieces(pieces), b"\n", done)
        return b"".join([piece async for piece in stream])

    passed_through = asyncio.run(consume())
    assert passed_through == body  # the caller sees exactly what the server sent
    assert captured["complete"] is True
    assert captured["chunks"] == [line + "\n" for line in lines]


async def test_the_key_is_redacted_wherever_it_appears_not_only_by_header_name(tmp_path: Path) -> None:
    """A proxy that echoes the key under another header (and in the body) must not put it in the cassette."""
    path = tmp_path / "c.json"
    secret = "sk-echoed-by-a-proxy-4242"

    def echoing_proxy(request: httpx.Request) -> httpx.Response:  # TEST DOUBLE: a proxy that leaks the key
        key = request.headers["authorization"].removeprefix("Bearer ")
        line = json.dumps({"message": {"role": "assistant", "content": f"your key is {key}"}, "done": True})
        return httpx.Response(200, headers={"x-echo-auth": key, "content-type": "application/x-ndjson"}, content=line + "\n")

    transport = RecordingTransport(httpx.MockTransport(echoing_proxy), path, header=_header())
    body = {**CHAT, "messages": [{"role": "user", "content": f"my key is {secret}"}]}
    headers = {"Authorization": f"Bearer {secret}", "X-Forwarded-Credential": secret}
    async with httpx.AsyncClient(transport=transport, base_url="http://proxy") as client:
        response = await client.post(f"/api/chat?key={secret}", json=body, headers=headers)
        assert secret in response.text  # the caller still sees what the server said
    transport.finish()
    text = path.read_text(encoding="utf-8")
    assert secret not in text
    exchange = Cassette.load(path).exchanges[0]
    assert exchange["response"]["headers"]["x-echo-auth"] == REDACTED
    assert exchange["request"]["headers"]["x-forwarded-credential"] == REDACTED
    assert f"your key is {REDACTED}" in "".join(exchange["response"]["chunks"])
    assert exchange["request"]["body"]["messages"][0]["content"] == f"my key is {REDACTED}"
