"""retry_delay (pure: table + properties) and RetryingClient over an in-memory transport."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from forgeflare.agent import (
    DEFAULT_BACKOFF,
    APIConnectionError,
    APIError,
    APIRequestError,
    APIStatusError,
    APITimeoutError,
    Message,
    MessagesClient,
    MessagesRequest,
    RetryingClient,
    StreamParseError,
    StreamTransientError,
    TextBlock,
    UsageLimitError,
    retry_delay,
    usage_limit_wait,
)
from forgeflare.agent._client import parse_ratelimit_reset

# ---------------------------------------------------------------- retry_delay: the table


def status(code: int, retry_after: float | None = None, should: bool | None = None) -> APIError:
    return APIStatusError(
        f"API returned {code}", status=code, retry_after=retry_after, should_retry=should
    )


TRANSIENT: list[APIError] = [
    status(429),
    status(500),
    status(502),
    status(503),
    status(504),
    status(529),
    status(400, should=True),
    APIConnectionError("refused"),
    APITimeoutError("stalled"),
    StreamTransientError("overloaded"),
]
PERMANENT: list[APIError] = [
    status(400),
    status(401),
    status(403),
    status(404),
    status(408),
    status(413),
    status(422),
    status(429, should=False),
    status(529, should=False),
    StreamParseError("invalid_request_error"),
    APIRequestError("bad scheme"),
    APIError("unclassified"),
]


@pytest.mark.parametrize("error", TRANSIENT, ids=str)
def test_transient_errors_follow_the_backoff(error: APIError) -> None:
    assert error.transient
    assert [retry_delay(n, error, DEFAULT_BACKOFF) for n in range(6)] == [
        None,
        2,
        4,
        8,
        16,
        None,
    ]


@pytest.mark.parametrize("error", PERMANENT, ids=str)
def test_permanent_errors_are_never_retried(error: APIError) -> None:
    assert not error.transient
    assert all(retry_delay(n, error, DEFAULT_BACKOFF) is None for n in range(6))


@pytest.mark.parametrize(
    ("retry_after", "expected"),
    [(0, 2), (0.5, 2), (3, 3), (59.9, 59.9), (60, 60), (61, 60), (3600, 60), (-5, 2)],
)
def test_retry_after_overrides_and_is_capped(retry_after: float, expected: float) -> None:
    for attempt in range(1, 5):
        assert retry_delay(attempt, status(429, retry_after), DEFAULT_BACKOFF) == expected
    assert retry_delay(5, status(429, retry_after), DEFAULT_BACKOFF) is None


def test_custom_schedule_sets_count_and_delays() -> None:
    error = status(503)
    assert [retry_delay(n, error, (0, 0.1)) for n in (1, 2, 3)] == [0, 0.1, None]
    assert retry_delay(1, error, ()) is None


errors = st.one_of(
    st.builds(
        status,
        st.integers(min_value=400, max_value=599),
        st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True)),
        st.one_of(st.none(), st.booleans()),
    ),
    st.sampled_from(TRANSIENT + PERMANENT),
)
schedules = st.lists(st.floats(min_value=0, max_value=1000), max_size=8)


@given(st.integers(min_value=-3, max_value=12), errors, schedules)
def test_retry_delay_properties(attempt: int, error: APIError, schedule: list[float]) -> None:
    delay = retry_delay(attempt, error, schedule)
    if not error.transient or attempt < 1 or attempt > len(schedule):
        assert delay is None
        return
    assert delay is not None
    assert delay >= 0
    assert delay >= min(schedule[0], schedule[attempt - 1])  # never under the minimum backoff
    if delay > max(60, schedule[0]):
        assert delay == schedule[attempt - 1]


@given(st.integers(min_value=5, max_value=100), errors)
def test_no_fifth_retry_with_the_default_schedule(attempt: int, error: APIError) -> None:
    assert retry_delay(attempt, error, DEFAULT_BACKOFF) is None


# ------------------------------------------------- RetryingClient over an in-memory transport


def sse(*events: dict[str, Any]) -> bytes:
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


def good_stream(text: str = "Done.") -> bytes:
    return sse(
        {"type": "message_start", "message": {"id": "m", "model": "x", "usage": {}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {}},
        {"type": "message_stop"},
    )


def overloaded_mid_stream() -> bytes:
    head = good_stream("partial").split(b"event: content_block_stop")[0]
    return head + sse({"type": "error", "error": {"type": "overloaded_error", "message": "Over"}})


def truncated() -> bytes:
    return good_stream("cut").split(b"event: message_delta")[0]


SSE_HEADERS = {"content-type": "text/event-stream"}
Script = list[Callable[[httpx.Request], httpx.Response]]


def respond(code: int = 200, body: bytes = b"", **headers: str) -> Callable[..., httpx.Response]:
    hdrs = dict(SSE_HEADERS) if code == 200 else {"content-type": "application/json"}
    hdrs.update({k.replace("_", "-"): v for k, v in headers.items()})
    return lambda request: httpx.Response(code, headers=hdrs, content=body)


def error_body(kind: str, message: str) -> bytes:
    return json.dumps({"type": "error", "error": {"type": kind, "message": message}}).encode()


def raise_connect(request: httpx.Request) -> httpx.Response:
    raise httpx.ConnectError("connection refused", request=request)


class Harness:
    def __init__(self, script: Script) -> None:
        self._script: Iterator[Callable[[httpx.Request], httpx.Response]] = iter(script)
        self.requests: list[httpx.Request] = []
        self.delays: list[float] = []
        self.log: list[str] = []
        self.text: list[str] = []
        client = MessagesClient(
            base_url="http://api.test", api_key="k", transport=httpx.MockTransport(self._handle)
        )
        self.retrying = RetryingClient(client, sleep=self._sleep, log=self.log.append)

    def _handle(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return next(self._script)(request)

    async def _sleep(self, delay: float) -> None:
        self.delays.append(delay)

    async def send(self) -> Any:
        request = MessagesRequest(
            model="claude-test", max_tokens=100, messages=[Message.user_text("hi")]
        )
        try:
            return await self.retrying.send(request, on_text=self.text.append)
        finally:
            await self.retrying.client.aclose()


async def test_success_first_time_does_not_sleep_or_log() -> None:
    h = Harness([respond(body=good_stream())])
    resp = await h.send()
    assert resp.content == [TextBlock(text="Done.")]
    assert (len(h.requests), h.delays, h.log) == (1, [], [])


async def test_529_twice_then_success_uses_the_backoff() -> None:
    overloaded = respond(529, error_body("overloaded_error", "Overloaded"))
    h = Harness([overloaded, overloaded, respond(body=good_stream())])
    resp = await h.send()
    assert resp.content == [TextBlock(text="Done.")]
    assert len(h.requests) == 3
    assert h.delays == [2, 4]
    assert h.log == [
        "[retry] Attempt 1/4: API returned 529 overloaded_error: Overloaded — waiting 2s",
        "[retry] Attempt 2/4: API returned 529 overloaded_error: Overloaded — waiting 4s",
    ]


async def test_retry_after_zero_still_waits_the_minimum_backoff() -> None:
    # A 529 storm answered with retry-after: 0 spent all four retries in 0.68 s.
    storm = respond(529, error_body("overloaded_error", "Overloaded"), retry_after="0")
    h = Harness([storm] * 4 + [respond(body=good_stream())])
    await h.send()
    assert h.delays == [2, 2, 2, 2]


async def test_a_malformed_json_event_is_retried_like_garbage() -> None:
    # One data: line that is not JSON used to end the turn with api_error and no retry.
    broken = good_stream().replace(
        b'"type": "content_block_stop"', b'"type": content_block_stop', 1
    )
    assert broken != good_stream()
    h = Harness([respond(body=broken), respond(body=good_stream())])
    await h.send()
    assert len(h.requests) == 2
    assert h.log[0].startswith("[retry] Attempt 1/4: API stream sent unparseable JSON")


async def test_retry_after_is_capped_at_60() -> None:
    busy = respond(503, error_body("overloaded_error", "x"), retry_after="600")
    h = Harness([busy, respond(body=good_stream())])
    await h.send()
    assert h.delays == [60]


async def test_a_long_429_is_a_usage_limit_not_retried() -> None:
    limited = respond(429, error_body("rate_limit_error", "x"), retry_after="600")
    h = Harness([limited, respond(body=good_stream())])
    before = datetime.now(UTC)
    with pytest.raises(UsageLimitError) as info:
        await h.send()
    assert h.delays == []
    assert info.value.resets_at is not None
    assert 590 <= (info.value.resets_at - before).total_seconds() <= 610
    assert "limit resets at" in str(info.value)


def test_usage_limit_wait_from_headers() -> None:
    def err(status: int, **kw: float | None) -> APIStatusError:
        return APIStatusError("x", status=status, **kw)  # type: ignore[arg-type]

    assert usage_limit_wait(err(429, retry_after=70)) == 70
    assert usage_limit_wait(err(429, reset_in=3600)) == 3600
    assert usage_limit_wait(err(429, retry_after=30)) is None
    assert usage_limit_wait(err(529, retry_after=600)) is None
    assert parse_ratelimit_reset({"anthropic-ratelimit-unified-reset": "1100"}, now=1000) == 100
    assert (
        parse_ratelimit_reset(
            {"anthropic-ratelimit-requests-reset": "1970-01-01T00:20:00Z"}, now=1000
        )
        == 200
    )
    assert parse_ratelimit_reset({"anthropic-ratelimit-unified-reset": "soon"}) is None


async def test_mid_stream_error_retries_from_the_beginning() -> None:
    h = Harness([respond(body=overloaded_mid_stream()), respond(body=good_stream())])
    resp = await h.send()
    assert resp.content == [TextBlock(text="Done.")]
    assert h.text == ["partial", "Done."]
    assert h.log == [
        "[retry] Attempt 1/4: API stream error overloaded_error: Over — waiting 2s",
        "[retry] Retrying from beginning of response...",
    ]


async def _stall_then_timeout(prefix: bytes) -> AsyncIterator[bytes]:
    yield prefix
    raise httpx.ReadTimeout("stalled")


async def test_timeout_after_text_was_shown_retries_from_the_beginning() -> None:
    def stalled(request: httpx.Request) -> httpx.Response:
        head = good_stream("partial").split(b"event: content_block_stop")[0]
        return httpx.Response(200, headers=SSE_HEADERS, content=_stall_then_timeout(head))

    h = Harness([stalled, respond(body=good_stream())])
    await h.send()
    assert h.text == ["partial", "Done."]
    assert h.log == [
        "[retry] Attempt 1/4: API stream stalled: no data from http://api.test/v1/messages "
        "for 120s — waiting 2s",
        "[retry] Retrying from beginning of response...",
    ]


async def test_truncated_stream_is_retried_never_accepted() -> None:
    h = Harness([respond(body=truncated()), respond(body=good_stream())])
    resp = await h.send()
    assert resp.content == [TextBlock(text="Done.")]
    assert len(h.requests) == 2
    assert "Retrying from beginning of response" in h.log[-1]


async def test_four_retries_then_the_last_error_is_raised() -> None:
    h = Harness([respond(500, error_body("api_error", f"fail {i}")) for i in range(5)])
    with pytest.raises(APIStatusError, match="API returned 500 api_error: fail 4") as info:
        await h.send()
    assert info.value.status == 500
    assert len(h.requests) == 5
    assert h.delays == [2, 4, 8, 16]
    assert [line.split(":")[0] for line in h.log] == [
        "[retry] Attempt 1/4",
        "[retry] Attempt 2/4",
        "[retry] Attempt 3/4",
        "[retry] Attempt 4/4",
    ]


async def test_permanent_error_is_raised_at_once() -> None:
    h = Harness([respond(400, error_body("invalid_request_error", "messages: field required"))])
    with pytest.raises(APIStatusError) as info:
        await h.send()
    assert str(info.value) == "API returned 400 invalid_request_error: messages: field required"
    assert (len(h.requests), h.delays, h.log) == (1, [], [])


async def test_should_retry_false_is_not_retried() -> None:
    h = Harness([respond(503, b"busy", x_should_retry="false")])
    with pytest.raises(APIStatusError, match="API returned 503: busy"):
        await h.send()
    assert len(h.requests) == 1


async def test_connection_error_is_retried() -> None:
    h = Harness([raise_connect, respond(body=good_stream())])
    await h.send()
    assert len(h.requests) == 2
    assert h.log == [
        "[retry] Attempt 1/4: cannot connect to http://api.test/v1/messages: "
        "connection refused — waiting 2s"
    ]


async def test_invalid_request_error_event_is_not_retried() -> None:
    body = good_stream().split(b"event: content_block_stop")[0] + sse(
        {"type": "error", "error": {"type": "invalid_request_error", "message": "bad"}}
    )
    h = Harness([respond(body=body)])
    with pytest.raises(StreamParseError, match="invalid_request_error: bad"):
        await h.send()
    assert len(h.requests) == 1


async def test_injected_schedule_is_used() -> None:
    h = Harness([respond(503, b""), respond(503, b""), respond(503, b"")])
    h.retrying = RetryingClient(
        h.retrying.client, schedule=(0.5, 1), sleep=h._sleep, log=h.log.append
    )
    with pytest.raises(APIStatusError, match=r"API returned 503: \(empty body\)"):
        await h.send()
    assert h.delays == [0.5, 1]
    assert h.log[0].startswith("[retry] Attempt 1/2:")
