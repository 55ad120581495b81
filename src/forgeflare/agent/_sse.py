"""Server-sent events of the Messages API: bytes in, one :class:`AssistantResponse` out.

Two pure, incremental pieces that do no I/O, so the client, the tests and the benchmark feed
them the same way:

- :class:`SSEDecoder` turns byte chunks, split anywhere (mid-line, mid-UTF-8 character), into
  ``(event, data)`` pairs.
- :class:`MessageAccumulator` turns those pairs into content blocks, usage and a stop reason.

:class:`StreamParser` chains the two; the client feeds it from the network, and
:func:`parse_sse_bytes` from a list of chunks.

Both are linear in the stream's size: pieces are collected in lists and joined once when a
line or block is complete (never ``+=`` per delta), and each event costs one ``json.loads``;
pydantic models are built once per content block, not per event.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from forgeflare.agent._errors import APIError, StreamParseError, StreamTransientError
from forgeflare.agent._messages import (
    AssistantResponse,
    ContentBlock,
    RedactedThinkingBlock,
    ServerBlock,
    StopReason,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
    Usage,
)
from forgeflare.disk import loads

__all__ = [
    "MessageAccumulator",
    "SSEDecoder",
    "StreamParser",
    "parse_sse_bytes",
    "stream_error_from_event",
]

# Error types of an ``error`` event that a retry can fix; every other type is permanent.
_TRANSIENT_EVENT_ERRORS = frozenset(
    {"overloaded_error", "api_error", "rate_limit_error", "timeout_error"}
)
_STOP_REASONS = {reason.value: reason for reason in StopReason}
_USAGE_FIELDS = (
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
)


class SSEDecoder:
    """Incremental ``text/event-stream`` decoder.

    Lines end with ``\\n`` or ``\\r\\n`` (a lone ``\\r`` is honoured too, but only recognised
    once a later ``\\n`` or the end of the stream arrives). Lines are decoded as UTF-8 only
    when complete, so a chunk boundary inside a character is harmless. As the SSE standard
    says, an event left incomplete at the end of the stream is dropped.
    """

    __slots__ = ("_data", "_event", "_pending")

    def __init__(self) -> None:
        self._pending: list[bytes] = []  # bytes after the last line end seen so far
        self._event = ""
        self._data: list[str] = []

    def feed(self, chunk: bytes) -> list[tuple[str, str]]:
        """Decode ``chunk``; return the events it completed, in order."""
        end = chunk.rfind(b"\n")
        if end < 0:
            if chunk:
                self._pending.append(chunk)
            return []
        complete = chunk[: end + 1]
        if self._pending:
            self._pending.append(complete)
            complete = b"".join(self._pending)
            self._pending.clear()
        if end + 1 < len(chunk):
            self._pending.append(chunk[end + 1 :])
        return self._lines(complete)

    def close(self) -> list[tuple[str, str]]:
        """The stream ended: decode what is left (an unterminated event is dropped)."""
        rest = b"".join(self._pending)
        self._pending.clear()
        events = self._lines(rest + b"\n") if rest else []
        self._event = ""
        self._data = []
        return events

    def _lines(self, complete: bytes) -> list[tuple[str, str]]:
        if b"\r" in complete:
            complete = complete.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        events: list[tuple[str, str]] = []
        data = self._data
        lines = complete.decode("utf-8", errors="replace").split("\n")
        lines.pop()  # the text after the final line end: always empty here
        for line in lines:
            if line.startswith("data:"):
                data.append(line[6:] if line.startswith("data: ") else line[5:])
            elif not line:
                if data:
                    events.append((self._event or "message", "\n".join(data)))
                    data.clear()
                self._event = ""
            elif line.startswith("event:"):
                self._event = line[6:].lstrip(" ")
            # ":comment", "id:", "retry:" and unknown fields are ignored, as the standard says.
        return events


def stream_error_from_event(payload: dict[str, Any]) -> APIError:
    """The classified error for an ``error`` event's payload (type at ``error.type``)."""
    error = payload.get("error")
    if not isinstance(error, dict):
        return StreamParseError(f"API stream error event without an error object: {payload}")
    error_type = str(error.get("type", "unknown_error"))
    message = " ".join(str(error.get("message", "")).split()) or "(no message)"
    text = f"API stream error {error_type}: {message}"
    if error_type in _TRANSIENT_EVENT_ERRORS:
        return StreamTransientError(text)
    return StreamParseError(text)


