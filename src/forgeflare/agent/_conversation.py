"""Pure operations on the conversation: recovery after an API error, trimming, max-tokens logic.

The conversation is a list of :class:`Message` that must alternate user / assistant, start with
a user message, and pair every ``tool_use`` with a ``tool_result`` in the next user message.
Every function here keeps those invariants; the property tests check it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from enum import Enum

from forgeflare.agent._messages import ContentBlock, Message, TextBlock, ToolUseBlock

__all__ = [
    "CONTINUE_PROMPT",
    "MAX_CONTINUATIONS",
    "TRIM_BUDGET_BYTES",
    "TRIM_THRESHOLD_TOKENS",
    "TRUNCATED_PLACEHOLDER",
    "MaxTokensAction",
    "add_user_text",
    "classify_max_tokens",
    "conversation_bytes",
    "drop_null_input_tool_uses",
    "recover_conversation",
    "should_trim",
    "trim_conversation",
]

MAX_CONTINUATIONS = 3
CONTINUE_PROMPT = "Continue from where you left off."
TRUNCATED_PLACEHOLDER = "[response truncated by max_tokens before any complete content]"

TRIM_THRESHOLD_TOKENS = 120_000  # of the model's 200,000-token context
TRIM_BUDGET_BYTES = 720_000


class MaxTokensAction(Enum):
    """What to do with a response that stopped at max_tokens."""

    DISPATCH_TOOLS = "dispatch_tools"
    CONTINUE = "continue"
    BREAK_EMPTY = "break_empty"
    BREAK_CAP_REACHED = "break_cap_reached"


def classify_max_tokens(
    *, has_tool_use: bool, has_text: bool, continuation_count: int
) -> MaxTokensAction:
    """Plan item 5: tools truncated by max_tokens are dispatched; text is continued 3 times."""
    if has_tool_use:
        return MaxTokensAction.DISPATCH_TOOLS
    if not has_text:
        return MaxTokensAction.BREAK_EMPTY
    if continuation_count >= MAX_CONTINUATIONS:
        return MaxTokensAction.BREAK_CAP_REACHED
    return MaxTokensAction.CONTINUE


def drop_null_input_tool_uses(content: Sequence[ContentBlock]) -> list[ContentBlock]:
    """Remove tool_use blocks whose input JSON was cut off (``input is None``).

    If nothing is left, a placeholder text keeps the assistant message non-empty (the API
    rejects empty content).
    """
    kept = [b for b in content if not (isinstance(b, ToolUseBlock) and b.input is None)]
    return kept or [TextBlock(text=TRUNCATED_PLACEHOLDER)]


def add_user_text(conversation: list[Message], text: str) -> Message:
    """Append user text, merging into a trailing user message so roles keep alternating."""
    if conversation and conversation[-1].role == "user":
        conversation[-1].content.append(TextBlock(text=text))
        return conversation[-1]
    message = Message.user_text(text)
    conversation.append(message)
    return message


def _has_tool_use(message: Message) -> bool:
    return any(isinstance(b, ToolUseBlock) for b in message.content)


def recover_conversation(conversation: list[Message]) -> None:
    """Undo the request that failed: pop the trailing user message and an orphaned tool_use.

    Afterwards the conversation is empty, ends with an assistant message without tool_use,
    or ends with a user message whose tool_results answer the assistant before it; the next
    user input is merged or appended by :func:`add_user_text`.
    """
    if conversation and conversation[-1].role == "user":
        conversation.pop()
    if conversation and conversation[-1].role == "assistant" and _has_tool_use(conversation[-1]):
        conversation.pop()


def should_trim(last_input_tokens: int) -> bool:
    """Trim only before the first call (0: nothing reported yet) or past the threshold."""
    return last_input_tokens == 0 or last_input_tokens >= TRIM_THRESHOLD_TOKENS


def _message_bytes(message: Message) -> int:
    return len(json.dumps(message.model_dump(mode="json"), ensure_ascii=False).encode())


def conversation_bytes(conversation: Sequence[Message]) -> int:
    """The serialised size the trim budget is measured in."""
    return sum(_message_bytes(m) for m in conversation)


def trim_conversation(conversation: list[Message], *, budget: int = TRIM_BUDGET_BYTES) -> int:
    """Drop the oldest exchanges after the first message until the size fits ``budget``.

    An exchange is an assistant message and the user message after it, so alternation and
    tool_use / tool_result pairing survive. The first message (the task) and the last two
    messages are always kept. Returns the number of messages removed.
    """
    sizes = [_message_bytes(m) for m in conversation]
    total = sum(sizes)
    cut = 1
    # Keep the tail (the exchange in progress): only pairs strictly before len - 2 may go.
    while total > budget and cut + 2 <= len(conversation) - 2:
        total -= sizes[cut] + sizes[cut + 1]
        cut += 2
    removed = cut - 1
    if removed:
        del conversation[1:cut]
    return removed
