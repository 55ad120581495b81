"""SSE parsing speed: forgeflare's client against the official ``anthropic`` SDK, same bytes.

Both consume the identical byte stream (rendered by the mock API's renderer: a text block and a
tool_use block, 16 characters per delta like the real API), delivered through an in-memory
``MockTransport`` in 4 KiB chunks, and accumulate the final message. Prints MB/s for
each and the ratio (the target is ours >= 5x the SDK). Run::

    .venv/bin/python bench/bench_sse.py [--quick]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import AsyncIterator
from typing import Any

import anthropic
import httpx
import trio

try:  # anthropic >= 2 is built on httpx2 and rejects httpx objects; older versions use httpx.
    import httpx2 as sdk_httpx
except ImportError:  # pragma: no cover
    sdk_httpx = httpx  # type: ignore[no-redef]

from forgeflare.agent import Message, MessagesClient, MessagesRequest
from forgeflare.agent._sse import parse_sse_bytes
from forgeflare.mockapi import encode_sse, render_events, render_message

MODEL = "claude-bench"
CHUNK = 4096
SSE_HEADERS = {"content-type": "text/event-stream"}


def make_stream(target_bytes: int) -> tuple[bytes, dict[str, Any]]:
    """An SSE stream of about ``target_bytes``: 80% text deltas, 20% tool input deltas."""
    # One 16-character delta costs about 150 bytes on the wire.
    text_chars = int(target_bytes * 0.8 / 150 * 16)
    json_chars = int(target_bytes * 0.2 / 150 * 16)
    words = "Lorem ipsum — dolor sit amet, ünïcode ✓ consectetur adipiscing elit. "
    text = (words * (text_chars // len(words) + 1))[:text_chars]
    script = {
        "content": [
            {"type": "text", "text": text},
            {
                "type": "tool_use",
                "name": "Edit",
                "input": {"path": "src/app.py", "new_str": "x = 1\n" * (json_chars // 7 + 1)},
            },
        ],
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 1000, "output_tokens": 500},
    }
    data = encode_sse(render_events(script, model=MODEL))
    return data, render_message(script, model=MODEL)


def chunks(data: bytes) -> list[bytes]:
    return [data[i : i + CHUNK] for i in range(0, len(data), CHUNK)]


def sdk_times(data: bytes, repeat: int) -> tuple[float, list[dict[str, Any]]]:
    """Best seconds per message for the SDK (client built once, outside the timing)."""
    pieces = chunks(data)

    def handler(request: Any) -> Any:
        return sdk_httpx.Response(200, headers=SSE_HEADERS, content=iter(pieces))

    http = sdk_httpx.Client(transport=sdk_httpx.MockTransport(handler))
    client = anthropic.Anthropic(api_key="x", base_url="http://bench.test", http_client=http)
    best, content = float("inf"), []
    for _ in range(repeat):
        start = time.perf_counter()
        with client.messages.stream(
            model=MODEL, max_tokens=1024, messages=[{"role": "user", "content": "hi"}]
        ) as stream:
            message = stream.get_final_message()
        best = min(best, time.perf_counter() - start)
        content = [block.model_dump(exclude_none=True) for block in message.content]
    http.close()
    return best, content


async def _aiter(pieces: list[bytes]) -> AsyncIterator[bytes]:
    for piece in pieces:
        yield piece


def our_times(data: bytes, repeat: int) -> tuple[float, list[dict[str, Any]]]:
    """Best seconds per message for MessagesClient under trio (client built once)."""
    pieces = chunks(data)

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers=SSE_HEADERS, content=_aiter(pieces))

    request = MessagesRequest(model=MODEL, max_tokens=1024, messages=[Message.user_text("hi")])

    async def main() -> tuple[float, list[dict[str, Any]]]:
        best, content = float("inf"), []
        async with MessagesClient(
            base_url="http://bench.test", api_key="x", transport=httpx.MockTransport(handler)
        ) as client:
            for _ in range(repeat):
                start = time.perf_counter()
                response = await client.stream(request)
                best = min(best, time.perf_counter() - start)
                content = [block.model_dump() for block in response.content]
        return best, content

    return trio.run(main)


def parser_time(data: bytes, repeat: int) -> float:
    """Best seconds per message for the bare parser (no HTTP layer)."""
    pieces = chunks(data)
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        parse_sse_bytes(pieces)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    args = parser.parse_args()
    sizes = [("64 KB", 64 * 1024, 9 if not args.quick else 3), ("1 MB", 1024 * 1024, 3)]
    if args.quick:
        sizes[1] = ("1 MB", 1024 * 1024, 1)
    print(f"{'stream':>8} {'SDK MB/s':>10} {'ours MB/s':>10} {'ratio':>7} {'parser MB/s':>12}")
    for label, size, repeat in sizes:
        data, expected = make_stream(size)
        sdk_s, sdk_content = sdk_times(data, repeat)
        our_s, our_content = our_times(data, repeat)
        # Same bytes, same final content: otherwise the comparison means nothing.
        assert our_content == expected["content"], "forgeflare assembled a different message"
        assert sdk_content == expected["content"], "the SDK assembled a different message"
        mb = len(data) / 1e6
        sdk, ours, pure = mb / sdk_s, mb / our_s, mb / parser_time(data, repeat)
        print(
            f"{label:>8} {sdk:>10.1f} {ours:>10.1f} {ours / sdk:>6.1f}x {pure:>12.1f}"
            f"   ({len(data):,} bytes of SSE)"
        )
    print("best of the repeats; clients built once, outside the timing")
    print("ours = MessagesClient over httpx.MockTransport under trio; parser = parse_sse_bytes")


if __name__ == "__main__":
    main()