class _BlockState:
    """A content block being streamed: its pieces, joined once at content_block_stop."""

    __slots__ = ("block_type", "data", "id", "input", "name", "parts", "raw", "signature")

    def __init__(self, start: dict[str, Any]) -> None:
        self.block_type: str = start["type"]
        self.raw = start
        self.parts: list[str] = []
        self.signature: list[str] = []
        self.id: str = ""
        self.name: str = ""
        self.input: Any = None
        self.data: str = ""
        if self.block_type == "text":
            if start.get("text"):
                self.parts.append(start["text"])
        elif self.block_type == "tool_use":
            self.id = start["id"]
            self.name = start["name"]
            self.input = start.get("input")
        elif self.block_type == "thinking":
            if start.get("thinking"):
                self.parts.append(start["thinking"])
            if start.get("signature"):
                self.signature.append(start["signature"])
        elif self.block_type == "redacted_thinking":
            self.data = start["data"]

    def build(self) -> tuple[ContentBlock, bool]:
        """The finished block, and whether its tool input was unparseable."""
        if self.block_type == "text":
            return TextBlock(text="".join(self.parts)), False
        if self.block_type == "thinking":
            return ThinkingBlock(
                thinking="".join(self.parts), signature="".join(self.signature)
            ), False
        if self.block_type == "redacted_thinking":
            return RedactedThinkingBlock(data=self.data), False
        if self.block_type != "tool_use":
            return self._server_block()
        raw = "".join(self.parts)
        value: Any
        if not raw.strip():
            # No input_json_delta (or only empty ones): the start event's input, usually {}.
            value = self.input if isinstance(self.input, dict) else {}
        else:
            try:
                value = loads(raw)
            except ValueError:
                value = None
        bad = not isinstance(value, dict)
        return ToolUseBlock(id=self.id, name=self.name, input=None if bad else value), bad

    def _server_block(self) -> tuple[ContentBlock, bool]:
        """Any other block, verbatim; streamed input (server_tool_use) joined into ``input``."""
        block = dict(self.raw)
        if self.parts:
            try:
                block["input"] = loads("".join(self.parts))
            except ValueError:
                return ServerBlock.model_validate(block), True
        return ServerBlock.model_validate(block), False


# The events whose data must be JSON; any other event name is ignored like ``ping`` (the API
# may add event types at any time).
_PROTOCOL_EVENTS = frozenset(
    {
        "message_start",
        "message_delta",
        "message_stop",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "error",
    }
)


