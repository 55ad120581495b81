"""The coding agent behind ``forgeflare run``: API client, tools, turn loop, session capture."""

from forgeflare.agent._messages import (
    AssistantResponse,
    ContentBlock,
    Message,
    MessagesRequest,
    RedactedThinkingBlock,
    StopReason,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
)

__all__ = [
    "AssistantResponse",
    "ContentBlock",
    "Message",
    "MessagesRequest",
    "RedactedThinkingBlock",
    "StopReason",
    "TextBlock",
    "ThinkingBlock",
    "ToolResultBlock",
    "ToolUseBlock",
    "Usage",
]
