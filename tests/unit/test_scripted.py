"""The scripted model: answers in order (or by a function of the request number), raises what
it is given, records a copy of each request, and says so when the script runs out."""

from __future__ import annotations

import pytest

from forgeflare.agent import (
    APIConnectionError,
    Message,
    MessagesRequest,
    ScriptedModel,
    StopReason,
    TextBlock,
    ToolUseBlock,
    text_response,
    tool_use_response,
)


def _request(*texts: str) -> MessagesRequest:
    return MessagesRequest(model="m", max_tokens=10, messages=[Message.user_text(t) for t in texts])


async def test_answers_in_order_and_records_each_request() -> None:
    model = ScriptedModel([text_response("one"), text_response("two")])
    request = _request("a")
    assert (await model.send(request)).content == [TextBlock(text="one")]
    request.messages.append(Message.user_text("b"))  # the loop keeps appending to its list
    assert (await model.send(request)).content == [TextBlock(text="two")]
    assert [len(r) for r in model.requests] == [1, 2]  # each as the model saw it then
    with pytest.raises(LookupError, match=r"no response 3 \(the script has 2\)"):
        await model.send(request)


async def test_a_scripted_exception_is_raised_in_its_turn() -> None:
    model = ScriptedModel([APIConnectionError("refused"), text_response("after")])
    with pytest.raises(APIConnectionError, match="refused"):
        await model.send(_request("a"))
    assert (await model.send(_request("a"))).content == [TextBlock(text="after")]
    assert len(model.requests) == 2  # the failed request was recorded too


async def test_a_function_answers_by_the_request_number() -> None:
    model = ScriptedModel(lambda n: text_response(f"answer {n}"))
    for n in range(3):
        assert (await model.send(_request("q"))).content == [TextBlock(text=f"answer {n}")]


def test_the_response_builders() -> None:
    text = text_response("hi", stop=StopReason.MAX_TOKENS)
    assert text.stop_reason is StopReason.MAX_TOKENS
    assert (text.usage.input_tokens, text.usage.output_tokens) == (10, 5)
    calls = tool_use_response(("Bash", {"command": "ls"}), ("Read", None))
    assert calls.stop_reason is StopReason.TOOL_USE
    assert calls.content == [
        ToolUseBlock(id="toolu_0", name="Bash", input={"command": "ls"}),
        ToolUseBlock(id="toolu_1", name="Read", input=None),
    ]
