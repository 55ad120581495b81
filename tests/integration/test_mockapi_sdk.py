"""Acceptance: the official ``anthropic`` SDK, a peer we did not write, accepts the mock."""

from __future__ import annotations

from types import ModuleType
from typing import TYPE_CHECKING, Any

import pytest

from mockapi_support import MockAPI

if TYPE_CHECKING:
    import anthropic

THINKING = "The user wants the tests run. " * 5
TEXT = "I will run the test suite now and then report what fails. " * 3
TOOL_INPUT = {"command": "pytest -q tests/unit", "timeout": 120, "env": {"CI": "1"}, "n": [1, 2]}

RICH: dict[str, Any] = {
    "content": [
        {"type": "thinking", "thinking": THINKING, "signature": "EqQBCgIYAhIM1gbcDa9GJwZA"},
        {"type": "text", "text": TEXT},
        {
            "type": "tool_use",
            "id": "toolu_01A09q90qw90lq917835lq9",
            "name": "Bash",
            "input": TOOL_INPUT,
        },
    ],
    "stop_reason": "tool_use",
    "usage": {
        "input_tokens": 2095,
        "output_tokens": 503,
        "cache_creation_input_tokens": 11,
        "cache_read_input_tokens": 22,
    },
}
MESSAGES: list[Any] = [{"role": "user", "content": "Run the tests."}]


@pytest.fixture(scope="module")
def sdk() -> ModuleType:
    """The ``anthropic`` package, imported when a test here runs: importing it at collection
    cost every pytest worker about a second of CPU."""
    import anthropic

    return anthropic


def check_final(final: anthropic.types.Message) -> None:
    assert final.id.startswith("msg_")
    assert final.model == "claude-test"
    assert final.role == "assistant"
    assert final.stop_reason == "tool_use"
    assert final.stop_sequence is None
    thinking, text, tool = final.content
    assert thinking.type == "thinking"
    assert (thinking.thinking, thinking.signature) == (THINKING, "EqQBCgIYAhIM1gbcDa9GJwZA")
    assert text.type == "text"
    assert text.text == TEXT
    assert tool.type == "tool_use"
    assert (tool.id, tool.name, tool.input) == ("toolu_01A09q90qw90lq917835lq9", "Bash", TOOL_INPUT)
    usage = final.usage
    assert (usage.input_tokens, usage.output_tokens) == (2095, 503)
    assert (usage.cache_creation_input_tokens, usage.cache_read_input_tokens) == (11, 22)


def test_sdk_stream_get_final_message(mock_api: MockAPI, sdk: ModuleType) -> None:
    server = mock_api(
        {
            "responses": [
                RICH,
                RICH,
                {"content": [{"type": "tool_use", "name": "Read", "input": {"path": "a.py"}}]},
            ]
        }
    )
    client = sdk.Anthropic(base_url=server.url, api_key="test", max_retries=0)
    with client.messages.stream(model="claude-test", max_tokens=1024, messages=MESSAGES) as stream:
        final = stream.get_final_message()
    check_final(final)

    # The SDK's event view agrees too: text deltas reassemble the text.
    with client.messages.stream(model="claude-test", max_tokens=1024, messages=MESSAGES) as stream:
        assert "".join(stream.text_stream) == TEXT

    # A generated tool id is well formed and the input arrives whole.
    with client.messages.stream(model="claude-test", max_tokens=1024, messages=MESSAGES) as stream:
        tool = stream.get_final_message().content[0]
    assert tool.type == "tool_use"
    assert tool.id.startswith("toolu_")
    assert tool.input == {"path": "a.py"}

    recorded = server.requests()
    assert len(recorded) == 3
    headers = recorded[0]["headers"]
    # SDK versions differ in how they send the key; the mock accepts both forms.
    # the key was sent; the record keeps it out of the file
    assert "[redacted]" in (headers.get("x-api-key"), headers.get("authorization"))
    assert recorded[0]["body"]["stream"] is True


async def test_async_sdk_stream_under_trio(mock_api: MockAPI, sdk: ModuleType) -> None:
    server = mock_api({"responses": [RICH]})
    client = sdk.AsyncAnthropic(base_url=server.url, api_key="test", max_retries=0)
    async with client.messages.stream(
        model="claude-test", max_tokens=1024, messages=MESSAGES
    ) as stream:
        final = await stream.get_final_message()
    check_final(final)
    await client.close()


def test_sdk_non_streaming_errors_and_count_tokens(mock_api: MockAPI, sdk: ModuleType) -> None:
    server = mock_api(
        {
            "responses": [
                RICH,
                {
                    "error": {
                        "status": 529,
                        "type": "overloaded_error",
                        "headers": {"retry-after": "0"},
                    }
                },
                {
                    "stream_error": {
                        "type": "overloaded_error",
                        "message": "busy",
                        "after_events": 3,
                    }
                },
                {"error": {"status": 400, "message": "messages: bad"}},
            ]
        }
    )
    client = sdk.Anthropic(base_url=server.url, api_key="test", max_retries=0)
    check_final(client.messages.create(model="claude-test", max_tokens=1024, messages=MESSAGES))

    with pytest.raises(sdk.APIStatusError) as info:
        client.messages.create(model="claude-test", max_tokens=1024, messages=MESSAGES)
    assert info.value.status_code == 529
    assert info.value.response.headers["retry-after"] == "0"
    assert isinstance(info.value.body, dict)
    assert info.value.body["error"]["type"] == "overloaded_error"

    with (
        pytest.raises(sdk.APIStatusError, match="busy"),
        client.messages.stream(model="claude-test", max_tokens=1024, messages=MESSAGES) as stream,
    ):
        stream.get_final_message()

    with pytest.raises(sdk.BadRequestError, match="messages: bad"):
        client.messages.create(model="claude-test", max_tokens=1024, messages=MESSAGES)

    count = client.messages.count_tokens(model="claude-test", messages=MESSAGES)
    assert count.input_tokens > 0
