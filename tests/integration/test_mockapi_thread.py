"""The tests' in-thread mock API (``mockapi_support.MockServer``) behaves as the command does:
the same answers and record, start-up errors as the command's one-line errors, and a stop
that leaves no listener and no open connection behind (an outage a client sees)."""

from __future__ import annotations

import contextlib
import socket
import threading
from pathlib import Path

import httpx
import pytest

from forgeflare.mockapi import MockAPIError, MockScriptError
from mockapi_support import MockServer, start_mock_server

HELLO = {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]}
SCRIPT = {"responses": [{"content": [{"type": "text", "text": "one"}]}]}


def _exchange(sock: socket.socket) -> bytes:
    """One request on a kept-alive raw connection, read until its JSON body is complete."""
    body = httpx.Request("POST", "http://x/v1/messages", json=HELLO).content
    sock.sendall(
        b"POST /v1/messages HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
        b"content-length: %d\r\n\r\n%s" % (len(body), body)
    )
    data = b""
    while b'"stop_reason"' not in data or not data.rstrip().endswith(b"}"):
        chunk = sock.recv(65536)
        assert chunk, data
        data += chunk
    return data


def test_answers_records_then_stops_every_connection(tmp_path: Path) -> None:
    threads = threading.active_count()
    server = start_mock_server(SCRIPT, directory=tmp_path)
    assert server.running
    assert server.url == f"http://127.0.0.1:{server.port}"
    with socket.create_connection((server.host, server.port), timeout=30) as kept:
        assert b'"one"' in _exchange(kept)
        assert [r["response_index"] for r in server.requests()] == [0]
        server.stop()
        server.stop()  # idempotent
        assert not server.running
        assert threading.active_count() <= threads  # ours joined (others may end)
        # The connection the server had open is closed: end of stream, or a reset.
        with contextlib.suppress(ConnectionResetError):
            assert kept.recv(65536) == b""
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection((server.host, server.port), timeout=30).close()
    with pytest.raises(httpx.ConnectError):
        httpx.post(f"{server.url}/v1/messages", json=HELLO, timeout=30)


def test_a_context_manager_stops_it(tmp_path: Path) -> None:
    with start_mock_server(SCRIPT, directory=tmp_path) as server:
        reply = httpx.post(f"{server.url}/v1/messages", json=HELLO, timeout=30)
        assert reply.json()["content"] == [{"type": "text", "text": "one"}]
    assert not server.running


def test_start_up_errors_are_the_commands(tmp_path: Path) -> None:
    with pytest.raises(MockScriptError, match="nope"):
        start_mock_server({"nope": 1}, directory=tmp_path / "bad")
    threads = threading.active_count()
    script = tmp_path / "script.json"
    script.write_text('{"responses": []}')
    (tmp_path / "dir.jsonl").mkdir()
    # Found in the server thread before it listens: raised here as the one error, unwrapped.
    with pytest.raises(MockAPIError, match="cannot open record file"):
        MockServer(script_path=script, record_path=tmp_path / "dir.jsonl")
    assert threading.active_count() <= threads  # ours joined (others may end)
