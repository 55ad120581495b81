"""Pure rendering of scripted responses into what the Messages API sends.

Nothing here does I/O: the server calls these, and so can a benchmark that wants the exact
bytes the server would stream (``encode_sse(render_events(...))``).

Ids are deterministic (derived from the response's index in the script), so two runs of the
same script produce the same bytes.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
from collections.abc import Iterable, Mapping
from typing import Any, TypedDict, Unpack

from forgeflare.mockapi._script import (
    RedactedThinkingSpec,
    ScriptBlock,
    ScriptResponse,
    ServerToolUseSpec,
    TextSpec,
    ThinkingSpec,
    ToolUseSpec,
)

__all__ = [
    "Event",
    "count_tokens",
    "encode_event",
    "encode_sse",
    "error_body",
    "make_id",
    "message_events",
    "render_events",
    "render_message",
]

#: One server-sent event: its name (the ``event:`` line) and its JSON payload.
Event = tuple[str, dict[str, Any]]

_ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def make_id(prefix: str, *parts: object) -> str:
    """A deterministic id shaped like the real API's (``msg_01`` + 22 base-62 characters)."""
    digest = hashlib.sha256(":".join([prefix, *map(str, parts)]).encode()).digest()
    n = int.from_bytes(digest[:17], "big")
    chars = []
    for _ in range(22):
        n, r = divmod(n, 62)
        chars.append(_ALPHABET[r])
    return f"{prefix}_01{''.join(chars)}"


def _signature(thinking: str) -> str:
    return base64.b64encode(hashlib.sha256(thinking.encode()).digest() * 2).decode()


def _as_response(response: ScriptResponse | Mapping[str, Any]) -> ScriptResponse:
    if isinstance(response, ScriptResponse):
        return response
    return ScriptResponse.model_validate(response)


def _estimate(text_len: int) -> int:
    # About four characters per token, like the usual rule of thumb; at least one token.
    return max(1, math.ceil(text_len / 4))


def _output_tokens(response: ScriptResponse) -> int:
    if response.usage.output_tokens is not None:
        return response.usage.output_tokens
    size = 0
    for block in response.content:
        if isinstance(block, TextSpec):
            size += len(block.text)
        elif isinstance(block, ToolUseSpec):
            size += len(block.name) + len(json.dumps(block.input))
        elif isinstance(block, ThinkingSpec):
            size += len(block.thinking)
        elif isinstance(block, RedactedThinkingSpec):
            size += len(block.data)
        else:
            size += len(json.dumps(block.model_dump()))
    return _estimate(size)


def _usage(
    response: ScriptResponse, default_input_tokens: int, default_cache: tuple[int, int]
) -> dict[str, Any]:
    u = response.usage
    if u.input_tokens is not None:  # a scripted usage wins, cache fields as scripted
        read, write = u.cache_read_input_tokens, u.cache_creation_input_tokens
    else:
        read = u.cache_read_input_tokens or default_cache[0]
        write = u.cache_creation_input_tokens or default_cache[1]
    return {
        "input_tokens": u.input_tokens if u.input_tokens is not None else default_input_tokens,
        "cache_creation_input_tokens": write,
        "cache_read_input_tokens": read,
        "output_tokens": _output_tokens(response),
    }


