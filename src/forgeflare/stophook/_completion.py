"""The one rule for what completes a loop, and the sentence that tells the model about it.

The rule: a completion tag of the running frame's mode counts when it stands on its own line,
outside code, in the final assistant message of the turn, across all its text blocks.
Thinking, tool input, tool results and earlier messages or turns never count.

Claude Code's Stop input carries ``last_assistant_message``, only the *last text block* of
that message, and ``transcript_path``, where the message may not be written yet when the hook
runs. :func:`judged_text` picks the text to judge: the whole final message from the
transcript when its last text block is what Claude Code sent, else (the transcript lags)
``last_assistant_message``.
"""

from __future__ import annotations

from forgeflare._completion import RULE, completion_hint
from forgeflare.stophook._transcript import FinalMessage

__all__ = ["RULE", "completion_hint", "judged_text"]


def judged_text(final: FinalMessage | None, last_assistant_message: str | None) -> str | None:
    """The text the completion rule is applied to; ``None`` when neither source has one.

    ``final`` is the transcript's final message of the turn (``None``: not in the file yet);
    ``last_assistant_message`` is Claude Code's field (``None``: absent, older versions).
    """
    if final is None:
        return last_assistant_message
    if last_assistant_message is None or final.last_text.strip() == last_assistant_message.strip():
        return final.text
    return last_assistant_message  # the transcript lags behind the Stop
