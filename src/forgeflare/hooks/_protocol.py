"""The shell hook wire protocol (hook spec R3/R4), as pure functions.

What goes to a hook on stdin, how its stdout is read, and the exact texts a guard failure
puts in front of the model. No I/O here: :mod:`._shell` runs the process, :mod:`._pipeline`
decides with these.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from forgeflare.disk import loads
from forgeflare.hooks._types import Allow, Block, Blocked, Continue, HookAnswer, Signal, Stop

__all__ = [
    "RESULT_CAP_BYTES",
    "FailureKind",
    "HookFailure",
    "Outcome",
    "ProcessOutcome",
    "Verdict",
    "block_message",
    "cap_for_model",
    "failure_text",
    "floor_char_boundary",
    "interpret_guard",
    "interpret_observe",
    "interpret_post",
    "interpret_stop",
    "post_tool_payload",
    "pre_tool_payload",
    "stop_payload",
    "truncate_result",
]

RESULT_CAP_BYTES = 5120
_HALF = RESULT_CAP_BYTES // 2

Outcome = Literal[
    "allow", "block", "signal", "continue", "stop", "blocked", "timeout", "crash",
    "invalid_json", "too_large", "untrusted",
]  # fmt: skip
"""What one hook invocation came to, as recorded in the audit trail."""


def floor_char_boundary(data: bytes, index: int) -> int:
    """The largest UTF-8 character boundary ``<= index`` in ``data`` (Rust's ``str`` method)."""
    if index >= len(data):
        return len(data)
    # Continuation bytes look like 0b10xxxxxx; a boundary is any other byte.
    while index > 0 and (data[index] & 0xC0) == 0x80:
        index -= 1
    return index


def _cut(text: str, what: str) -> str:
    """Keep the first and last 2560 UTF-8 bytes of a longer ``text`` around a marker giving
    the full length; both cuts move down to a character boundary so none is ever split."""
    data = text.encode("utf-8", errors="surrogatepass")
    total = len(data)
    if total <= RESULT_CAP_BYTES:
        return text
    head = data[: floor_char_boundary(data, _HALF)]
    tail = data[floor_char_boundary(data, total - _HALF) :]
    marker = f"\n... ({what}: {total} bytes)\n"
    return (
        head.decode("utf-8", errors="surrogatepass")
        + marker
        + tail.decode("utf-8", errors="surrogatepass")
    )


def truncate_result(result: str) -> str:
    """Cap a tool result at 5120 UTF-8 bytes for a hook's stdin (the model still sees it all)."""
    return _cut(result, "truncated for hook, full result")


def cap_for_model(text: str) -> str:
    """Cap what a hook puts in front of the model (a block reason, a Stop hook's prompt) at
    5120 UTF-8 bytes: a runaway hook must not fill the context."""
    return _cut(text, "truncated hook output, full length")


def pre_tool_payload(
    *,
    phase: Literal["guard", "observe"],
    tool: str,
    input: dict[str, Any],
    tool_iterations: int,
    cwd: str,
    blocked: bool = False,
    blocked_by: str | None = None,
    block_reason: str | None = None,
) -> dict[str, Any]:
    """PreToolUse stdin. Observe adds ``blocked``, and ``blocked_by``/``block_reason`` if so."""
    payload: dict[str, Any] = {"event": "PreToolUse", "phase": phase, "tool": tool, "input": input}
    if phase == "observe":
        payload["blocked"] = blocked
        if blocked:
            payload["blocked_by"] = blocked_by
            payload["block_reason"] = block_reason
    payload["tool_iterations"] = tool_iterations
    payload["cwd"] = cwd
    return payload


def post_tool_payload(
    *,
    tool: str,
    input: dict[str, Any],
    result: str,
    is_error: bool,
    tool_iterations: int,
    cwd: str,
) -> dict[str, Any]:
    """PostToolUse stdin, with ``result`` truncated to 5120 bytes."""
    return {
        "event": "PostToolUse",
        "tool": tool,
        "input": input,
        "result": truncate_result(result),
        "is_error": is_error,
        "tool_iterations": tool_iterations,
        "cwd": cwd,
    }


def stop_payload(
    *, reason: str, tool_iterations: int, total_tokens: int, cwd: str
) -> dict[str, Any]:
    """Stop stdin."""
    return {
        "event": "Stop",
        "reason": reason,
        "tool_iterations": tool_iterations,
        "total_tokens": total_tokens,
        "cwd": cwd,
    }


@dataclass(frozen=True, slots=True)
class ProcessOutcome:
    """How a hook process ended, before its output is interpreted."""

    kind: Literal["exited", "timeout", "too_large", "spawn_error"]
    returncode: int | None = None
    stdout: bytes = b""
    detail: str = ""


FailureKind = Literal["timeout", "crash", "invalid_json", "too_large", "untrusted"]


@dataclass(frozen=True, slots=True)
class HookFailure:
    """A hook that broke instead of answering: timed out, crashed (exit code, exception),
    printed no JSON object, or printed more than its output limit."""

    kind: FailureKind
    detail: str = ""
    returncode: int | None = None


_OUTCOMES: dict[type, Outcome] = {
    Allow: "allow",
    Block: "block",
    Signal: "signal",
    Continue: "continue",
    Stop: "stop",
    Blocked: "blocked",
}


@dataclass(frozen=True, slots=True)
class Verdict:
    """What one hook invocation came to, shell or Python: an answer, a failure, or no opinion.

    ``note`` is something worth logging that did not change the decision (an unrecognised
    Stop action, a deprecated ``HookOutcome`` decision that means nothing for its event).
    """

    answer: HookAnswer | None = None
    failure: HookFailure | None = None
    note: str | None = None

    @property
    def outcome(self) -> Outcome:
        """The audit trail's name for it."""
        if self.failure is not None:
            return self.failure.kind
        return "continue" if self.answer is None else _OUTCOMES[type(self.answer)]


def _failure(proc: ProcessOutcome) -> Verdict | None:
    """The failure a process outcome is on its own, or ``None`` if it exited 0."""
    if proc.kind == "timeout":
        return Verdict(failure=HookFailure("timeout", "timed out"))
    if proc.kind == "too_large":
        return Verdict(failure=HookFailure("too_large", proc.detail or "stdout too large"))
    if proc.kind == "spawn_error":
        return Verdict(failure=HookFailure("crash", proc.detail or "could not start"))
    if proc.returncode != 0:
        failure = HookFailure("crash", f"exit code {proc.returncode}", proc.returncode)
        return Verdict(failure=failure)
    return None


def _invalid(detail: str) -> Verdict:
    return Verdict(failure=HookFailure("invalid_json", detail))


def _text(out: dict[str, Any], key: str, default: str) -> str:
    value = out.get(key)
    return value if isinstance(value, str) else default


def _signal(out: dict[str, Any]) -> Verdict:
    signal = out.get("signal")
    if not isinstance(signal, str) or not signal:
        return _invalid("signal action without a 'signal' name")
    return Verdict(Signal(signal, _text(out, "reason", "")))


_Action = Callable[[dict[str, Any]], Verdict]
_GUARD: dict[str, _Action] = {
    "allow": lambda out: Verdict(Allow()),
    "block": lambda out: Verdict(Block(_text(out, "reason", "no reason given"))),
}
_POST: dict[str, _Action] = {"continue": lambda out: Verdict(), "signal": _signal}


def _interpret(proc: ProcessOutcome, actions: dict[str, _Action] | None) -> Verdict:
    """Every event's steps: a failure, else the JSON object's ``action`` looked up in
    ``actions`` (``None``: any object will do; the output is not read)."""
    failed = _failure(proc)
    if failed is not None:
        return failed
    try:
        out = loads(proc.stdout)  # lone surrogates replaced: they crash every writer
    except ValueError:
        out = None
    if not isinstance(out, dict):
        return _invalid("stdout is not a JSON object")
    if actions is None:
        return Verdict()
    action = out.get("action")
    decide = actions.get(action) if isinstance(action, str) else None
    if decide is None:
        return _invalid(f"unexpected action {action!r}; expected {' or '.join(actions)}")
    return decide(out)


def interpret_guard(proc: ProcessOutcome) -> Verdict:
    """A guard's verdict: ``Allow``, ``Block``, or a failure (which blocks: fail-closed)."""
    return _interpret(proc, _GUARD)


def interpret_observe(proc: ProcessOutcome) -> Verdict:
    """An observer's output is discarded; only a failure is worth recording."""
    return _interpret(proc, None)


def interpret_post(proc: ProcessOutcome) -> Verdict:
    """PostToolUse: no opinion (``continue``), a ``Signal``, or a failure (fail-open)."""
    return _interpret(proc, _POST)


def _blocked(out: dict[str, Any]) -> Verdict:
    question = out.get("question")
    if not isinstance(question, str) or not question.strip():
        return _invalid("blocked action without a 'question'")
    return Verdict(Blocked(question.strip()))


def interpret_stop(proc: ProcessOutcome) -> Verdict:
    """Shell Stop hooks observe, except ``{"action": "blocked", "question": "..."}``, which
    parks the loop on the question; an unrecognised action counts as continue."""
    verdict = _interpret(proc, None)
    if verdict.failure is not None:
        return verdict
    out = loads(proc.stdout)
    action = out.get("action")
    if action == "continue":
        return verdict
    if action == "blocked":
        return _blocked(out)
    return Verdict(note=f"unrecognised Stop action {action!r}, treated as continue")


def failure_text(hook: str, failure: HookFailure, timeout_ms: int | None) -> str:
    """``hook failed: X timed out after Nms`` / ``exited with code N`` / ``returned invalid
    JSON`` / ``output too large``; a Python hook's crash carries its exception text."""
    if failure.kind == "timeout":
        return f"hook failed: {hook} timed out after {timeout_ms}ms"
    if failure.kind == "invalid_json":
        return f"hook failed: {hook} returned invalid JSON"
    if failure.kind == "too_large":
        return f"hook failed: {hook} output too large ({failure.detail})"
    if failure.kind == "untrusted":
        return f"hook refused: {hook}: {failure.detail}"
    if failure.returncode is not None:
        return f"hook failed: {hook} exited with code {failure.returncode}"
    return f"hook failed: {hook} {failure.detail}"


def block_message(hook: str, verdict: Verdict, timeout_ms: int | None) -> str:
    """The text of the error tool_result when a guard blocks or fails (spec R4, exact),
    capped at 5120 bytes like everything a hook puts in front of the model."""
    if isinstance(verdict.answer, Block):
        return cap_for_model(f"blocked by {hook}: {verdict.answer.reason}")
    assert verdict.failure is not None, "a guard that did not block failed"
    return cap_for_model(
        failure_text(hook, verdict.failure, timeout_ms) + " (tool blocked by default)"
    )
