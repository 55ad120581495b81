"""Multi-conversation scripts: each request is matched by its first user message."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forgeflare.mockapi import (
    JSONReply,
    MockRequest,
    MockScriptError,
    choose_conversation,
    decide,
    first_user_text,
    parse_script,
)


def text(t: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": t}]}


SCRIPT = parse_script(
    {
        "conversations": [
            {"match": "parser", "responses": [text("p0"), text("p1")]},
            {"match": "lexer", "responses": [text("l0")]},
            {"match": "er", "responses": [text("fallback")]},
        ]
    }
)
TOOLS = [{"name": "Bash", "input_schema": {"type": "object"}}]


def body(first: Any, *, tools: Any = TOOLS, system: str = "You are an agent.") -> bytes:
    messages = [
        {"role": "user", "content": first},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": "a later message about the lexer"},
    ]
    data = {"model": "m", "max_tokens": 10, "messages": messages, "system": system}
    if tools is not None:
        data["tools"] = tools
    return json.dumps(data).encode()


def call(data: bytes, used: dict[int, int] | None = None, script: Any = SCRIPT) -> Any:
    request = MockRequest("POST", "/v1/messages", {}, data)
    return decide(script, request, used=0, request_number=0, conversation_used=used or {})


def reply_text(decision: Any) -> str:
    assert isinstance(decision.reply, JSONReply)
    return str(decision.reply.body["content"][0]["text"])


@pytest.mark.parametrize(
    ("first", "conversation", "expected"),
    [
        ("Implement the parser.", 0, "p0"),
        ([{"type": "text", "text": "Write the lexer"}], 1, "l0"),
        ([{"type": "image"}, {"type": "text", "text": "parser, then lexer"}], 0, "p0"),
        ("the other task", 2, "fallback"),  # "er" is in "other": the first match wins
    ],
)
def test_the_first_user_message_chooses(first: Any, conversation: int, expected: str) -> None:
    decision = call(body(first))
    assert decision.consumed
    assert decision.conversation == conversation
    assert decision.response_index == 0
    assert reply_text(decision) == expected


def test_each_conversation_is_consumed_in_its_own_order() -> None:
    assert reply_text(call(body("parser"), {0: 1, 1: 1})) == "p1"
    assert call(body("parser"), {0: 1}).response_index == 1


def test_an_exhausted_conversation_says_which() -> None:
    decision = call(body("lexer"), {1: 1})
    assert isinstance(decision.reply, JSONReply)
    assert decision.reply.status == 500
    assert "conversation 'lexer' exhausted after 1 responses" in str(decision.reply.body)
    assert ("x-should-retry", "false") in decision.reply.headers
    assert decision.conversation == 1


def test_an_unmatched_request_gets_a_500_naming_it() -> None:
    decision = call(body("Nothing to do"))
    assert not decision.consumed
    assert decision.conversation is None
    assert isinstance(decision.reply, JSONReply)
    assert decision.reply.status == 500
    message = decision.reply.body["error"]["message"]
    assert "'Nothing to do'" in message
    assert "'parser', 'lexer', 'er'" in message
    assert ("x-should-retry", "false") in decision.reply.headers


def test_side_requests_come_before_matching() -> None:
    side = body("Nothing matches", tools=None, system="Write a title for this conversation")
    decision = call(side)
    assert not decision.consumed
    assert decision.reply.status == 200


def test_a_single_list_script_ignores_conversation_counts() -> None:
    script = parse_script({"responses": [text("a"), text("b")]})
    request = MockRequest("POST", "/v1/messages", {}, body("parser"))
    decision = decide(script, request, used=1, request_number=1, conversation_used={0: 5})
    assert reply_text(decision) == "b"
    assert decision.conversation is None


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        ({"responses": [text("a")], "conversations": [{"match": "x"}]}, "not both"),
        ({"conversations": [{"match": "", "responses": []}]}, "conversations[0].match"),
        ({"conversations": [{"responses": []}]}, "conversations[0].match: missing"),
        ({"conversations": [{"match": "x", "respones": []}]}, "conversations[0].respones"),
    ],
)
def test_bad_conversation_scripts_are_one_line(data: dict[str, Any], problem: str) -> None:
    with pytest.raises(MockScriptError) as info:
        parse_script(data)
    assert problem in str(info.value)
    assert "\n" not in str(info.value)


@given(st.text(max_size=30), st.text(min_size=1, max_size=5))
def test_choice_is_substring_of_the_first_user_message(first: str, needle: str) -> None:
    script = parse_script({"conversations": [{"match": needle, "responses": []}]})
    data = {"messages": [{"role": "user", "content": first}]}
    assert first_user_text(data) == first
    assert (choose_conversation(script, data) == 0) == (needle in first)
