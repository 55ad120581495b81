"""Typed content blocks and messages of the Anthropic Messages API.

These are the plain data models every part shares: the API client builds them from a stream,
the turn loop keeps a conversation of them, the session writer serialises them.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag

__all__ = [
    "AssistantResponse",
    "ContentBlock",
    "Message",
    "MessagesRequest",
    "RedactedThinkingBlock",
    "ServerBlock",
    "StopReason",
    "TextBlock",
    "ThinkingBlock",
    "ToolResultBlock",
    "ToolUseBlock",
    "Usage",
]


class _Block(BaseModel):
    model_config = ConfigDict(defer_build=True, extra="ignore")


class TextBlock(_Block):
    """Plain text from the model or the user."""

    type: Literal["text"] = "text"
    text: str


class ToolUseBlock(_Block):
    """A tool call. ``input`` is ``None`` when max_tokens cut the JSON short."""

    type: Literal["tool_use"] = "tool_use"
    id: str
    name: str
    input: dict[str, Any] | None


class ThinkingBlock(_Block):
    """Extended thinking; the signature must be sent back unchanged."""

    type: Literal["thinking"] = "thinking"
    thinking: str
    signature: str = ""


class RedactedThinkingBlock(_Block):
    """Thinking the API returns encrypted; sent back unchanged."""

    type: Literal["redacted_thinking"] = "redacted_thinking"
    data: str


class ToolResultBlock(_Block):
    """The result of one tool call, sent back in a user message."""

    type: Literal["tool_result"] = "tool_result"
    tool_use_id: str
    content: str
    is_error: bool = False


class ServerBlock(_Block):
    """A block of a kind the agent does not act on itself, kept verbatim to be sent back.

    Server tools (``server_tool_use``, ``web_search_tool_result`` and the like) run on the
    API's side; a ``pause_turn`` response must be continued with them exactly as received.
    """

    model_config = ConfigDict(defer_build=True, extra="allow")

    type: str


_TYPED_BLOCKS = frozenset({"text", "tool_use", "thinking", "redacted_thinking", "tool_result"})


def _block_tag(value: Any) -> str:
    kind = value.get("type") if isinstance(value, dict) else getattr(value, "type", None)
    return kind if kind in _TYPED_BLOCKS else "server"


ContentBlock = Annotated[
    Annotated[TextBlock, Tag("text")]
    | Annotated[ToolUseBlock, Tag("tool_use")]
    | Annotated[ThinkingBlock, Tag("thinking")]
    | Annotated[RedactedThinkingBlock, Tag("redacted_thinking")]
    | Annotated[ToolResultBlock, Tag("tool_result")]
    | Annotated[ServerBlock, Tag("server")],
    Discriminator(_block_tag),
]


class Message(BaseModel):
    """One conversation turn. User text is kept as a list of blocks too."""

    model_config = ConfigDict(defer_build=True)

    role: Literal["user", "assistant"]
    content: list[ContentBlock]

    @classmethod
    def user_text(cls, text: str) -> Message:
        """A user message holding one text block."""
        return cls(role="user", content=[TextBlock(text=text)])


class StopReason(StrEnum):
    """Why the API stopped generating (``stop_reason`` in the response)."""

    END_TURN = "end_turn"
    MAX_TOKENS = "max_tokens"
    TOOL_USE = "tool_use"
    STOP_SEQUENCE = "stop_sequence"
    PAUSE_TURN = "pause_turn"
    REFUSAL = "refusal"


class Usage(BaseModel):
    """Token counts of one response (output tokens are cumulative in the stream)."""

    model_config = ConfigDict(defer_build=True)

    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0


class AssistantResponse(BaseModel):
    """A complete assistant message: only ever built from a stream that reached message_stop."""

    model_config = ConfigDict(defer_build=True)

    id: str = ""
    model: str = ""
    content: list[ContentBlock]
    stop_reason: StopReason
    usage: Usage = Field(default_factory=Usage)

    def to_message(self) -> Message:
        """The response as a conversation message."""
        return Message(role="assistant", content=list(self.content))


class MessagesRequest(BaseModel):
    """The body of ``POST /v1/messages`` (``stream`` is set by the client)."""

    model_config = ConfigDict(defer_build=True)

    model: str
    max_tokens: int
    messages: list[Message]
    system: str | None = None
    tools: list[dict[str, Any]] = Field(default_factory=list)
    tool_choice: dict[str, Any] | None = None
    """Force a tool (``{"type": "tool", "name": ...}``); unset: the model chooses."""
    cache: bool = True
    """Mark prompt-cache breakpoints (tools, system prompt, conversation tail)."""

    def to_body(self, *, stream: bool) -> dict[str, Any]:
        """The JSON body the API expects."""
        body = self.model_dump(mode="json", exclude_none=True, exclude={"cache"})
        if not self.tools:
            body.pop("tools", None)
        if self.cache:
            add_cache_breakpoints(body)
        body["stream"] = stream
        return body


_EPHEMERAL = {"type": "ephemeral"}


def add_cache_breakpoints(body: dict[str, Any]) -> None:
    """Put ``cache_control`` where the API documents prompt caching pays: on the last tool
    (caches every tool definition), on the system prompt, and on the last block of the last
    message (the conversation so far is read from the cache by the next request). Three of the
    four breakpoints a request may carry."""
    tools = body.get("tools")
    if tools:
        tools[-1] = {**tools[-1], "cache_control": _EPHEMERAL}
    system = body.get("system")
    if isinstance(system, str) and system:
        body["system"] = [{"type": "text", "text": system, "cache_control": _EPHEMERAL}]
    messages = body.get("messages")
    if messages:
        last = messages[-1]
        content = last.get("content")
        if isinstance(content, str):
            if content:
                last["content"] = [{"type": "text", "text": content, "cache_control": _EPHEMERAL}]
        elif content:
            for block in reversed(content):
                # thinking blocks cannot carry cache_control
                if block.get("type") not in ("thinking", "redacted_thinking"):
                    block["cache_control"] = _EPHEMERAL
                    break
