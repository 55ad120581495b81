"""The API client against a real ``forgeflare mock-api`` process over loopback HTTP.

Each retry case asserts how many requests the mock received. Backoff sleeps are recorded, not
slept.
"""

from __future__ import annotations

from typing import Any

import pytest
import trio

from forgeflare.agent import (
    APIStatusError,
    APITimeoutError,
    Message,
    MessagesClient,
    MessagesRequest,
    RetryingClient,
    StopReason,
    StreamTransientError,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
)
from forgeflare.mockapi import render_message
from mockapi_support import MockAPI, MockServer

MODEL = "claude-test"
REQUEST = MessagesRequest(
    model=MODEL, max_tokens=1024, messages=[Message.user_text("Run the tests.")]
)
DONE = {"content": [{"type": "text", "text": "Done."}], "stop_reason": "end_turn"}


class Run:
    """A RetryingClient on the mock server that records sleeps, log lines and text deltas."""

    def __init__(self, server: MockServer, *, real_sleep: bool = False, **client: Any) -> None:
        self.server = server
        self.delays: list[float] = []
        self.log: list[str] = []
        self.text: list[str] = []
        self.client = MessagesClient(base_url=server.url, api_key="sk-test", **client)
        self.retrying = RetryingClient(
            self.client, sleep=trio.sleep if real_sleep else self._sleep, log=self.log.append
        )

    async def _sleep(self, delay: float) -> None:
        self.delays.append(delay)

    async def send(self) -> Any:
        async with self.client:
            return await self.retrying.send(REQUEST, on_text=self.text.append)


async def test_text_and_tool_use_assembled_exactly(mock_api: MockAPI) -> None:
    scripted = {
        "content": [
            {"type": "text", "text": "Running the tests — ünïcode ✓ " * 5},
            {
                "type": "tool_use",
                "name": "Bash",
                "input": {"command": "pytest -q", "timeout": 120, "env": {"A": "ü"}},
            },
        ],
        "stop_reason": "tool_use",
        "usage": {
            "input_tokens": 1200,
            "output_tokens": 40,
            "cache_creation_input_tokens": 5,
            "cache_read_input_tokens": 7,
        },
        "chunk_chars": 3,
    }
    server = mock_api({"responses": [scripted]})
    run = Run(server)
    resp = await run.send()
    expected = render_message(scripted, model=MODEL, index=0)
    assert [b.model_dump() for b in resp.content] == expected["content"]
    assert isinstance(resp.content[1], ToolUseBlock)
    assert resp.content[1].input == {"command": "pytest -q", "timeout": 120, "env": {"A": "ü"}}
    assert resp.stop_reason is StopReason.TOOL_USE
    assert resp.id == expected["id"]
    assert resp.model == MODEL
    assert resp.usage.model_dump() == expected["usage"]
    assert "".join(run.text) == scripted["content"][0]["text"]  # type: ignore[index]
    assert len(run.text) > 1  # streamed in pieces, not at the end
    (request,) = server.requests()
    assert request["path"] == "/v1/messages"
    assert request["headers"]["x-api-key"] == "[redacted]"  # sent, and kept out of the file
    assert request["headers"]["anthropic-version"] == "2023-06-01"
    assert request["body"]["stream"] is True
    assert request["body"]["model"] == MODEL


async def test_thinking_kept_with_signature(mock_api: MockAPI) -> None:
    scripted = {
        "content": [
            {
                "type": "thinking",
                "thinking": "The user wants tests run.",
                "signature": "c2lnbmF0dXJl",
            },
            {"type": "text", "text": "Running them."},
        ],
    }
    server = mock_api({"responses": [scripted]})
    resp = await Run(server).send()
    assert resp.content == [
        ThinkingBlock(thinking="The user wants tests run.", signature="c2lnbmF0dXJl"),
        TextBlock(text="Running them."),
    ]
    # Sent back unchanged in the next request.
    body = MessagesRequest(
        model=MODEL, max_tokens=10, messages=[REQUEST.messages[0], resp.to_message()]
    ).to_body(stream=True)
    assert body["messages"][1]["content"][0] == {
        "type": "thinking",
        "thinking": "The user wants tests run.",
        "signature": "c2lnbmF0dXJl",
    }


async def test_429_with_retry_after_zero_then_success(mock_api: MockAPI) -> None:
    limited = {"error": {"status": 429, "headers": {"retry-after": "0"}}}
    server = mock_api({"responses": [limited, DONE]})
    run = Run(server)
    resp = await run.send()
    assert resp.content == [TextBlock(text="Done.")]
    assert len(server.requests()) == 2
    # retry-after 0 still waits the minimum backoff: a storm of them must not burn the retries
    assert run.delays == [2]
    assert run.log == [
        "[retry] Attempt 1/4: API returned 429 rate_limit_error: "
        "Number of requests has exceeded your rate limit. — waiting 2s"
    ]


