"""The coding agent behind ``forgeflare run``: API client, tools, turn loop, session capture."""

from forgeflare.agent._client import MessagesClient, resolve_base_url
from forgeflare.agent._errors import (
    APIConnectionError,
    APIError,
    APIRequestError,
    APIStatusError,
    APITimeoutError,
    StreamParseError,
    StreamTransientError,
    is_transient,
)
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
from forgeflare.agent._retry import DEFAULT_BACKOFF, RetryingClient, retry_delay
from forgeflare.agent._session import SessionWriteError, SessionWriter, new_session_id

__all__ = [
    "DEFAULT_BACKOFF",
    "APIConnectionError",
    "APIError",
    "APIRequestError",
    "APIStatusError",
    "APITimeoutError",
    "AssistantResponse",
    "ContentBlock",
    "Message",
    "MessagesClient",
    "MessagesRequest",
    "RedactedThinkingBlock",
    "RetryingClient",
    "SessionWriteError",
    "SessionWriter",
    "StopReason",
    "StreamParseError",
    "StreamTransientError",
    "TextBlock",
    "ThinkingBlock",
    "ToolResultBlock",
    "ToolUseBlock",
    "Usage",
    "is_transient",
    "new_session_id",
    "resolve_base_url",
    "retry_delay",
]
