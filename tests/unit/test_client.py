"""MessagesClient: base URL, headers, error translation and timeouts (the network is faked)."""

from __future__ import annotations

import json
import socket
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from email.utils import format_datetime

import httpx
import pytest
import trio
from hypothesis import given
from hypothesis import strategies as st

from forgeflare.agent import (
    APIConnectionError,
    APIRequestError,
    APIStatusError,
    APITimeoutError,
    Message,
    MessagesClient,
    MessagesRequest,
    StopReason,
    StreamParseError,
    StreamTransientError,
    TextBlock,
    parse_retry_after,
    resolve_base_url,
    status_error,
)

REQUEST = MessagesRequest(
    model="claude-test", max_tokens=64, system="Be brief.", messages=[Message.user_text("hi")]
)

STREAM = b"".join(
    f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode()
    for e in [
        {"type": "message_start", "message": {"id": "m1", "model": "x", "usage": {}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "ok"}},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {}},
        {"type": "message_stop"},
    ]
)


# ------------------------------------------------------------------------- resolve_base_url


@pytest.mark.parametrize(
    ("flag", "env", "expected"),
    [
        (
            "http://flag/",
            {"ANTHROPIC_API_URL": "http://a", "ANTHROPIC_BASE_URL": "http://b"},
            "http://flag",
        ),
        (None, {"ANTHROPIC_API_URL": "http://a//", "ANTHROPIC_BASE_URL": "http://b"}, "http://a"),
        (None, {"ANTHROPIC_BASE_URL": "http://b/"}, "http://b"),
        ("", {"ANTHROPIC_API_URL": "", "ANTHROPIC_BASE_URL": "http://b"}, "http://b"),
        (None, {}, "https://api.anthropic.com"),
        ("  ", {"ANTHROPIC_API_URL": " "}, "https://api.anthropic.com"),
        ("http://h:8080/proxy/", {}, "http://h:8080/proxy"),
    ],
)
def test_resolve_base_url_order(flag: str | None, env: dict[str, str], expected: str) -> None:
    assert resolve_base_url(flag, env) == expected


@given(
    st.one_of(st.none(), st.text()),
    st.dictionaries(
        st.sampled_from(["ANTHROPIC_API_URL", "ANTHROPIC_BASE_URL", "OTHER"]), st.text()
    ),
)
def test_resolve_base_url_never_ends_with_slash(flag: str | None, env: dict[str, str]) -> None:
    url = resolve_base_url(flag, env)
    assert url
    assert not url.endswith("/")


# ---------------------------------------------------------------- retry-after, status errors


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({}, None),
        ({"retry-after": "0"}, 0.0),
        ({"retry-after": "7"}, 7.0),
        ({"retry-after": "1.5"}, 1.5),
        ({"retry-after": "-3"}, 0.0),
        ({"retry-after": "soon"}, None),
        ({"retry-after": "inf"}, None),
        ({"retry-after-ms": "250", "retry-after": "9"}, 0.25),
        ({"retry-after-ms": "x", "retry-after": "9"}, 9.0),
    ],
)
def test_parse_retry_after(headers: dict[str, str], expected: float | None) -> None:
    assert parse_retry_after(headers) == expected


def test_parse_retry_after_http_date() -> None:
    when = datetime(2030, 1, 1, 0, 0, 30, tzinfo=UTC)
    now = datetime(2030, 1, 1, tzinfo=UTC).timestamp()
    header = {"retry-after": format_datetime(when, usegmt=True)}
    assert parse_retry_after(header, now=now) == 30.0
    assert parse_retry_after(header, now=now + 100) == 0.0