async def test_529_twice_then_success(mock_api: MockAPI) -> None:
    overloaded = {"error": {"status": 529, "type": "overloaded_error", "message": "Overloaded"}}
    server = mock_api({"responses": [overloaded, overloaded, DONE]})
    run = Run(server)
    resp = await run.send()
    assert resp.content == [TextBlock(text="Done.")]
    assert len(server.requests()) == 3
    assert run.delays == [2, 4]
    assert run.log == [
        "[retry] Attempt 1/4: API returned 529 overloaded_error: Overloaded — waiting 2s",
        "[retry] Attempt 2/4: API returned 529 overloaded_error: Overloaded — waiting 4s",
    ]


async def test_mid_stream_overloaded_error_retried(mock_api: MockAPI) -> None:
    broken = {
        "content": [{"type": "text", "text": "This answer will break off."}],
        "chunk_chars": 4,
        "stream_error": {"type": "overloaded_error", "after_events": 5},
    }
    server = mock_api({"responses": [broken, DONE]})
    run = Run(server)
    resp = await run.send()
    assert resp.content == [TextBlock(text="Done.")]
    assert len(server.requests()) == 2
    assert run.text[0] == "This"  # the broken attempt had started showing text
    assert run.text[-1] == "Done."
    assert run.log == [
        "[retry] Attempt 1/4: API stream error overloaded_error: Overloaded — waiting 2s",
        "[retry] Retrying from beginning of response...",
    ]


@pytest.mark.parametrize("mode", ["eof", "drop"])
async def test_truncated_stream_retried_never_accepted(mock_api: MockAPI, mode: str) -> None:
    cut = {
        "content": [{"type": "text", "text": "cut short"}],
        "truncate_after_events": 4,
        "truncate_mode": mode,
    }
    server = mock_api({"responses": [cut, DONE]})
    run = Run(server)
    resp = await run.send()
    assert resp.content == [TextBlock(text="Done.")]
    assert len(server.requests()) == 2
    assert run.log[-1] == "[retry] Retrying from beginning of response..."


async def test_truncated_every_time_raises_after_four_retries(mock_api: MockAPI) -> None:
    cut = {"content": [{"type": "text", "text": "cut"}], "truncate_after_events": 3}
    server = mock_api({"responses": [cut] * 5})
    run = Run(server)
    with pytest.raises(StreamTransientError, match="before message_stop"):
        await run.send()
    assert len(server.requests()) == 5
    assert run.delays == [2, 4, 8, 16]


async def test_400_not_retried_one_clear_line(mock_api: MockAPI) -> None:
    bad = {
        "error": {
            "status": 400,
            "type": "invalid_request_error",
            "message": "messages: field required",
        }
    }
    server = mock_api({"responses": [bad, DONE]})
    run = Run(server)
    with pytest.raises(APIStatusError) as info:
        await run.send()
    assert str(info.value) == "API returned 400 invalid_request_error: messages: field required"
    assert info.value.status == 400
    assert len(server.requests()) == 1
    assert run.log == []


async def test_stalled_stream_hits_the_read_timeout(mock_api: MockAPI) -> None:
    stalled = {
        "content": [{"type": "text", "text": "I will stall."}],
        "stall": {"after_events": 3, "ms": 120_000},
    }
    server = mock_api({"responses": [stalled]})
    # 2 s: the headers must come first, on a loaded machine too (else it "did not answer").
    async with MessagesClient(base_url=server.url, api_key=None, read_timeout=2) as client:
        seen: list[str] = []
        with trio.fail_after(60), pytest.raises(APITimeoutError, match="stream stalled") as info:
            await client.stream(REQUEST, on_text=seen.append)
    assert info.value.transient
    assert seen == []  # the stall came before the first text delta
    assert len(server.requests()) == 1


async def test_slow_headers_hit_the_read_timeout(mock_api: MockAPI) -> None:
    server = mock_api({"responses": [dict(DONE, delay_ms=20_000)]})
    async with MessagesClient(base_url=server.url, api_key=None, read_timeout=0.3) as client:
        with trio.fail_after(15), pytest.raises(APITimeoutError, match="did not answer"):
            await client.stream(REQUEST)


async def test_overall_timeout_ends_a_slow_but_live_stream(mock_api: MockAPI) -> None:
    # Events keep arriving (so the read timeout never fires) but too slowly to finish in time.
    slow = {
        "content": [{"type": "text", "text": "x" * 400}],
        "chunk_chars": 1,
        "event_delay_ms": 50,
    }
    server = mock_api({"responses": [slow]})
    async with MessagesClient(
        base_url=server.url, api_key=None, read_timeout=5, total_timeout=3
    ) as client:
        seen: list[str] = []
        with trio.fail_after(15), pytest.raises(APITimeoutError, match=r"within 3s"):
            await client.stream(REQUEST, on_text=seen.append)
    assert seen  # it had been streaming
