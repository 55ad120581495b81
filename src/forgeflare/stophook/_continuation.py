"""The continuation a running loop blocks a Stop with: the iteration line, how to finish, how
to ask, then the loop's own prompt. One text for the state machine and the quick Stop, and one
way to hand it to Claude Code (:func:`continue_output`)."""

from __future__ import annotations

import json

from forgeflare._completion import Mode, blocked_hint, completion_hint

__all__ = ["BLOCK_MESSAGE", "continuation", "continue_output", "continued"]

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


def continue_output(reason: str) -> str:
    """The hook's stdout (exit 0) that keeps Claude Code's session going with ``reason``.

    Claude Code's sanctioned channel for a Stop hook's feedback: ``hookSpecificOutput``'s
    ``additionalContext``, which reaches the model as ``Stop hook additional context: …``.
    Why not the alternatives (measured on 2.1.332 against the mock): exit 2 prefixes the reason
    with the hook's absolute path, and ``{"decision": "block"}`` adds a system message
    ``Stop hook blocking error from command: "<path>"``, so the model read every iteration as
    an error. 2.1.197 continues with this output too.
    """
    payload = {"hookSpecificOutput": {"hookEventName": "Stop", "additionalContext": reason}}
    return json.dumps(payload) + "\n"


def continued(stdout: str) -> str | None:
    """The continuation in the hook's stdout, ``None`` when it let the stop happen (pure)."""
    try:
        payload = json.loads(stdout) if stdout.strip() else None
    except ValueError:
        return None
    specific = payload.get("hookSpecificOutput") if isinstance(payload, dict) else None
    reason = specific.get("additionalContext") if isinstance(specific, dict) else None
    return reason if isinstance(reason, str) else None
