"""The SSE decoder and message accumulator, fed byte streams split at awkward places."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forgeflare.agent import (
    Message,
    MessageAccumulator,
    RedactedThinkingBlock,
    ServerBlock,
    SSEDecoder,
    StopReason,
    StreamParseError,
    StreamTransientError,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
    parse_sse_bytes,
)


def ev(kind: str, **payload: Any) -> bytes:
    body = json.dumps({"type": kind, **payload}, ensure_ascii=False)
    return f"event: {kind}\ndata: {body}\n\n".encode()


def start(usage: dict[str, int] | None = None) -> bytes:
    return ev(
        "message_start",
        message={
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-test",
            "content": [],
            "usage": usage or {"input_tokens": 10, "output_tokens": 1},
        },
    )


def text_block(index: int, *pieces: str) -> bytes:
    out = [ev("content_block_start", index=index, content_block={"type": "text", "text": ""})]
    out += [
        ev("content_block_delta", index=index, delta={"type": "text_delta", "text": p})
        for p in pieces
    ]
    out.append(ev("content_block_stop", index=index))
    return b"".join(out)


def tool_block(index: int, *fragments: str, name: str = "Bash", tid: str = "toolu_1") -> bytes:
    out = [
        ev(
            "content_block_start",
            index=index,
            content_block={"type": "tool_use", "id": tid, "name": name, "input": {}},
        )
    ]
    out += [
        ev(
            "content_block_delta",
            index=index,
            delta={"type": "input_json_delta", "partial_json": f},
        )
        for f in fragments
    ]
    out.append(ev("content_block_stop", index=index))
    return b"".join(out)


def end(reason: str = "end_turn", output_tokens: int = 5) -> bytes:
    return ev(
        "message_delta",
        delta={"stop_reason": reason, "stop_sequence": None},
        usage={"output_tokens": output_tokens},
    ) + ev("message_stop")


TEXT_AND_TOOL = (
    start({"input_tokens": 1200, "cache_creation_input_tokens": 7, "cache_read_input_tokens": 9})
    + ev("ping")
    + text_block(0, "Running ", "the tests — ", "ünïcode 🚀.")
    + tool_block(1, "", '{"comm', 'and": "pytest', ' -q"}')
    + end("tool_use", 40)
)


def split_at(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts})
    pieces, last = [], 0
    for p in points:
        pieces.append(data[last:p])
        last = p
    pieces.append(data[last:])
    return pieces


def check_text_and_tool(chunks: list[bytes]) -> None:
    seen: list[str] = []
    resp = parse_sse_bytes(chunks, on_text=seen.append)
    assert resp.content == [
        TextBlock(text="Running the tests — ünïcode 🚀."),
        ToolUseBlock(id="toolu_1", name="Bash", input={"command": "pytest -q"}),
    ]
    assert resp.stop_reason is StopReason.TOOL_USE
    assert resp.id == "msg_1"
    assert resp.model == "claude-test"
    assert resp.usage.input_tokens == 1200
    assert resp.usage.cache_creation_input_tokens == 7
    assert resp.usage.cache_read_input_tokens == 9
    assert resp.usage.output_tokens == 40
    assert "".join(seen) == "Running the tests — ünïcode 🚀."


def test_whole_stream_in_one_chunk() -> None:
    check_text_and_tool([TEXT_AND_TOOL])


def test_every_byte_separately() -> None:
    # Splits every line and every multi-byte UTF-8 character.
    check_text_and_tool([TEXT_AND_TOOL[i : i + 1] for i in range(len(TEXT_AND_TOOL))])


def test_split_inside_a_utf8_character() -> None:
    at = TEXT_AND_TOOL.index("🚀".encode()) + 2
    check_text_and_tool([TEXT_AND_TOOL[:at], TEXT_AND_TOOL[at:]])


def test_crlf_line_ends_split_between_cr_and_lf() -> None:
    data = TEXT_AND_TOOL.replace(b"\n", b"\r\n")
    at = data.index(b"\r\n") + 1
    check_text_and_tool([data[:at], data[at:]])
    check_text_and_tool([data[i : i + 3] for i in range(0, len(data), 3)])


@given(st.lists(st.integers(min_value=0, max_value=len(TEXT_AND_TOOL)), max_size=12))
def test_any_split_gives_the_same_message(cuts: list[int]) -> None:
    check_text_and_tool(split_at(TEXT_AND_TOOL, cuts))


@given(st.lists(st.integers(min_value=0), max_size=8))
def test_decoder_events_do_not_depend_on_chunking(cuts: list[int]) -> None:
    data = b": comment\nid: 3\nretry: 10\nevent: a\ndata: x\ndata:y\n\ndata: only\n\nevent: b\n\n"
    decoder = SSEDecoder()
    events = [e for chunk in split_at(data, cuts) for e in decoder.feed(chunk)]
    events += decoder.close()
    assert events == [("a", "x\ny"), ("message", "only")]


def test_decoder_drops_an_unterminated_event_at_eof() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"event: a\ndata: 1\n\nevent: b\ndata: 2") == [("a", "1")]
    assert decoder.close() == []


def test_decoder_lone_cr_line_ends_at_close() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"event: a\rdata: 1\r\r") == []
    assert decoder.close() == [("a", "1")]


def test_thinking_kept_with_signature_and_redacted_thinking() -> None:
    stream = (
        start()
        + ev(
            "content_block_start",
            index=0,
            content_block={"type": "thinking", "thinking": "", "signature": ""},
        )
        + ev("content_block_delta", index=0, delta={"type": "thinking_delta", "thinking": "Let "})
        + ev("content_block_delta", index=0, delta={"type": "thinking_delta", "thinking": "me see"})
        + ev("content_block_delta", index=0, delta={"type": "signature_delta", "signature": "c2ln"})
        + ev("content_block_delta", index=0, delta={"type": "signature_delta", "signature": "Zw=="})
        + ev("content_block_stop", index=0)
        + ev(
            "content_block_start",
            index=1,
            content_block={"type": "redacted_thinking", "data": "ENCRYPTED"},
        )
        + ev("content_block_stop", index=1)
        + text_block(2, "Answer.")
        + end()
    )
    seen: list[str] = []
    resp = parse_sse_bytes([stream], on_text=seen.append)
    assert resp.content == [
        ThinkingBlock(thinking="Let me see", signature="c2lnZw=="),
        RedactedThinkingBlock(data="ENCRYPTED"),
        TextBlock(text="Answer."),
    ]
    assert seen == ["Answer."]  # thinking is not shown as text


def test_tool_use_without_deltas_has_empty_input() -> None:
    resp = parse_sse_bytes([start() + tool_block(0) + end("tool_use")])
    assert resp.content == [ToolUseBlock(id="toolu_1", name="Bash", input={})]
    resp = parse_sse_bytes([start() + tool_block(0, "", "") + end("tool_use")])
    assert resp.content == [ToolUseBlock(id="toolu_1", name="Bash", input={})]


def test_partial_tool_json_at_max_tokens_is_none() -> None:
    stream = start() + text_block(0, "x") + tool_block(1, '{"command": "py') + end("max_tokens")
    resp = parse_sse_bytes([stream])
    assert resp.stop_reason is StopReason.MAX_TOKENS
    assert resp.content[1] == ToolUseBlock(id="toolu_1", name="Bash", input=None)


@pytest.mark.parametrize("fragment", ['{"command": "py', "[1, 2]", "nope"])
def test_bad_tool_json_without_max_tokens_is_permanent(fragment: str) -> None:
    with pytest.raises(StreamParseError, match="not a JSON object") as info:
        parse_sse_bytes([start() + tool_block(0, fragment) + end("tool_use")])
    assert not info.value.transient


@pytest.mark.parametrize("reason", [r.value for r in StopReason])
def test_every_stop_reason(reason: str) -> None:
    resp = parse_sse_bytes([start() + text_block(0, "a") + end(reason)])
    assert resp.stop_reason == StopReason(reason)


def test_unknown_stop_reason_is_permanent() -> None:
    with pytest.raises(StreamParseError, match="unknown stop_reason 'bogus'"):
        parse_sse_bytes([start() + text_block(0, "a") + end("bogus")])


def test_unknown_events_and_deltas_are_ignored_and_server_blocks_kept_verbatim() -> None:
    stream = (
        start()
        + ev("brand_new_event", foo=1)
        + b"event: future_event\ndata: not json at all\n\n"
        + ev(
            "content_block_start",
            index=0,
            content_block={"type": "server_tool_use", "id": "s", "name": "web", "input": {}},
        )
        + ev(
            "content_block_delta",
            index=0,
            delta={"type": "input_json_delta", "partial_json": '{"query": '},
        )
        + ev(
            "content_block_delta",
            index=0,
            delta={"type": "input_json_delta", "partial_json": '"x"}'},
        )
        + ev("content_block_stop", index=0)
        + ev("content_block_start", index=1, content_block={"type": "text", "text": ""})
        + ev("content_block_delta", index=1, delta={"type": "citations_delta", "citation": {}})
        + ev("content_block_delta", index=1, delta={"type": "future_delta", "x": 1})
        + ev("content_block_delta", index=1, delta={"type": "text_delta", "text": "kept"})
        + ev("content_block_stop", index=1)
        + ev("ping")
        + end()
    )
    content = parse_sse_bytes([stream]).content
    assert content[1] == TextBlock(text="kept")
    server = content[0]
    assert isinstance(server, ServerBlock)
    assert server.model_dump() == {
        "type": "server_tool_use",
        "id": "s",
        "name": "web",
        "input": {"query": "x"},
    }


def test_a_server_tool_result_block_round_trips_unchanged() -> None:
    result = {
        "type": "web_search_tool_result",
        "tool_use_id": "s",
        "content": [{"type": "web_search_result", "url": "u", "title": "t"}],
    }
    stream = (
        start()
        + ev("content_block_start", index=0, content_block=result)
        + ev("content_block_stop", index=0)
        + end("pause_turn")
    )
    response = parse_sse_bytes([stream])
    message = response.to_message().model_dump(mode="json")
    assert message["content"] == [result]
    assert Message.model_validate(message).content[0] == response.content[0]


def test_a_known_event_with_unparseable_data_is_an_error() -> None:
    with pytest.raises(StreamTransientError):
        parse_sse_bytes([start() + b"event: content_block_start\ndata: {oops\n\n" + end()])


def test_usage_output_tokens_take_the_last_cumulative_value() -> None:
    # A count that is not a whole number of tokens (None, negative) is damage: not taken.
    stream = (
        start({"input_tokens": 3, "output_tokens": 1})
        + text_block(0, "a")
        + ev("message_delta", delta={"stop_reason": None}, usage={"output_tokens": 10})
        + ev(
            "message_delta",
            delta={"stop_reason": "end_turn"},
            usage={"output_tokens": 25, "cache_read_input_tokens": None, "input_tokens": -7},
        )
        + ev("message_stop")
    )
    usage = parse_sse_bytes([stream]).usage
    assert (usage.input_tokens, usage.output_tokens, usage.cache_read_input_tokens) == (3, 25, 0)


def test_payload_type_wins_and_event_name_is_the_fallback() -> None:
    body = json.dumps({"index": 0, "delta": {"type": "text_delta", "text": "hi"}})
    stream = (
        start()
        + b"event: content_block_start\ndata: "
        + json.dumps({"index": 0, "content_block": {"type": "text", "text": ""}}).encode()
        + b"\n\n"
        + b"event: content_block_delta\ndata: "
        + body.encode()
        + b"\n\n"
        + ev("content_block_stop", index=0)
        + end()
    )
    assert parse_sse_bytes([stream]).content == [TextBlock(text="hi")]


@pytest.mark.parametrize(
    ("error_type", "transient"),
    [
        ("overloaded_error", True),
        ("api_error", True),
        ("rate_limit_error", True),
        ("timeout_error", True),
        ("invalid_request_error", False),
        ("authentication_error", False),
        ("something_new", False),
    ],
)
def test_error_event_is_classified(error_type: str, transient: bool) -> None:
    stream = (
        start()
        + text_block(0, "partial")
        + ev("error", error={"type": error_type, "message": "Boom happened"})
    )
    expected = StreamTransientError if transient else StreamParseError
    with pytest.raises(expected) as info:
        parse_sse_bytes([stream])
    assert str(info.value) == f"API stream error {error_type}: Boom happened"
    assert info.value.transient is transient


def test_error_event_message_is_one_line() -> None:
    stream = start() + ev("error", error={"type": "api_error", "message": "line one\n  line two"})
    with pytest.raises(StreamTransientError) as info:
        parse_sse_bytes([stream])
    assert str(info.value) == "API stream error api_error: line one line two"


def test_error_event_without_error_object_is_permanent() -> None:
    with pytest.raises(StreamParseError, match="without an error object"):
        parse_sse_bytes([start() + ev("error", message="?")])


@pytest.mark.parametrize(
    "stream",
    [
        b"",
        b": just a comment\n\n",
        start(),
        start() + text_block(0, "half an answer"),
        start() + text_block(0, "a") + ev("message_delta", delta={"stop_reason": "end_turn"}),
        # the final event is not terminated by a blank line: dropped, as the standard says
        start() + text_block(0, "a") + end()[:-1],
    ],
)
def test_eof_before_message_stop_is_transient(stream: bytes) -> None:
    with pytest.raises(StreamTransientError, match="ended before message_") as info:
        parse_sse_bytes([stream])
    assert info.value.transient


def test_message_stop_without_stop_reason_is_transient() -> None:
    with pytest.raises(StreamTransientError, match="without a stop_reason"):
        parse_sse_bytes([start() + text_block(0, "a") + ev("message_stop")])


@pytest.mark.parametrize(
    ("raw", "match"),
    [
        (b"event: content_block_delta\ndata: {not json\n\n", "unparseable JSON"),
        (b"data: [1, 2]\n\n", "non-object"),
        (ev("content_block_start", index=0), "malformed 'content_block_start'"),
        (ev("message_delta", delta=None), "malformed 'message_delta'"),
    ],
)
def test_a_malformed_event_is_transient_like_garbage_bytes(raw: bytes, match: str) -> None:
    with pytest.raises(StreamTransientError, match=match) as info:
        parse_sse_bytes([start() + raw + end()])
    assert info.value.transient


def test_a_delta_before_its_block_is_permanent() -> None:
    raw = ev("content_block_delta", index=0, delta={"type": "text_delta", "text": "x"})
    with pytest.raises(StreamParseError, match="before") as info:
        parse_sse_bytes([start() + raw + end()])
    assert not info.value.transient


def test_events_after_message_stop_are_ignored() -> None:
    acc = MessageAccumulator()
    decoder = SSEDecoder()
    for event, data in decoder.feed(start() + text_block(0, "a") + end()):
        acc.feed(event, data)
    assert acc.done
    assert acc.feed("error", '{"type": "error", "error": {"type": "api_error"}}')
    assert acc.result().content == [TextBlock(text="a")]


def test_block_never_stopped_is_kept_at_message_stop() -> None:
    stream = (
        start()
        + ev("content_block_start", index=0, content_block={"type": "text", "text": "pre"})
        + ev("content_block_delta", index=0, delta={"type": "text_delta", "text": "fix"})
        + end()
    )
    seen: list[str] = []
    assert parse_sse_bytes([stream], on_text=seen.append).content == [TextBlock(text="prefix")]
    assert seen == ["pre", "fix"]


def test_large_message_is_assembled_exactly() -> None:
    pieces = [f"chunk {i} ✓ " for i in range(20_000)]
    stream = start() + text_block(0, *pieces) + end()
    chunks = [stream[i : i + 4093] for i in range(0, len(stream), 4093)]
    assert parse_sse_bytes(chunks).content == [TextBlock(text="".join(pieces))]


def test_a_lone_surrogate_in_a_text_delta_becomes_a_replacement_character() -> None:
    # JSON may spell half a UTF-16 pair; passed on, it crashed the display and every write.
    seen: list[str] = []
    # json.dumps with ensure_ascii spells the surrogate as an escape, as an API could.
    delta = {"type": "text_delta", "text": "a \ud800 b"}
    body = json.dumps({"type": "content_block_delta", "index": 0, "delta": delta})
    spelled = f"event: content_block_delta\ndata: {body}\n\n".encode()
    stop = b"event: content_block_stop"
    stream = start() + text_block(0).replace(stop, spelled + stop) + end()
    resp = parse_sse_bytes([stream], on_text=seen.append)
    assert resp.content == [TextBlock(text="a \ufffd b")]
    assert "".join(seen).encode("utf-8") == "a \ufffd b".encode()