def test_status_error_message_forms() -> None:
    body = json.dumps(
        {
            "type": "error",
            "error": {"type": "invalid_request_error", "message": "messages:\n field required"},
        }
    )
    err = status_error(400, {"x-should-retry": "false", "retry-after": "3"}, body)
    assert str(err) == "API returned 400 invalid_request_error: messages: field required"
    assert (err.status, err.retry_after, err.should_retry, err.body) == (400, 3.0, False, body)
    assert err.error_type == "invalid_request_error"
    html = "<html>\n<body>Bad gateway</body></html>" + "x" * 500
    err = status_error(502, {}, html)
    assert str(err).startswith("API returned 502: <html> <body>Bad gateway</body></html>xxx")
    assert len(str(err)) < 240
    assert "\n" not in str(err)
    assert (
        str(status_error(503, {"x-should-retry": "TRUE"}, "")) == "API returned 503: (empty body)"
    )
    assert status_error(503, {"x-should-retry": "TRUE"}, "").should_retry is True


# --------------------------------------------------------------- requests over a fake network


class Recorder:
    def __init__(self, response: httpx.Response) -> None:
        self.response = response
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return self.response


def sse_response(body: bytes = STREAM) -> httpx.Response:
    return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body)


async def test_request_headers_body_and_url() -> None:
    rec = Recorder(sse_response())
    async with MessagesClient(
        base_url="http://api.test/base/", api_key="sk-test", transport=httpx.MockTransport(rec)
    ) as client:
        resp = await client.stream(REQUEST)
    assert resp.content == [TextBlock(text="ok")]
    assert resp.stop_reason is StopReason.END_TURN
    (request,) = rec.requests
    assert request.method == "POST"
    assert str(request.url) == "http://api.test/base/v1/messages"
    assert request.headers["x-api-key"] == "sk-test"
    assert request.headers["anthropic-version"] == "2023-06-01"
    assert request.headers["content-type"] == "application/json"
    assert "authorization" not in request.headers
    body = json.loads(request.content)
    cache = {"type": "ephemeral"}
    assert body == {
        "model": "claude-test",
        "max_tokens": 64,
        "system": [{"type": "text", "text": "Be brief.", "cache_control": cache}],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": cache}]}
        ],
        "stream": True,
    }


def test_cache_breakpoints_leave_the_conversation_alone() -> None:
    request = REQUEST.model_copy(update={"tools": [{"name": "A"}, {"name": "B"}]})
    body = request.to_body(stream=False)
    assert body["tools"][0] == {"name": "A"}
    assert body["tools"][1]["cache_control"] == {"type": "ephemeral"}
    assert "cache_control" not in request.messages[-1].model_dump_json()
    plain = request.model_copy(update={"cache": False}).to_body(stream=False)
    assert plain["system"] == "Be brief."
    assert "cache_control" not in json.dumps(plain)


async def test_no_api_key_header_without_a_key() -> None:
    rec = Recorder(sse_response())
    async with MessagesClient(
        base_url="http://api.test", api_key=None, transport=httpx.MockTransport(rec)
    ) as client:
        await client.stream(REQUEST)
    assert "x-api-key" not in rec.requests[0].headers


async def test_json_answer_instead_of_a_stream_is_permanent() -> None:
    response = httpx.Response(200, json={"type": "message", "content": []})
    async with MessagesClient(
        base_url="http://api.test", api_key=None, transport=httpx.MockTransport(Recorder(response))
    ) as client:
        with pytest.raises(StreamParseError, match="application/json, not an event stream"):
            await client.stream(REQUEST)


async def test_status_error_is_translated() -> None:
    response = httpx.Response(
        404,
        headers={"retry-after": "1"},
        json={"type": "error", "error": {"type": "not_found_error", "message": "model: nope"}},
    )
    async with MessagesClient(
        base_url="http://api.test", api_key="k", transport=httpx.MockTransport(Recorder(response))
    ) as client:
        with pytest.raises(APIStatusError) as info:
            await client.stream(REQUEST)
    assert str(info.value) == "API returned 404 not_found_error: model: nope"
    assert info.value.retry_after == 1.0
    assert not info.value.transient


async def _stall_after(prefix: bytes) -> AsyncIterator[bytes]:
    yield prefix
    await trio.sleep_forever()


