"""The shared message models: blocks read by their type (unknown kinds kept verbatim), the
request body with its prompt-cache breakpoints, a response as a conversation message."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forgeflare.agent import (
    AssistantResponse,
    Message,
    MessagesRequest,
    RedactedThinkingBlock,
    ServerBlock,
    StopReason,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from forgeflare.agent._messages import add_cache_breakpoints

EPHEMERAL = {"type": "ephemeral"}


@pytest.mark.parametrize(
    ("raw", "kind"),
    [
        ({"type": "text", "text": "hi", "citations": None}, TextBlock),
        ({"type": "tool_use", "id": "t", "name": "Bash", "input": {"command": "ls"}}, ToolUseBlock),
        ({"type": "tool_use", "id": "t", "name": "Bash", "input": None}, ToolUseBlock),
        ({"type": "thinking", "thinking": "hmm", "signature": "s"}, ThinkingBlock),
        ({"type": "redacted_thinking", "data": "xx"}, RedactedThinkingBlock),
        ({"type": "tool_result", "tool_use_id": "t", "content": "ok"}, ToolResultBlock),
        ({"type": "server_tool_use", "id": "s", "name": "web_search", "input": {}}, ServerBlock),
        ({"type": "web_search_tool_result", "content": [1, 2]}, ServerBlock),
    ],
)
def test_each_block_is_read_by_its_type(raw: dict[str, Any], kind: type) -> None:
    (block,) = Message.model_validate({"role": "assistant", "content": [raw]}).content
    assert type(block) is kind


def test_a_server_block_goes_back_exactly_as_it_came() -> None:
    raw = {"type": "web_search_tool_result", "tool_use_id": "s", "content": [{"url": "u"}]}
    message = Message.model_validate({"role": "assistant", "content": [raw]})
    assert message.model_dump(mode="json")["content"] == [raw]


def test_a_typed_block_drops_fields_it_does_not_know() -> None:
    raw = {"type": "text", "text": "hi", "citations": [{"x": 1}]}
    message = Message.model_validate({"role": "user", "content": [raw]})
    assert message.model_dump(mode="json")["content"] == [{"type": "text", "text": "hi"}]


def _body(messages: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"model": "m", "max_tokens": 1, "messages": messages, **extra}


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("hi", [{"type": "text", "text": "hi", "cache_control": EPHEMERAL}]),
        ("", ""),
        ([], []),
        (
            [{"type": "text", "text": "a"}, {"type": "thinking", "thinking": "t"}],
            [
                {"type": "text", "text": "a", "cache_control": EPHEMERAL},
                {"type": "thinking", "thinking": "t"},
            ],
        ),
        (
            [{"type": "redacted_thinking", "data": "x"}],
            [{"type": "redacted_thinking", "data": "x"}],
        ),
    ],
)
def test_the_last_message_s_last_cacheable_block_is_marked(content: Any, expected: Any) -> None:
    body = _body([{"role": "user", "content": "earlier"}, {"role": "user", "content": content}])
    add_cache_breakpoints(body)
    assert body["messages"][-1]["content"] == expected
    assert body["messages"][0]["content"] == "earlier"  # only the tail is a breakpoint


def test_the_last_tool_and_the_system_prompt_are_marked() -> None:
    body = _body([], tools=[{"name": "A"}, {"name": "B"}], system="Be brief.")
    add_cache_breakpoints(body)
    assert body["tools"] == [{"name": "A"}, {"name": "B", "cache_control": EPHEMERAL}]
    assert body["system"] == [{"type": "text", "text": "Be brief.", "cache_control": EPHEMERAL}]
    empty = _body([], tools=[], system="")
    add_cache_breakpoints(empty)
    assert empty == _body([], tools=[], system="")


texts = st.text(max_size=5)


@given(st.lists(st.lists(texts, max_size=3), max_size=4), texts)
def test_at_most_three_breakpoints_whatever_the_request(
    turns: list[list[str]], system: str
) -> None:
    body = _body(
        [
            {"role": "user", "content": [{"type": "text", "text": t} for t in turn]}
            for turn in turns
        ],
        tools=[{"name": "A"}],
        system=system,
    )
    before = copy.deepcopy(body)
    add_cache_breakpoints(body)
    marks = str(body).count("cache_control")
    assert marks <= 3
    assert body["messages"][:-1] == before["messages"][:-1]


def test_the_body_has_no_empty_tools_and_says_whether_it_streams() -> None:
    request = MessagesRequest(model="m", max_tokens=5, messages=[Message.user_text("hi")])
    body = request.to_body(stream=True)
    assert "tools" not in body
    assert "cache" not in body
    assert "tool_choice" not in body
    assert body["stream"] is True
    assert request.model_copy(update={"cache": False}).to_body(stream=False)["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "hi"}]}
    ]


def test_a_response_becomes_the_assistant_s_message() -> None:
    response = AssistantResponse(content=[TextBlock(text="done")], stop_reason=StopReason.END_TURN)
    message = response.to_message()
    assert message.role == "assistant"
    assert message.content == response.content
    assert message.content is not response.content  # appending to one leaves the other
    assert Message.user_text("go").content == [TextBlock(text="go")]
