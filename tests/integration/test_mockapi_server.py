"""The mock API as a real subprocess, spoken to over loopback HTTP."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from functools import partial
from typing import Any

import httpx
import pytest
import trio

from forgeflare.mockapi import parse_script, serve
from mockapi_support import MockAPI

pytestmark = pytest.mark.mock_api_process  # the command's own tests: its real child

Events = list[tuple[str, dict[str, Any]]]

REQUEST = {
    "model": "claude-test",
    "max_tokens": 100,
    "messages": [{"role": "user", "content": "hello"}],
}
HEADERS = {"x-api-key": "test-key", "anthropic-version": "2023-06-01"}


def parse_sse(data: bytes) -> Events:
    events = []
    for frame in data.decode().split("\n\n"):
        if frame:
            name, payload = frame.split("\n")
            events.append(
                (name.removeprefix("event: "), json.loads(payload.removeprefix("data: ")))
            )
    return events


def post_stream(
    url: str, *, client: httpx.Client | None = None, **extra: Any
) -> tuple[httpx.Response, Events]:
    if client is None:
        with httpx.Client(timeout=10) as own:
            return post_stream(url, client=own, **extra)
    with client.stream(
        "POST", f"{url}/v1/messages", json={**REQUEST, "stream": True, **extra}, headers=HEADERS
    ) as resp:
        data = resp.read()
    return resp, parse_sse(data) if resp.status_code == 200 else []


def assembled(events: Events) -> dict[str, Any]:
    """The message a client builds from a stream (text, tool input JSON, thinking, signature)."""
    message = dict(events[0][1]["message"])
    content: list[dict[str, Any]] = []
    bufs: dict[int, str] = {}
    for name, data in events[1:]:
        if name == "content_block_start":
            content.append(dict(data["content_block"]))
        elif name == "content_block_delta":
            block, delta = content[data["index"]], data["delta"]
            kind = delta["type"]
            if kind == "text_delta":
                block["text"] += delta["text"]
            elif kind == "thinking_delta":
                block["thinking"] += delta["thinking"]
            elif kind == "signature_delta":
                block["signature"] = delta["signature"]
            elif kind == "input_json_delta":
                bufs[data["index"]] = bufs.get(data["index"], "") + delta["partial_json"]
        elif name == "content_block_stop" and data["index"] in bufs:
            content[data["index"]]["input"] = json.loads(bufs[data["index"]])
        elif name == "message_delta":
            message.update(data["delta"])
            message["usage"] = {**message["usage"], **data["usage"]}
    message["content"] = content
    return message


RICH = {
    "content": [
        {"type": "thinking", "thinking": "I should run the tests first.", "signature": "c2lnbmF0"},
        {"type": "text", "text": "Running the tests now, then I will report back."},
        {"type": "tool_use", "name": "Bash", "input": {"command": "pytest -q", "timeout": 60}},
    ],
    "stop_reason": "tool_use",
    "usage": {"input_tokens": 1200, "output_tokens": 40, "cache_read_input_tokens": 7},
}


def test_stream_then_json(mock_api: MockAPI) -> None:
    server = mock_api({"responses": [RICH, RICH]})
    resp, events = post_stream(server.url)
    assert resp.status_code == 200
    assert resp.headers["content-type"].startswith("text/event-stream")
    assert resp.headers["request-id"].startswith("req_")
    names = [n for n, _ in events]
    assert names[0] == "message_start"
    assert names[-2:] == ["message_delta", "message_stop"]
    assert "ping" in names
    assert all(data["type"] == name for name, data in events)
    msg = assembled(events)
    assert msg["id"].startswith("msg_")
    assert msg["model"] == "claude-test"
    assert msg["role"] == "assistant"
    assert msg["stop_reason"] == "tool_use"
    assert msg["usage"]["input_tokens"] == 1200
    assert msg["usage"]["output_tokens"] == 40
    assert msg["usage"]["cache_read_input_tokens"] == 7
    thinking, text, tool = msg["content"]
    assert thinking == RICH["content"][0]
    assert text == RICH["content"][1]
    assert tool["id"].startswith("toolu_")
    assert (tool["name"], tool["input"]) == ("Bash", {"command": "pytest -q", "timeout": 60})

    # The same response without "stream": one JSON message.
    resp2 = httpx.post(f"{server.url}/v1/messages", json=REQUEST, headers=HEADERS, timeout=10)
    assert resp2.status_code == 200
    body = resp2.json()
    assert body["type"] == "message"
    assert body["content"][0] == RICH["content"][0]
    assert body["content"][2]["input"] == {"command": "pytest -q", "timeout": 60}
    assert body["stop_reason"] == "tool_use"
    assert body["usage"]["output_tokens"] == 40
    assert body["id"] != msg["id"]


def test_http_errors_then_exhausted(mock_api: MockAPI) -> None:
    server = mock_api(
        {
            "responses": [
                {
                    "error": {
                        "status": 529,
                        "type": "overloaded_error",
                        "message": "Overloaded",
                        "headers": {"retry-after": "0", "x-should-retry": "true"},
                    }
                },
                {"error": {"status": 400, "message": "max_tokens: too large"}},
            ]
        }
    )
    resp, _ = post_stream(server.url)
    assert resp.status_code == 529
    assert resp.headers["retry-after"] == "0"
    assert resp.headers["x-should-retry"] == "true"
    assert json.loads(resp.content) == {
        "type": "error",
        "error": {"type": "overloaded_error", "message": "Overloaded"},
    }
    resp, _ = post_stream(server.url)
    assert resp.status_code == 400
    assert json.loads(resp.content)["error"] == {
        "type": "invalid_request_error",
        "message": "max_tokens: too large",
    }
    resp, _ = post_stream(server.url)
    assert resp.status_code == 500
    assert json.loads(resp.content) == {
        "type": "error",
        "error": {"type": "api_error", "message": "mock script exhausted after 2 responses"},
    }


def test_broken_streams_then_end_turn(mock_api: MockAPI) -> None:
    server = mock_api(
        {
            "responses": [
                {"stream_error": {"type": "overloaded_error", "after_events": 3}},
                {
                    "truncate_after_events": 4,
                    "content": [{"type": "text", "text": "cut short, this"}],
                },
                {"content": [{"type": "text", "text": "whole"}]},
                {"truncate_after_events": 2, "truncate_mode": "drop"},
            ],
            "when_exhausted": "end_turn",
        }
    )
    with httpx.Client(timeout=10) as client:
        # A mid-stream error event after exactly three events, then the body ends cleanly.
        resp, events = post_stream(server.url, client=client)
        assert resp.status_code == 200
        assert len(events) == 4
        assert events[-1] == (
            "error",
            {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
        )
        # Truncated: a clean end of the body (no exception from the HTTP layer), no message_stop.
        resp, events = post_stream(server.url, client=client)
        assert resp.status_code == 200
        assert resp.headers["connection"] == "close"
        assert [n for n, _ in events] == [
            "message_start",
            "content_block_start",
            "ping",
            "content_block_delta",
        ]
        # The same client goes on with a fresh connection and the next response.
        _, events = post_stream(server.url, client=client)
        assert assembled(events)["content"] == [{"type": "text", "text": "whole"}]
        # "drop": the connection closes mid-body, an incomplete chunked body for the client.
        with pytest.raises(httpx.RemoteProtocolError):
            post_stream(server.url, client=client)
    # Exhausted with when_exhausted = end_turn: a plain end_turn text, every time.
    for _ in range(2):
        _, events = post_stream(server.url)
        msg = assembled(events)
        assert msg["stop_reason"] == "end_turn"
        assert msg["content"] == [{"type": "text", "text": "Done."}]
    assert [r["response_index"] for r in server.requests()] == [0, 1, 2, 3, None, None]


def test_delay_and_stall_hold_the_reply(mock_api: MockAPI) -> None:
    # A read timeout far shorter than the scripted pause shows the pause happens, without
    # asserting on a measured time.
    server = mock_api(
        {
            "responses": [
                {"delay_ms": 30_000},
                {"stall": {"after_events": 2, "ms": 30_000}},
                {"content": [{"type": "text", "text": "after"}]},
            ]
        }
    )
    timeout = httpx.Timeout(10, read=0.3)
    with httpx.Client(timeout=timeout) as client, pytest.raises(httpx.ReadTimeout):
        client.post(f"{server.url}/v1/messages", json=REQUEST)
    received = bytearray()

    def read_until_stalled() -> None:
        with (
            httpx.Client(timeout=timeout) as client,
            client.stream(
                "POST", f"{server.url}/v1/messages", json={**REQUEST, "stream": True}
            ) as r,
        ):
            for chunk in r.iter_raw():
                received.extend(chunk)

    with pytest.raises(httpx.ReadTimeout):
        read_until_stalled()
    # The two events before the stall were flushed at once, not held back with the rest.
    assert [n for n, _ in parse_sse(bytes(received))] == ["message_start", "ping"]
    # The server survives clients that went away mid-reply.
    _, events = post_stream(server.url)
    assert assembled(events)["content"] == [{"type": "text", "text": "after"}]


def test_record_file_count_tokens_and_unknown_paths(mock_api: MockAPI) -> None:
    server = mock_api({"responses": [{}, {}]})
    post_stream(server.url)
    with httpx.Client(base_url=server.url, timeout=10) as client:
        client.post("/v1/messages?beta=true", json=REQUEST, headers={"authorization": "Bearer tok"})
        resp = client.post("/v1/messages/count_tokens", json=REQUEST)
        assert resp.status_code == 200
        assert resp.json()["input_tokens"] > 0
        resp = client.post("/v1/complete", json=REQUEST)
        assert resp.status_code == 404
        assert resp.json()["error"]["type"] == "not_found_error"
        resp = client.post("/v1/messages", content=b"{broken")
        assert resp.status_code == 400
        assert resp.json()["error"]["type"] == "invalid_request_error"
    lines = server.requests()
    assert len(lines) == 5
    first, second, third, fourth, fifth = lines
    assert first["method"] == "POST"
    assert first["path"] == "/v1/messages"
    assert first["headers"]["x-api-key"] == "[redacted]"  # the key never reaches a file
    assert first["headers"]["anthropic-version"] == "2023-06-01"
    assert first["body"] == {**REQUEST, "stream": True}
    assert first["response_index"] == 0
    assert (second["query"], second["headers"]["authorization"]) == ("beta=true", "[redacted]")
    assert second["response_index"] == 1
    assert (third["path"], third["response_index"]) == ("/v1/messages/count_tokens", None)
    assert fourth["path"] == "/v1/complete"
    assert (fifth["body"], fifth["body_text"]) == (None, "{broken")


_CLIENT = textwrap.dedent(
    """
    import json, sys, httpx
    url, n = sys.argv[1], int(sys.argv[2])
    body = {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "x"}]}
    with httpx.Client(timeout=30) as client:
        for _ in range(n):
            r = client.post(url + "/v1/messages", json=body)
            print(r.json()["content"][0]["text"], flush=True)
    """
)


def test_responses_consumed_in_order_across_processes(mock_api: MockAPI) -> None:
    n = 12
    server = mock_api(
        {"responses": [{"content": [{"type": "text", "text": f"r{i}"}]} for i in range(2 * n)]}
    )
    clients = [
        subprocess.Popen(
            [sys.executable, "-c", _CLIENT, server.url, str(n)], stdout=subprocess.PIPE, text=True
        )
        for _ in range(2)
    ]
    outputs = [c.communicate(timeout=60)[0].split() for c in clients]
    assert all(c.returncode == 0 for c in clients)
    # Every response handed out exactly once; each client sees its share in script order.
    assert sorted(outputs[0] + outputs[1]) == sorted(f"r{i}" for i in range(2 * n))
    for out in outputs:
        assert out == sorted(out, key=lambda s: int(s[1:]))
    assert [r["response_index"] for r in server.requests()] == list(range(2 * n))


async def test_many_concurrent_streams(mock_api: MockAPI) -> None:
    n = 40
    server = mock_api(
        {
            "responses": [
                {"content": [{"type": "text", "text": f"answer {i} " * 20}], "event_delay_ms": 1}
                for i in range(n)
            ]
        }
    )
    texts: list[str] = []
    limits = httpx.Limits(max_connections=n)
    async with httpx.AsyncClient(base_url=server.url, timeout=30, limits=limits) as client:

        async def one() -> None:
            async with client.stream(
                "POST", "/v1/messages", json={**REQUEST, "stream": True}
            ) as resp:
                data = await resp.aread()
            texts.append(assembled(parse_sse(data))["content"][0]["text"])

        async with trio.open_nursery() as nursery:
            for _ in range(n):
                nursery.start_soon(one)
    assert sorted(texts) == sorted(f"answer {i} " * 20 for i in range(n))


async def _raw_exchange(port: int, data: bytes, *, until: bytes, count: int) -> bytes:
    """Send raw bytes, read until ``until`` has been seen ``count`` times."""
    stream = await trio.open_tcp_stream("127.0.0.1", port)
    async with stream:
        await stream.send_all(data)
        received = b""
        with trio.fail_after(60):
            while received.count(until) < count:
                chunk = await stream.receive_some(65536)
                assert chunk, received
                received += chunk
    return received


async def test_in_process_pipelining_and_expect_continue() -> None:
    script = parse_script(
        {"responses": [{"content": [{"type": "text", "text": f"n{i}"}]} for i in range(3)]}
    )
    body = json.dumps(REQUEST).encode()
    head = (
        b"POST /v1/messages HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
        b"content-length: %d\r\n" % len(body)
    )
    async with trio.open_nursery() as nursery:
        port = await nursery.start(partial(serve, script))
        # Two requests in one write: both answered, in order, on the same connection.
        raw = await _raw_exchange(
            port, (head + b"\r\n" + body) * 2, until=b'"stop_reason"', count=2
        )
        assert raw.count(b"HTTP/1.1 200 OK") == 2
        assert raw.index(b'"n0"') < raw.index(b'"n1"')
        # A client that waits for "100 Continue" before sending its body gets it.
        stream = await trio.open_tcp_stream("127.0.0.1", port)
        async with stream:
            await stream.send_all(head + b"expect: 100-continue\r\n\r\n")
            with trio.fail_after(60):
                interim = await stream.receive_some(65536)
                assert interim.startswith(b"HTTP/1.1 100 ")
                await stream.send_all(body)
                reply = b""
                while b'"stop_reason"' not in reply:
                    reply += await stream.receive_some(65536)
        assert b'"n2"' in reply
        nursery.cancel_scope.cancel()


def test_repeat_for_ms_is_an_outage_of_that_long(mock_api: MockAPI) -> None:
    window = 400
    server = mock_api(
        {
            "responses": [
                {"error": {"status": 529, "type": "overloaded_error"}, "repeat_for_ms": window},
                {"content": [{"type": "text", "text": "back"}]},
            ]
        }
    )
    statuses = []
    with httpx.Client(timeout=10) as client:
        started = time.monotonic()
        # Bounded polling: the mock's window is what ends it, each answer is one request.
        while len(statuses) < 10_000:
            resp, _ = post_stream(server.url, client=client)
            statuses.append(resp.status_code)
            if resp.status_code != 529:
                break
        recovered = time.monotonic() - started
    assert statuses[-1] == 200
    assert set(statuses[:-1]) == {529}
    assert len(statuses) >= 3  # it did repeat
    assert recovered * 1000 >= window
    assert [r["response_index"] for r in server.requests()] == [0] * (len(statuses) - 1) + [1]
