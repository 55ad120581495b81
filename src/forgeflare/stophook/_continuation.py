"""The continuation a running loop blocks a Stop with: the iteration line, how to finish, how
to ask, then the loop's own prompt. One text for the state machine and the quick Stop."""

from __future__ import annotations

from forgeflare._completion import Mode, blocked_hint, completion_hint

__all__ = ["BLOCK_MESSAGE", "continuation"]

BLOCK_MESSAGE = (
    "[ITERATION {n}/{max}] Continue working on the task. "
    "Check your progress and either complete the task or keep iterating."
)


def continuation(iteration: int, cap: int, mode: str, prompt: str) -> str:
    """The spec's continuation line for a frame of ``mode`` now in ``iteration`` of ``cap``,
    how to finish and how to ask, then its original prompt (pure)."""
    line = BLOCK_MESSAGE.format(n=iteration, max=cap)
    text = f"{line}\n{completion_hint(Mode(mode))} {blocked_hint()}"
    prompt = prompt.strip()
    return f"{text}\n\n{prompt}" if prompt else text