async def test_total_timeout_covers_a_stalled_stream() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            200, headers={"content-type": "text/event-stream"}, content=_stall_after(STREAM[:50])
        )

    async with MessagesClient(
        base_url="http://api.test",
        api_key=None,
        total_timeout=0.05,
        transport=httpx.MockTransport(handler),
    ) as client:
        with pytest.raises(APITimeoutError, match=r"not complete within 0\.05s") as info:
            await client.stream(REQUEST)
    assert info.value.transient


async def _break_after(prefix: bytes) -> AsyncIterator[bytes]:
    yield prefix
    raise httpx.RemoteProtocolError("peer closed connection")


async def test_connection_dropped_mid_stream_is_stream_transient() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            200, headers={"content-type": "text/event-stream"}, content=_break_after(STREAM[:300])
        )

    async with MessagesClient(
        base_url="http://api.test", api_key=None, transport=httpx.MockTransport(handler)
    ) as client:
        with pytest.raises(StreamTransientError, match="broke off: peer closed connection"):
            await client.stream(REQUEST)


@pytest.mark.parametrize(
    ("exc", "expected"),
    [
        (httpx.ConnectError("refused"), APIConnectionError),
        (httpx.ConnectError(""), APIConnectionError),
        (httpx.ConnectError("two\nlines"), APIConnectionError),
        (httpx.ConnectTimeout("slow"), APITimeoutError),
        (httpx.ReadTimeout("slow"), APITimeoutError),
        (httpx.PoolTimeout("slow"), APITimeoutError),
        (httpx.RemoteProtocolError("garbage"), APIConnectionError),
        (httpx.LocalProtocolError("bad header"), APIRequestError),
    ],
)
async def test_transport_errors_are_translated(
    exc: httpx.HTTPError, expected: type[Exception]
) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise exc

    async with MessagesClient(
        base_url="http://api.test", api_key=None, transport=httpx.MockTransport(handler)
    ) as client:
        with pytest.raises(expected) as info:
            await client.stream(REQUEST)
    assert info.value.__cause__ is exc
    assert "\n" not in str(info.value)
    assert not str(info.value).endswith(": ")


async def test_unsupported_scheme_is_a_permanent_request_error() -> None:
    async with MessagesClient(base_url="ftp://api.test", api_key=None) as client:
        with pytest.raises(APIRequestError, match=r"ftp://api\.test/v1/messages") as info:
            await client.stream(REQUEST)
    assert not info.value.transient


async def test_invalid_url_is_a_permanent_request_error() -> None:
    async with MessagesClient(base_url="http://a\x00b", api_key=None) as client:
        with pytest.raises(APIRequestError, match="non-printable") as info:
            await client.stream(REQUEST)
    assert not info.value.transient


async def test_refused_connection_over_real_loopback() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    # Nothing listens on the port now, so the kernel refuses at once.
    async with MessagesClient(base_url=f"http://127.0.0.1:{port}", api_key=None) as client:
        with pytest.raises(APIConnectionError, match=f"cannot connect to http://127.0.0.1:{port}"):
            await client.stream(REQUEST)


@pytest.mark.parametrize(
    ("base_url", "proxies", "default"),
    [
        ("https://api.anthropic.com", {}, True),
        ("HTTPS://api.anthropic.com", {}, True),
        ("http://127.0.0.1:8080", {"https": "http://proxy:3128"}, True),
        ("http://127.0.0.1:8080", {"no": "localhost"}, True),  # any proxy setting: the default
        ("http://127.0.0.1:8080", {}, False),
        ("HTTP://localhost", {}, False),
    ],
)
def test_tls_verify_skips_the_ca_bundle_only_where_no_tls_can_happen(
    base_url: str, proxies: dict[str, str], default: bool
) -> None:
    import ssl

    from forgeflare.agent._client import tls_verify

    verify = tls_verify(base_url, proxies)
    if default:
        assert verify is True
        return
    # No CA at all, and still verifying: a certificate it ever saw would be refused.
    assert isinstance(verify, ssl.SSLContext)
    assert verify.verify_mode == ssl.CERT_REQUIRED
    assert verify.check_hostname
    assert verify.cert_store_stats()["x509_ca"] == 0
