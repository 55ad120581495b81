"""The server's pure core: which reply a request gets and whether it uses up a response."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forgeflare.mockapi import (
    JSONReply,
    MockRequest,
    StreamReply,
    decide,
    parse_script,
    record_entry,
)

SCRIPT = parse_script(
    {
        "responses": [
            {"content": [{"type": "text", "text": "one"}]},
            {"error": {"status": 429, "headers": {"Retry-After": "0"}}, "delay_ms": 5},
            {"stream_error": {"type": "overloaded_error", "after_events": 1}},
            {"truncate_after_events": 2, "truncate_mode": "drop"},
        ]
    }
)


def body(**extra: Any) -> bytes:
    base: dict[str, Any] = {
        "model": "m",
        "max_tokens": 10,
        "messages": [{"role": "user", "content": "hi"}],
    }
    base.update(extra)
    return json.dumps(base).encode()


def call(
    used: int,
    data: bytes,
    *,
    path: str = "/v1/messages",
    method: str = "POST",
    headers: dict[str, str] | None = None,
    script: Any = SCRIPT,
) -> Any:
    return decide(
        script, MockRequest(method, path, headers or {}, data), used=used, request_number=used
    )


def test_stream_request_gets_a_stream() -> None:
    d = call(0, body(stream=True))
    assert d.consumed
    assert d.response_index == 0
    assert isinstance(d.reply, StreamReply)
    assert d.reply.events[-1][0] == "message_stop"
    assert ("request-id", d.reply.headers[0][1]) == d.reply.headers[0]


@pytest.mark.parametrize("extra", [{}, {"stream": False}])
def test_plain_request_gets_json(extra: dict[str, Any]) -> None:
    d = call(0, body(**extra))
    assert isinstance(d.reply, JSONReply)
    assert d.reply.status == 200
    assert d.reply.body["type"] == "message"
    assert d.reply.body["content"] == [{"type": "text", "text": "one"}]


def test_http_error_has_status_body_headers_delay() -> None:
    d = call(1, body(stream=True))
    assert d.consumed
    assert isinstance(d.reply, JSONReply)
    assert d.reply.status == 429
    assert d.reply.body == {
        "type": "error",
        "error": {
            "type": "rate_limit_error",
            "message": "Number of requests has exceeded your rate limit.",
        },
    }
    assert ("retry-after", "0") in d.reply.headers
    assert d.reply.delay_ms == 5


def test_stream_error_without_stream_is_an_http_error() -> None:
    d = call(2, body())
    assert isinstance(d.reply, JSONReply)
    assert d.reply.status == 529
    assert d.reply.body["error"]["type"] == "overloaded_error"


def test_truncation_flags() -> None:
    d = call(3, body(stream=True))
    assert isinstance(d.reply, StreamReply)
    assert d.reply.truncated
    assert d.reply.drop
    assert len(d.reply.events) == 2


def test_exhausted_error() -> None:
    d = call(4, body(stream=True))
    assert d.consumed
    assert d.response_index is None
    assert isinstance(d.reply, JSONReply)
    assert d.reply.status == 500
    assert d.reply.body["error"] == {
        "type": "api_error",
        "message": "mock script exhausted after 4 responses",
    }


def test_exhausted_end_turn() -> None:
    script = parse_script({"responses": [], "when_exhausted": "end_turn"})
    d = call(0, body(), script=script)
    assert isinstance(d.reply, JSONReply)
    assert d.reply.status == 200
    assert d.reply.body["stop_reason"] == "end_turn"
    assert d.reply.body["content"] == [{"type": "text", "text": "Done."}]
    assert d.response_index is None


@pytest.mark.parametrize(
    ("method", "path", "data", "status", "error_type"),
    [
        ("POST", "/v1/other", body(), 404, "not_found_error"),
        ("GET", "/", b"", 404, "not_found_error"),
        ("GET", "/v1/messages", b"", 405, "invalid_request_error"),
        ("POST", "/v1/messages", b"not json", 400, "invalid_request_error"),
        ("POST", "/v1/messages", b"[1]", 400, "invalid_request_error"),
        ("POST", "/v1/messages", json.dumps({"model": "m"}).encode(), 400, "invalid_request_error"),
        ("POST", "/v1/messages", body(max_tokens=None), 400, "invalid_request_error"),
        ("POST", "/v1/messages", body(stream="yes"), 400, "invalid_request_error"),
        ("POST", "/v1/messages/count_tokens", b"{}", 400, "invalid_request_error"),
    ],
)
def test_bad_requests_use_up_nothing(
    method: str, path: str, data: bytes, status: int, error_type: str
) -> None:
    d = call(0, data, method=method, path=path)
    assert not d.consumed
    assert isinstance(d.reply, JSONReply)
    assert d.reply.status == status
    assert d.reply.body["type"] == "error"
    assert d.reply.body["error"]["type"] == error_type


def test_count_tokens_uses_up_nothing() -> None:
    d = call(0, body(), path="/v1/messages/count_tokens")
    assert not d.consumed
    assert isinstance(d.reply, JSONReply)
    assert d.reply.body == {"input_tokens": 4}


@pytest.mark.parametrize(
    ("headers", "ok"),
    [
        ({}, False),
        ({"x-api-key": "k"}, True),
        ({"authorization": "Bearer tok"}, True),
        ({"authorization": "Bearer "}, False),
        ({"authorization": "Basic abc"}, False),
    ],
)
def test_require_auth(headers: dict[str, str], ok: bool) -> None:
    script = parse_script({"responses": [{}], "require_auth": True})
    d = call(0, body(), headers=headers, script=script)
    assert isinstance(d.reply, JSONReply)
    assert (d.reply.status == 200) is ok
    if not ok:
        assert d.reply.body["error"]["type"] == "authentication_error"


@given(st.lists(st.sampled_from(["msg", "stream", "count", "bad", "404"]), max_size=30))
def test_responses_are_used_in_order(kinds: list[str]) -> None:
    """Any mix of requests: scripted responses are handed out in order, each exactly once."""
    script = parse_script(
        {"responses": [{"content": [{"type": "text", "text": str(i)}]} for i in range(10)]}
    )
    used = 0
    handed: list[int] = []
    for n, kind in enumerate(kinds):
        path = {"count": "/v1/messages/count_tokens", "404": "/nope"}.get(kind, "/v1/messages")
        data = b"{" if kind == "bad" else body(stream=kind == "stream")
        d = decide(script, MockRequest("POST", path, {}, data), used=used, request_number=n)
        if d.consumed:
            used += 1
            if d.response_index is not None:
                handed.append(d.response_index)
    assert handed == list(range(min(used, 10)))


def test_record_entry() -> None:
    entry = record_entry(
        MockRequest("POST", "/v1/messages", {"x-api-key": "k"}, b'{"a": 1}', "beta=true"),
        response_index=2,
    )
    assert entry == {
        "method": "POST",
        "path": "/v1/messages",
        "query": "beta=true",
        "headers": {"x-api-key": "[redacted]"},
        "key_sha256": hashlib.sha256(b"k").hexdigest()[:16],  # which key, not the key
        "body": {"a": 1},
        "response_index": 2,
    }
    bearer = record_entry(
        MockRequest("POST", "/", {"Authorization": "Bearer k"}, b""), response_index=None
    )
    assert bearer["key_sha256"] == entry["key_sha256"]
    raw = record_entry(MockRequest("POST", "/", {}, b"\xffxx"), response_index=None)
    assert raw["body"] is None
    assert raw["body_text"] == "\ufffdxx"