def cache_usage(body: Mapping[str, Any], cached: set[str]) -> tuple[int, int, int]:
    """``(input, cache_read, cache_write)`` tokens of a request, as prompt caching counts them.

    The request is read in the API's cache order (tools, system, messages); each block that
    carries ``cache_control`` ends a cacheable prefix. The longest prefix seen before (a hash in
    ``cached``) is read from the cache; from there to the last breakpoint is written to it;
    the rest is plain input. Every breakpoint's prefix is then remembered in ``cached``.
    """
    parts: list[Any] = []
    tools = body.get("tools")
    if isinstance(tools, list):
        parts += tools
    system = body.get("system")
    if isinstance(system, list):
        parts += system
    elif system:
        parts.append({"type": "text", "text": system})
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):
            parts += [{"role": message.get("role"), **b} for b in content if isinstance(b, dict)]
        else:
            parts.append(
                {
                    "role": message.get("role") if isinstance(message, dict) else None,
                    "text": content,
                }
            )
    total = count_tokens(body)
    texts = []
    for part in parts:
        # the marker itself is not content: the same prefix matches with or without it
        plain = (
            {k: v for k, v in part.items() if k != "cache_control"}
            if isinstance(part, dict)
            else part
        )
        texts.append(json.dumps(plain, sort_keys=True, default=str))
    whole = sum(len(t) for t in texts) or 1
    digest = hashlib.sha256(str(body.get("model", "")).encode())
    size = 0
    read = 0
    breakpoints: list[tuple[str, int]] = []
    for part, text in zip(parts, texts, strict=True):
        digest.update(text.encode())
        size += len(text)
        key = digest.copy().hexdigest()
        tokens = total * size // whole  # the request's tokens, shared out by size
        if key in cached:
            read = tokens  # the longest earlier breakpoint this request starts with
        if isinstance(part, dict) and part.get("cache_control"):
            breakpoints.append((key, tokens))
    last = breakpoints[-1][1] if breakpoints else 0
    write = max(0, last - read)
    cached.update(key for key, _ in breakpoints)
    return max(0, total - read - write), read, write


def _full_block(block: ScriptBlock, *, index: int, position: int) -> dict[str, Any]:
    if isinstance(block, TextSpec):
        return {"type": "text", "text": block.text}
    if isinstance(block, ToolUseSpec):
        return {
            "type": "tool_use",
            "id": block.id or make_id("toolu", index, position),
            "name": block.name,
            "input": block.input,
        }
    if isinstance(block, ThinkingSpec):
        sig = block.signature if block.signature is not None else _signature(block.thinking)
        return {"type": "thinking", "thinking": block.thinking, "signature": sig}
    if isinstance(block, RedactedThinkingSpec):
        return {"type": "redacted_thinking", "data": block.data}
    return block.model_dump()


