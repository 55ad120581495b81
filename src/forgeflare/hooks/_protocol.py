"""The shell hook wire protocol (hook spec R3/R4), as pure functions.

What goes to a hook on stdin, how its stdout is read, and the exact texts a guard failure
puts in front of the model. No I/O here: :mod:`._shell` runs the process, :mod:`._pipeline`
decides with these.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

__all__ = [
    "RESULT_CAP_BYTES",
    "HookResult",
    "Outcome",
    "ProcessOutcome",
    "block_message",
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
    "allow", "block", "signal", "continue", "stop", "timeout", "crash", "invalid_json"
]
"""What one hook invocation came to, as recorded in the audit trail."""

_FAILURES = ("timeout", "crash", "invalid_json")


def floor_char_boundary(data: bytes, index: int) -> int:
    """The largest UTF-8 character boundary ``<= index`` in ``data`` (Rust's ``str`` method)."""
    if index >= len(data):
        return len(data)
    # Continuation bytes look like 0b10xxxxxx; a boundary is any other byte.
    while index > 0 and (data[index] & 0xC0) == 0x80:
        index -= 1
    return index


def truncate_result(result: str) -> str:
    """Cap a tool result at 5120 UTF-8 bytes for a hook's stdin (the model still sees it all).

    Longer results keep the first 2560 and last 2560 bytes around a marker giving the full
    length; both cuts move down to a character boundary so no character is ever split.
    """
    data = result.encode("utf-8", errors="surrogatepass")
    total = len(data)
    if total <= RESULT_CAP_BYTES:
        return result
    head = data[: floor_char_boundary(data, _HALF)]
    tail = data[floor_char_boundary(data, total - _HALF) :]
    marker = f"\n... (truncated for hook, full result: {total} bytes)\n"
    return (
        head.decode("utf-8", errors="surrogatepass")
        + marker
        + tail.decode("utf-8", errors="surrogatepass")
    )


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


@dataclass(frozen=True, slots=True)
class HookResult:
    """What one hook invocation decided (shell or Python), in one shape for the pipeline.

    ``reason`` is the block or signal reason for decisions and the failure detail for
    ``timeout``/``crash``/``invalid_json``; ``note`` is something worth logging that did not
    change the decision (an unrecognised Stop action).
    """

    outcome: Outcome
    reason: str = ""
    signal: str | None = None
    updated_input: dict[str, Any] | None = None
    prompt: str | None = None
    returncode: int | None = None
    note: str | None = None

    @property
    def failed(self) -> bool:
        """The hook broke (as opposed to deciding)."""
        return self.outcome in _FAILURES


def _failure(proc: ProcessOutcome) -> HookResult | None:
    """The failure a process outcome is on its own, or ``None`` if it exited 0."""
    if proc.kind == "timeout":
        return HookResult("timeout", reason="timed out")
    if proc.kind == "too_large":
        return HookResult("invalid_json", reason=proc.detail or "stdout too large")
    if proc.kind == "spawn_error":
        return HookResult("crash", reason=proc.detail or "could not start")
    if proc.returncode != 0:
        return HookResult(
            "crash", reason=f"exit code {proc.returncode}", returncode=proc.returncode
        )
    return None


def _invalid(detail: str) -> HookResult:
    return HookResult("invalid_json", reason=detail)


def _output(proc: ProcessOutcome) -> dict[str, Any] | HookResult:
    """The JSON object a hook printed, or the failure it came to (every event's first step)."""
    failed = _failure(proc)
    if failed is not None:
        return failed
    try:
        value = json.loads(proc.stdout)
    except (ValueError, UnicodeDecodeError):
        value = None
    return value if isinstance(value, dict) else _invalid("stdout is not a JSON object")


def interpret_guard(proc: ProcessOutcome) -> HookResult:
    """A guard's verdict: ``allow``, ``block``, or a failure (which blocks: fail-closed)."""
    out = _output(proc)
    if isinstance(out, HookResult):
        return out
    action = out.get("action")
    if action == "allow":
        return HookResult("allow")
    if action == "block":
        reason = out.get("reason")
        return HookResult("block", reason=reason if isinstance(reason, str) else "no reason given")
    return _invalid(f"unexpected action {action!r}; expected allow or block")


def interpret_observe(proc: ProcessOutcome) -> HookResult:
    """An observer's output is discarded; only a failure is worth recording."""
    out = _output(proc)
    return out if isinstance(out, HookResult) else HookResult("continue")


def interpret_post(proc: ProcessOutcome) -> HookResult:
    """PostToolUse: ``continue``, ``signal`` (with its name), or a failure (fail-open)."""
    out = _output(proc)
    if isinstance(out, HookResult):
        return out
    action = out.get("action")
    if action == "continue":
        return HookResult("continue")
    if action == "signal":
        signal = out.get("signal")
        if not isinstance(signal, str) or not signal:
            return _invalid("signal action without a 'signal' name")
        reason = out.get("reason")
        return HookResult("signal", signal=signal, reason=reason if isinstance(reason, str) else "")
    return _invalid(f"unexpected action {action!r}; expected continue or signal")


def interpret_stop(proc: ProcessOutcome) -> HookResult:
    """Stop output is validated for the log only; an unrecognised action counts as continue."""
    out = _output(proc)
    if isinstance(out, HookResult):
        return out
    action = out.get("action")
    if action == "continue":
        return HookResult("continue")
    return HookResult("continue", note=f"unrecognised Stop action {action!r}, treated as continue")


def failure_text(hook: str, result: HookResult, timeout_ms: int | None) -> str:
    """``hook failed: X timed out after Nms`` / ``exited with code N`` / ``returned invalid JSON``.

    Python hooks have no timeout and no exit code: a crash there carries its exception text.
    """
    if result.outcome == "timeout":
        return f"hook failed: {hook} timed out after {timeout_ms}ms"
    if result.outcome == "invalid_json":
        return f"hook failed: {hook} returned invalid JSON"
    if result.returncode is not None:
        return f"hook failed: {hook} exited with code {result.returncode}"
    return f"hook failed: {hook} {result.reason}"


def block_message(hook: str, result: HookResult, timeout_ms: int | None) -> str:
    """The text of the error tool_result when a guard blocks or fails (spec R4, exact)."""
    if result.outcome == "block":
        return f"blocked by {hook}: {result.reason}"
    return failure_text(hook, result, timeout_ms) + " (tool blocked by default)"