class MessageAccumulator:
    """Builds one :class:`AssistantResponse` from decoded ``(event, data)`` pairs.

    ``on_text`` receives each text delta as it arrives. :meth:`feed` raises the classified
    error of an ``error`` event at once; :meth:`result` refuses a stream that did not reach
    ``message_stop`` (:class:`StreamTransientError`), never returning a partial answer.

    Tool input that is not a JSON object becomes ``None`` when the stop reason is max_tokens
    (the model was cut off mid-call) and is a :class:`StreamParseError` otherwise.
    """

    def __init__(self, *, on_text: Callable[[str], None] | None = None) -> None:
        self._on_text = on_text
        self._open: dict[int, _BlockState] = {}
        self._blocks: dict[int, ContentBlock] = {}
        self._bad_inputs: list[str] = []
        self._usage: dict[str, int] = {}
        self._id = ""
        self._model = ""
        self._stop_reason: StopReason | None = None
        self._started = False
        self.done = False

    def feed(self, event: str, data: str) -> bool:
        """Take one event; return ``True`` once ``message_stop`` has arrived."""
        if self.done:
            return True
        try:
            payload = loads(data)  # lone surrogates replaced: they crash every writer
        except ValueError as exc:
            if event not in _PROTOCOL_EVENTS:
                return self.done  # an unknown event is ignored, whatever its data
            # Damaged on the way like garbage bytes or a cut: the same request may well succeed.
            raise StreamTransientError(
                f"API stream sent unparseable JSON in a {event!r} event: {data[:80]!r}"
            ) from exc
        if not isinstance(payload, dict):
            raise StreamTransientError(
                f"API stream sent a non-object {event!r} event: {data[:80]!r}"
            )
        kind = payload.get("type", event)
        try:
            self._dispatch(kind, payload)
        except (KeyError, TypeError, AttributeError, ValueError) as exc:
            raise StreamTransientError(
                f"API stream sent a malformed {kind!r} event ({type(exc).__name__}: {exc}): "
                f"{data[:80]!r}"
            ) from exc
        return self.done

    def _dispatch(self, kind: str, p: dict[str, Any]) -> None:
        if kind == "content_block_delta":
            index = p["index"]
            try:
                state = self._open[index]
            except KeyError:
                raise StreamParseError(
                    f"API stream sent a delta for block {index} before its content_block_start"
                ) from None
            delta = p["delta"]
            delta_type = delta["type"]
            if delta_type == "text_delta" and state.block_type == "text":
                text = delta["text"]
                state.parts.append(text)
                if self._on_text is not None and text:
                    self._on_text(text)
            elif delta_type == "input_json_delta":
                state.parts.append(delta["partial_json"])
            elif delta_type == "thinking_delta":
                state.parts.append(delta["thinking"])
            elif delta_type == "signature_delta":
                state.signature.append(delta["signature"])
            # citations_delta and unknown delta types are ignored.
        elif kind == "content_block_start":
            start = p["content_block"]
            index = p["index"]
            state = _BlockState(start)
            self._open[index] = state
            if state.parts and state.block_type == "text" and self._on_text is not None:
                self._on_text(state.parts[0])
        elif kind == "content_block_stop":
            self._close_block(p["index"])
        elif kind == "message_start":
            message = p["message"]
            self._started = True
            self._id = message.get("id") or ""
            self._model = message.get("model") or ""
            self._take_usage(message.get("usage"))
        elif kind == "message_delta":
            reason = p["delta"].get("stop_reason")
            if reason is not None:
                if reason not in _STOP_REASONS:
                    raise StreamParseError(f"API stream sent an unknown stop_reason {reason!r}")
                self._stop_reason = _STOP_REASONS[reason]
            self._take_usage(p.get("usage"))
        elif kind == "message_stop":
            self.done = True
        elif kind == "error":
            raise stream_error_from_event(p)
        # ping and unknown event types are ignored.

    def _take_usage(self, usage: Any) -> None:
        # message_delta usage is cumulative: the last value of each field wins.
        if isinstance(usage, dict):
            for field in _USAGE_FIELDS:
                value = usage.get(field)
                if isinstance(value, int) and value >= 0:  # a count; anything else is damage
                    self._usage[field] = value

    def _close_block(self, index: int) -> None:
        state = self._open.pop(index, None)
        if state is None:
            return
        block, bad = state.build()
        if bad:
            self._bad_inputs.append(f"{state.name}: {''.join(state.parts)[:80]!r}")
        self._blocks[index] = block

    def result(self) -> AssistantResponse:
        """The complete response; raises when the stream did not finish properly."""
        if not self.done:
            where = "before message_start" if not self._started else "before message_stop"
            raise StreamTransientError(f"API stream ended {where} (response cut short)")
        if self._stop_reason is None:
            raise StreamTransientError("API stream reached message_stop without a stop_reason")
        for index in list(self._open):  # a block never stopped: keep what arrived
            self._close_block(index)
        if self._bad_inputs and self._stop_reason is not StopReason.MAX_TOKENS:
            raise StreamParseError(
                "API stream sent tool input that is not a JSON object: " + self._bad_inputs[0]
            )
        return AssistantResponse(
            id=self._id,
            model=self._model,
            content=[self._blocks[i] for i in sorted(self._blocks)],
            stop_reason=self._stop_reason,
            usage=Usage(**self._usage),
        )


class StreamParser:
    """An :class:`SSEDecoder` feeding a :class:`MessageAccumulator`: chunks in, a response out."""

    __slots__ = ("_accumulator", "_decoder")

    def __init__(self, *, on_text: Callable[[str], None] | None = None) -> None:
        self._decoder = SSEDecoder()
        self._accumulator = MessageAccumulator(on_text=on_text)

    def feed(self, chunk: bytes) -> bool:
        """Take one chunk; return ``True`` once ``message_stop`` has arrived."""
        accumulator = self._accumulator
        return any(accumulator.feed(event, data) for event, data in self._decoder.feed(chunk))

    def result(self) -> AssistantResponse:
        """The complete response, once ``feed`` said so or the stream has ended.

        Before ``message_stop``, the decoder's last bytes are decoded first (see
        :meth:`SSEDecoder.close`); like :meth:`MessageAccumulator.result`, raises when the
        stream did not finish properly.
        """
        if not self._accumulator.done:
            for event, data in self._decoder.close():
                if self._accumulator.feed(event, data):
                    break
        return self._accumulator.result()


def parse_sse_bytes(
    chunks: Iterable[bytes], *, on_text: Callable[[str], None] | None = None
) -> AssistantResponse:
    """Parse a whole stream given as byte chunks (for tests, benchmarks and recorded streams)."""
    parser = StreamParser(on_text=on_text)
    for chunk in chunks:
        if parser.feed(chunk):
            break
    return parser.result()