def _chunks(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def render_message(
    response: ScriptResponse | Mapping[str, Any],
    *,
    model: str,
    index: int = 0,
    default_input_tokens: int = 0,
    default_cache: tuple[int, int] = (0, 0),
) -> dict[str, Any]:
    """The non-streaming JSON body of a scripted response (a ``message`` object).

    ``index`` is the response's position in the script (it seeds the ids);
    ``default_input_tokens`` is reported when the script gives no ``input_tokens``.
    """
    resp = _as_response(response)
    return {
        "id": make_id("msg", index),
        "type": "message",
        "role": "assistant",
        "model": resp.model or model,
        "content": [_full_block(b, index=index, position=i) for i, b in enumerate(resp.content)],
        "stop_reason": resp.stop_reason,
        "stop_sequence": resp.stop_sequence,
        "usage": _usage(resp, default_input_tokens, default_cache),
    }


def _block_events(block: ScriptBlock, full: dict[str, Any], i: int, size: int) -> list[Event]:
    """``content_block_start``, the deltas, ``content_block_stop`` of one block."""
    if isinstance(block, TextSpec):
        start: dict[str, Any] = {"type": "text", "text": ""}
        deltas = [{"type": "text_delta", "text": c} for c in _chunks(block.text, size)]
    elif isinstance(block, ToolUseSpec):
        start = {"type": "tool_use", "id": full["id"], "name": block.name, "input": {}}
        # The real API often opens with an empty fragment; clients must cope with it.
        pieces = ["", *_chunks(json.dumps(block.input), size)] if block.input else [""]
        deltas = [{"type": "input_json_delta", "partial_json": p} for p in pieces]
    elif isinstance(block, ThinkingSpec):
        start = {"type": "thinking", "thinking": "", "signature": ""}
        deltas = [{"type": "thinking_delta", "thinking": c} for c in _chunks(block.thinking, size)]
        deltas.append({"type": "signature_delta", "signature": full["signature"]})
    elif isinstance(block, ServerToolUseSpec):
        start = {**full, "input": {}}
        pieces = _chunks(json.dumps(block.input), size) if block.input else []
        deltas = [{"type": "input_json_delta", "partial_json": p} for p in pieces]
    else:  # redacted thinking and server tool results arrive whole
        start = full
        deltas = []
    events: list[Event] = [
        ("content_block_start", {"type": "content_block_start", "index": i, "content_block": start})
    ]
    events.extend(
        ("content_block_delta", {"type": "content_block_delta", "index": i, "delta": d})
        for d in deltas
    )
    events.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
    return events


class _MessageOptions(TypedDict, total=False):
    """:func:`render_message`'s optional keywords, which :func:`render_events` passes on."""

    index: int
    default_input_tokens: int
    default_cache: tuple[int, int]


def render_events(
    response: ScriptResponse | Mapping[str, Any], *, model: str, **options: Unpack[_MessageOptions]
) -> list[Event]:
    """The stream events of a scripted response, exactly as the server sends them.

    The keywords are :func:`render_message`'s: the events carry that message's ids and usage.

    A complete stream is ``message_start``, per block ``content_block_start`` / deltas /
    ``content_block_stop`` (a ``ping`` after the first block start), ``message_delta``,
    ``message_stop``. A ``stream_error`` replaces everything after its ``after_events`` events
    by one ``error`` event; ``truncate_after_events`` then keeps only that many events.
    """
    resp = _as_response(response)
    return message_events(resp, render_message(resp, model=model, **options))


def message_events(
    response: ScriptResponse | Mapping[str, Any], message: dict[str, Any]
) -> list[Event]:
    """The stream events of ``response``, from the body :func:`render_message` gave for it.

    One rendering serves both answers: the events carry exactly that message's ids and usage.
    """
    resp = _as_response(response)
    usage = message["usage"]
    start_message = dict(message, content=[], stop_reason=None, stop_sequence=None)
    # Like the real API: message_start reports the input side and a provisional output count;
    # message_delta carries the final (cumulative) output count.
    start_message["usage"] = dict(usage, output_tokens=min(1, usage["output_tokens"]))
    events: list[Event] = [("message_start", {"type": "message_start", "message": start_message})]
    ping: Event = ("ping", {"type": "ping"})
    if not resp.content:
        events.append(ping)
    for i, (block, full) in enumerate(zip(resp.content, message["content"], strict=True)):
        block_events = _block_events(block, full, i, resp.chunk_chars)
        events.append(block_events[0])
        if i == 0:
            events.append(ping)
        events.extend(block_events[1:])
    events.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": resp.stop_reason, "stop_sequence": resp.stop_sequence},
                "usage": {"output_tokens": usage["output_tokens"]},
            },
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    if resp.stream_error is not None:
        err = resp.stream_error
        events = events[: err.after_events]
        events.append(("error", error_body(err.type, err.error_message)))
    if resp.truncate_after_events is not None:
        events = events[: resp.truncate_after_events]
    return events


def error_body(error_type: str, message: str) -> dict[str, Any]:
    """The Anthropic error object: ``{"type": "error", "error": {"type", "message"}}``."""
    return {"type": "error", "error": {"type": error_type, "message": message}}


def encode_sse(events: Iterable[Event]) -> bytes:
    """Server-sent-event bytes: ``event: NAME``, ``data: JSON``, a blank line, per event."""
    return b"".join(encode_event(name, data) for name, data in events)


def encode_event(name: str, data: Mapping[str, Any]) -> bytes:
    """One event's bytes (compact JSON on one ``data:`` line)."""
    payload = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    return f"event: {name}\ndata: {payload}\n\n".encode()


def _text_size(value: Any) -> int:
    if isinstance(value, str):
        return len(value)
    if isinstance(value, Mapping):
        return sum(
            _text_size(v) for k, v in value.items() if k not in ("type", "role", "signature")
        )
    if isinstance(value, list):
        return sum(_text_size(v) for v in value)
    return 0


def count_tokens(body: Mapping[str, Any]) -> int:
    """A plausible, deterministic input-token count for a request body.

    About four characters per token over the system prompt, the messages and the tool
    definitions (tool schemas counted as their JSON), plus a small per-message overhead.
    """
    chars = _text_size(body.get("system"))
    messages = body.get("messages")
    n_messages = len(messages) if isinstance(messages, list) else 0
    chars += _text_size(messages)
    tools = body.get("tools")
    if isinstance(tools, list):
        chars += len(json.dumps(tools))
    return _estimate(chars) + 3 * n_messages
