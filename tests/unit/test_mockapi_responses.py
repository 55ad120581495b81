"""The local Responses API the Codex tests run against: its events (pure) and its scripts
(over real HTTP on loopback)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest

from forgeflare.mockapi import ResponsesServer, responses_events, responses_sse


def test_a_text_step_streams_a_message_and_its_usage() -> None:
    usage = {"input": 1000, "output": 50, "cached": 400, "cache_write": 200}
    events = responses_events({"text": "hi", "usage": usage}, 3)
    assert [name for name, _ in events] == [
        "response.created",
        "response.output_item.added",
        "response.output_text.delta",
        "response.output_item.done",
        "response.completed",
    ]
    done = events[-1][1]["response"]
    assert done["id"] == "resp_3"
    assert done["usage"]["input_tokens_details"] == {
        "cached_tokens": 400,
        "cache_write_tokens": 200,
    }
    assert done["output"][0]["content"][0]["text"] == "hi"


@pytest.mark.parametrize(
    ("step", "kind", "name"),
    [
        ({"exec": "ls"}, "function_call", "exec_command"),
        ({"patch": "*** Begin Patch\n*** End Patch\n"}, "custom_tool_call", "apply_patch"),
    ],
)
def test_tool_steps(step: dict[str, str], kind: str, name: str) -> None:
    item = responses_events(step, 0)[-2][1]["item"]
    assert (item["type"], item["name"], item["call_id"]) == (kind, name, "call_0")
    if kind == "function_call":
        assert json.loads(item["arguments"]) == {"cmd": "ls"}


def test_a_cut_stream_never_completes() -> None:
    events = responses_events({"cut": True}, 0)
    assert [name for name, _ in events] == ["response.created"]
    assert responses_sse(events).startswith(b"event: response.created\ndata: {")


@pytest.fixture
def server() -> Iterator[ResponsesServer]:
    with ResponsesServer() as running:
        yield running


def post(url: str, thread: str) -> httpx.Response:
    return httpx.post(f"{url}/responses", json={"prompt_cache_key": thread}, timeout=10)


def test_scripts_answer_each_thread_from_its_own_run(server: ResponsesServer) -> None:
    limited = {"status": 429, "headers": {"retry-after": "0"}, "body": {"error": {"type": "x"}}}
    url = server.script("s", [{**limited, "times": 2}, {"text": "ok"}], [{"text": "second"}])
    first = [post(url, "t1") for _ in range(4)]
    assert [r.status_code for r in first] == [429, 429, 200, 200]  # the last step repeats
    assert first[0].headers["retry-after"] == "0"
    assert first[0].json() == {"error": {"type": "x"}}
    assert b'"text": "ok"' in first[2].content
    assert b'"text": "second"' in post(url, "t2").content  # a new thread: the next run
    assert b'"text": "second"' in post(url, "t3").content  # ... and the last run repeats
    assert len(server.requests("s")) == 6


def test_unknown_scenarios_and_empty_scripts(server: ResponsesServer) -> None:
    assert post(f"{server.url}/s/none/v1", "t").status_code == 404
    with pytest.raises(ValueError, match="a run without steps"):
        server.script("empty", [])
