"""The pure renderer: stream events and JSON messages of scripted responses."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forgeflare.mockapi import (
    count_tokens,
    encode_sse,
    make_id,
    render_events,
    render_message,
)

MODEL = "claude-test"


def accumulate(events: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """An independent accumulator of a complete stream into a message (like a client does)."""
    names = [name for name, _ in events]
    assert names[0] == "message_start"
    assert names[-1] == "message_stop"
    assert names.count("ping") == 1
    message: dict[str, Any] = dict(events[0][1]["message"])
    message["content"] = []
    json_bufs: dict[int, str] = {}
    open_blocks: set[int] = set()
    for name, data in events[1:-1]:
        assert data["type"] == name
        if name == "content_block_start":
            assert data["index"] == len(message["content"])
            open_blocks.add(data["index"])
            message["content"].append(dict(data["content_block"]))
        elif name == "content_block_delta":
            assert data["index"] in open_blocks
            block = message["content"][data["index"]]
            delta = data["delta"]
            if delta["type"] == "text_delta":
                block["text"] += delta["text"]
            elif delta["type"] == "input_json_delta":
                json_bufs[data["index"]] = json_bufs.get(data["index"], "") + delta["partial_json"]
            elif delta["type"] == "thinking_delta":
                block["thinking"] += delta["thinking"]
            elif delta["type"] == "signature_delta":
                block["signature"] = delta["signature"]
            else:
                raise AssertionError(delta)
        elif name == "content_block_stop":
            open_blocks.remove(data["index"])
            if data["index"] in json_bufs:
                block = message["content"][data["index"]]
                block["input"] = json.loads(json_bufs[data["index"]] or "{}")
        elif name == "message_delta":
            assert not open_blocks
            message.update(data["delta"])
            message["usage"] = dict(message["usage"], **data["usage"])
        else:
            assert name == "ping"
    return message


def parse_sse(data: bytes) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for frame in data.decode().split("\n\n"):
        if not frame:
            continue
        event_line, data_line = frame.split("\n")
        assert event_line.startswith("event: ")
        assert data_line.startswith("data: ")
        out.append((event_line[7:], json.loads(data_line[6:])))
    return out


blocks = st.one_of(
    st.builds(lambda t: {"type": "text", "text": t}, st.text()),
    st.builds(
        lambda n, i: {"type": "tool_use", "name": n, "input": i},
        st.text(min_size=1, max_size=10),
        st.dictionaries(st.text(max_size=5), st.one_of(st.integers(), st.text(), st.none())),
    ),
    st.builds(
        lambda t, s: {"type": "thinking", "thinking": t, "signature": s},
        st.text(),
        st.one_of(st.none(), st.text(min_size=1)),
    ),
    st.builds(lambda d: {"type": "redacted_thinking", "data": d}, st.text(min_size=1)),
)
responses = st.fixed_dictionaries(
    {"content": st.lists(blocks, max_size=5)},
    optional={
        "stop_reason": st.sampled_from(["end_turn", "tool_use", "max_tokens", "stop_sequence"]),
        "usage": st.fixed_dictionaries(
            {},
            optional={
                "input_tokens": st.integers(0, 10**6),
                "output_tokens": st.integers(0, 10**6),
                "cache_read_input_tokens": st.integers(0, 10**6),
            },
        ),
        "chunk_chars": st.integers(1, 40),
    },
)


@settings(max_examples=60, deadline=None)
@given(responses, st.integers(0, 1000))
def test_stream_accumulates_to_the_json_message(spec: dict[str, Any], index: int) -> None:
    events = render_events(spec, model=MODEL, index=index, default_input_tokens=77)
    assert accumulate(events) == render_message(
        spec, model=MODEL, index=index, default_input_tokens=77
    )


@settings(max_examples=40, deadline=None)
@given(responses)
def test_encoded_bytes_parse_back_to_the_events(spec: dict[str, Any]) -> None:
    events = render_events(spec, model=MODEL)
    assert parse_sse(encode_sse(events)) == events


@settings(max_examples=40, deadline=None)
@given(responses, st.integers(0, 60))
def test_truncation_keeps_a_prefix_without_message_stop(spec: dict[str, Any], n: int) -> None:
    full = render_events(spec, model=MODEL)
    cut = render_events({**spec, "truncate_after_events": n}, model=MODEL)
    assert cut == full[:n]
    if n < len(full):
        assert ("message_stop", {"type": "message_stop"}) not in cut


@settings(max_examples=40, deadline=None)
@given(responses, st.integers(0, 60))
def test_stream_error_follows_exactly_n_events(spec: dict[str, Any], n: int) -> None:
    full = render_events(spec, model=MODEL)
    events = render_events(
        {**spec, "stream_error": {"type": "api_error", "message": "boom", "after_events": n}},
        model=MODEL,
    )
    assert events[:-1] == full[:n]
    assert events[-1] == (
        "error",
        {"type": "error", "error": {"type": "api_error", "message": "boom"}},
    )


def test_text_tool_thinking_stream_is_shaped_like_the_real_api() -> None:
    spec = {
        "content": [
            {"type": "thinking", "thinking": "hmm", "signature": "sig"},
            {"type": "text", "text": "Running."},
            {"type": "tool_use", "name": "Bash", "input": {"command": "ls"}},
        ],
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 12, "output_tokens": 34},
    }
    events = render_events(spec, model=MODEL, index=3)
    names = [n for n, _ in events]
    assert names[:3] == ["message_start", "content_block_start", "ping"]
    start = events[0][1]["message"]
    assert start["id"] == make_id("msg", 3)
    assert start["id"].startswith("msg_01")
    assert start["model"] == MODEL
    assert start["content"] == []
    assert start["stop_reason"] is None
    assert start["usage"]["input_tokens"] == 12
    deltas = [d["delta"] for n, d in events if n == "content_block_delta"]
    assert deltas[0] == {"type": "thinking_delta", "thinking": "hmm"}
    assert deltas[1] == {"type": "signature_delta", "signature": "sig"}
    tool_start = [d for n, d in events if n == "content_block_start"][2]["content_block"]
    assert tool_start["input"] == {}
    assert tool_start["id"].startswith("toolu_")
    json_deltas = [d for d in deltas if d["type"] == "input_json_delta"]
    assert json_deltas[0]["partial_json"] == ""
    assert json.loads("".join(d["partial_json"] for d in json_deltas)) == {"command": "ls"}
    assert events[-2] == (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use", "stop_sequence": None},
            "usage": {"output_tokens": 34},
        },
    )


def test_empty_content_still_pings() -> None:
    names = [n for n, _ in render_events({}, model=MODEL)]
    assert names == ["message_start", "ping", "message_delta", "message_stop"]


def test_ids_are_deterministic_and_distinct() -> None:
    assert make_id("msg", 1) == make_id("msg", 1)
    ids = {make_id("toolu", i, j) for i in range(50) for j in range(5)}
    assert len(ids) == 250
    assert all(len(i) == len("toolu_01") + 22 for i in ids)


def test_given_tool_id_is_kept() -> None:
    msg = render_message(
        {"content": [{"type": "tool_use", "id": "toolu_mine", "name": "Read", "input": {}}]},
        model=MODEL,
    )
    assert msg["content"][0]["id"] == "toolu_mine"


def test_omitted_usage_is_estimated() -> None:
    msg = render_message(
        {"content": [{"type": "text", "text": "x" * 40}]}, model=MODEL, default_input_tokens=9
    )
    assert msg["usage"] == {
        "input_tokens": 9,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": 10,
    }


def test_model_override() -> None:
    assert render_message({"model": "other"}, model=MODEL)["model"] == "other"


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ({"messages": []}, 1),
        ({"messages": [{"role": "user", "content": "x" * 400}]}, 103),
        (
            {
                "system": "s" * 40,
                "messages": [{"role": "user", "content": [{"type": "text", "text": "y" * 8}]}],
            },
            15,
        ),
    ],
)
def test_count_tokens(body: dict[str, Any], expected: int) -> None:
    assert count_tokens(body) == expected


@given(st.text(), st.text())
def test_count_tokens_grows_with_content(a: str, b: str) -> None:
    one = count_tokens({"messages": [{"role": "user", "content": a}]})
    two = count_tokens({"messages": [{"role": "user", "content": a + b}]})
    assert two >= one >= 1
