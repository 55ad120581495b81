"""A scripted model: the in-memory fake of the Messages API client, for tests and examples.

As httpx ships ``MockTransport`` beside its transports, forgeflare ships this beside
:class:`~forgeflare.agent._client.MessagesClient`: it satisfies the turn loop's
:class:`~forgeflare.agent._turn.ModelClient` seam, so a test drives every branch of the loop
with exact responses and no network. It replaces the network only; end-to-end tests still
go through the real client and the mock API server (``forgeflare mock-api``)::

    model = ScriptedModel([tool_use_response(("Bash", {"command": "ls"})), text_response("ok")])
    loop = TurnLoop(model=model, ...)
    ...
    assert len(model.requests) == 2
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from forgeflare.agent._messages import (
    AssistantResponse,
    Message,
    MessagesRequest,
    StopReason,
    TextBlock,
    ToolUseBlock,
    Usage,
)

__all__ = ["ScriptedModel", "ScriptedResponse", "text_response", "tool_use_response"]

ScriptedResponse = AssistantResponse | Exception
"""One scripted answer: a response to return, or an exception to raise (an API error)."""


class ScriptedModel:
    """Answers each request with the next scripted response; records every request.

    ``responses`` is a list (request *n* gets item *n*) or a function of *n*. An exception
    in its place is raised instead, as the real client raises ``APIError``. ``requests``
    holds a deep copy of each request's messages, as the model saw them at that moment
    (the loop keeps appending to its own list). Asking past the end of a list raises
    ``LookupError``: a test that needs more answers says so.
    """

    def __init__(
        self, responses: Sequence[ScriptedResponse] | Callable[[int], ScriptedResponse]
    ) -> None:
        self.responses = responses
        self.requests: list[list[Message]] = []

    async def send(
        self, request: MessagesRequest, *, on_text: Callable[[str], None] | None = None
    ) -> AssistantResponse:
        """Record ``request`` and return (or raise) the next scripted response."""
        n = len(self.requests)
        self.requests.append([m.model_copy(deep=True) for m in request.messages])
        if callable(self.responses):
            item = self.responses(n)
        elif n < len(self.responses):
            item = self.responses[n]
        else:
            raise LookupError(f"scripted model: no response {n + 1} (the script has {n})")
        if isinstance(item, Exception):
            raise item
        return item


def text_response(text: str, stop: StopReason = StopReason.END_TURN) -> AssistantResponse:
    """A response of one text block (10 input and 5 output tokens)."""
    return _response([TextBlock(text=text)], stop)


def tool_use_response(
    *calls: tuple[str, dict[str, Any] | None], stop: StopReason = StopReason.TOOL_USE
) -> AssistantResponse:
    """A response calling each ``(tool, input)`` in order, with ids ``toolu_0``, ``toolu_1``..."""
    return _response(
        [
            ToolUseBlock(id=f"toolu_{i}", name=name, input=inp)
            for i, (name, inp) in enumerate(calls)
        ],
        stop,
    )


def _response(content: Sequence[TextBlock | ToolUseBlock], stop: StopReason) -> AssistantResponse:
    """A response of ``content`` that took 10 input and 5 output tokens."""
    return AssistantResponse(
        content=list(content), stop_reason=stop, usage=Usage(input_tokens=10, output_tokens=5)
    )
