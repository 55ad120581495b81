"""One hook pipeline for shell hooks (hooks.toml) and Python hooks (hook spec R1-R8).

Order and policy, per event:

- **PreToolUse**: guards run in order (shell guards as declared, then Python PreToolUse hooks
  as registered); the first block or failure wins (fail-closed) and ends the guard phase. A
  Python ``allow`` with ``updated_input`` passes the new input to later hooks and the tool.
  Then every matching shell observe hook runs (fail-open) with ``blocked`` and, when blocked,
  ``blocked_by``/``block_reason``.
- **PostToolUse**: shell hooks then Python hooks, all of them; every signal becomes an
  observation, the first one is returned; one read-modify-write of convergence.json per call.
  Failures are logged (fail-open).
- **Stop**: shell Stop hooks are observe-only (output validated and logged); then Python Stop
  hooks until one decides: ``continue`` returns its reason as the next user prompt.
- **ExecutionStart, StepStart, StepEnd, AgentFailed**: Python hooks observe; exceptions are
  logged, never fatal.

Every invocation is one audit record (a dict; :func:`build_pipeline` writes them as JSONL).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

from forgeflare._clock import utc_timestamp
from forgeflare._fsutil import append_line
from forgeflare.hooks._api import Hook, HookEvent, HookOutcome
from forgeflare.hooks._config import HOOKS_RELPATH, HookConfig, load_hooks_file
from forgeflare.hooks._convergence import Observation, append_observations, convergence_path
from forgeflare.hooks._protocol import (
    HookResult,
    ProcessOutcome,
    block_message,
    failure_text,
    interpret_guard,
    interpret_observe,
    interpret_post,
    interpret_stop,
    post_tool_payload,
    pre_tool_payload,
    stop_payload,
)
from forgeflare.hooks._shell import run_hook_process
from forgeflare.hooks._types import (
    Allow,
    Block,
    Continue,
    ExitReason,
    HookPipeline,
    NoHooks,
    PostToolResult,
    PreToolResult,
    Signal,
)

__all__ = ["DEFAULT_CONTINUE_PROMPT", "AuditSink", "HookDispatcher", "build_pipeline"]

AuditSink = Callable[[dict[str, Any]], None]
DEFAULT_CONTINUE_PROMPT = "Continue."
"""The next user prompt when a Python Stop hook says ``continue`` without a reason."""

_Interpret = Callable[[ProcessOutcome], HookResult]


def _encode(payload: dict[str, Any]) -> bytes:
    # default=str: a Python hook may put a non-JSON value in updated_input; never crash on it.
    return json.dumps(payload, ensure_ascii=False, default=str).encode(
        "utf-8", errors="surrogatepass"
    )


def _detail(result: HookResult) -> str:
    """What a failure's message does not already say (why the JSON was invalid)."""
    return f": {result.reason}" if result.outcome == "invalid_json" and result.reason else ""


def _python_result(hook: Hook, value: object) -> HookResult:
    """Translate what a Python hook returned into the pipeline's one result shape."""
    if value is None:
        return HookResult("continue")
    if not isinstance(value, HookOutcome):
        return HookResult(
            "crash", reason=f"returned {type(value).__name__}, expected HookOutcome or None"
        )
    decision, reason, event = value.decision, value.reason, hook.event
    if event is HookEvent.PRE_TOOL_USE:
        if decision in ("deny", "stop"):
            return HookResult("block", reason=reason or "denied")
        if decision == "allow":
            return HookResult("allow", updated_input=value.updated_input)
        return HookResult("continue")
    if event is HookEvent.POST_TOOL_USE:
        if decision == "stop":
            return HookResult("signal", signal=reason or hook.name, reason=reason or "")
        if decision == "deny":
            return HookResult("continue", note="decision 'deny' after the tool ran is ignored")
        return HookResult("continue")
    if event is HookEvent.STOP:
        if decision == "continue":
            return HookResult("continue", prompt=reason or DEFAULT_CONTINUE_PROMPT)
        if decision == "stop":
            return HookResult("stop", reason=reason or "")
    return HookResult("continue")


class HookDispatcher:
    """The :class:`~forgeflare.hooks.HookPipeline` for configured shell and Python hooks.

    ``convergence_file`` receives PostToolUse observations (``None``: not recorded, as in
    ``forgeflare hooks test``). ``audit`` gets one dict per hook invocation.
    """

    def __init__(
        self,
        *,
        project_dir: Path,
        shell_hooks: Sequence[HookConfig] = (),
        python_hooks: Sequence[Hook] = (),
        log: Callable[[str], None],
        audit: AuditSink | None = None,
        convergence_file: Path | None = None,
    ) -> None:
        self._project_dir = project_dir
        self._cwd = str(project_dir.resolve())
        self._log = log
        self._audit = audit
        self._convergence_file = convergence_file
        # Split once at start-up: each call only filters by tool name.
        self._guards = [h for h in shell_hooks if h.effective_phase == "guard"]
        self._observers = [h for h in shell_hooks if h.effective_phase == "observe"]
        self._post = [h for h in shell_hooks if h.event == "PostToolUse"]
        self._stop = [h for h in shell_hooks if h.event == "Stop"]
        self._py: dict[HookEvent, list[Hook]] = {e: [] for e in HookEvent}
        for h in python_hooks:
            self._py[h.event].append(h)

    # -- running one hook -------------------------------------------------------------

    def _record(
        self,
        *,
        event: str,
        phase: str | None,
        hook: str,
        kind: Literal["shell", "python"],
        tool: str | None,
        started: float,
        result: HookResult,
        extra: dict[str, Any] | None = None,
    ) -> None:
        if self._audit is None:
            return
        record: dict[str, Any] = {
            "ts": utc_timestamp(),
            "event": event,
            "phase": phase,
            "hook": hook,
            "kind": kind,
            "tool": tool,
            "duration_ms": round((time.perf_counter() - started) * 1000, 3),
            "outcome": result.outcome,
        }
        if result.reason:
            record["reason"] = result.reason
        if result.signal is not None:
            record["signal"] = result.signal
        if result.returncode is not None:
            record["exit_code"] = result.returncode
        if result.note:
            record["note"] = result.note
        if result.prompt is not None:
            record["prompt"] = result.prompt
        if extra:
            record.update(extra)
        self._audit(record)

    async def _shell(
        self,
        hook: HookConfig,
        payload: bytes,
        interpret: _Interpret,
        *,
        phase: str | None,
        tool: str | None,
    ) -> HookResult:
        started = time.perf_counter()
        proc = await run_hook_process(
            hook.command, payload, cwd=self._project_dir, timeout_ms=hook.effective_timeout_ms
        )
        result = interpret(proc)
        self._record(
            event=hook.event,
            phase=phase,
            hook=hook.command,
            kind="shell",
            tool=tool,
            started=started,
            result=result,
        )
        return result

    async def _python(
        self, hook: Hook, kwargs: dict[str, Any], *, phase: str | None = None
    ) -> HookResult:
        started = time.perf_counter()
        try:
            value = await hook.call(**kwargs)
        except Exception as exc:  # a broken hook is a failure to report, not a crash
            result = HookResult("crash", reason=f"raised {type(exc).__name__}: {exc}")
        else:
            result = _python_result(hook, value)
        extra = None
        if result.updated_input is not None:
            extra = {"input": kwargs.get("input"), "updated_input": result.updated_input}
        self._record(
            event=hook.event.value,
            phase=phase,
            hook=hook.name,
            kind="python",
            tool=kwargs.get("tool"),
            started=started,
            result=result,
            extra=extra,
        )
        return result

    def _log_ignored(self, where: str, name: str, result: HookResult, timeout: int | None) -> None:
        if result.failed:
            self._log(f"{where}: {failure_text(name, result, timeout)}{_detail(result)} (ignored)")
        elif result.note:
            self._log(f"{where}: {name}: {result.note}")

    # -- the pipeline -------------------------------------------------------------------

    async def execution_start(self, *, prompt: str) -> None:
        """Python ExecutionStart hooks (observe)."""
        await self._observe_python(HookEvent.EXECUTION_START, prompt=prompt)

    async def step_start(self, *, step: int) -> None:
        """Python StepStart hooks (observe)."""
        await self._observe_python(HookEvent.STEP_START, step=step)

    async def step_end(self, *, step: int, stop_reason: str) -> None:
        """Python StepEnd hooks (observe)."""
        await self._observe_python(HookEvent.STEP_END, step=step, stop_reason=stop_reason)

    async def agent_failed(self, *, error: BaseException) -> None:
        """Python AgentFailed hooks (observe)."""
        await self._observe_python(HookEvent.AGENT_FAILED, error=error)

    async def _observe_python(self, event: HookEvent, **kwargs: Any) -> None:
        for h in self._py[event]:
            result = await self._python(h, kwargs)
            self._log_ignored(f"{event} hook", h.name, result, None)

    async def pre_tool_use(
        self, *, tool: str, input: dict[str, Any], tool_iterations: int
    ) -> PreToolResult:
        """Guards (fail-closed, first block wins), then observers (fail-open)."""
        current = input
        block: Block | None = None
        guards = [h for h in self._guards if h.matches(tool)]
        if guards:
            payload = _encode(
                pre_tool_payload(
                    phase="guard", tool=tool, input=input, tool_iterations=tool_iterations,
                    cwd=self._cwd,
                )
            )  # fmt: skip
            for g in guards:
                result = await self._shell(g, payload, interpret_guard, phase="guard", tool=tool)
                if result.outcome != "allow":
                    block = self._block(g.command, result, g.effective_timeout_ms)
                    break
        if block is None:
            for p in self._py[HookEvent.PRE_TOOL_USE]:
                if not p.matches(tool):
                    continue
                args = {"tool": tool, "input": current, "tool_iterations": tool_iterations}
                result = await self._python(p, args, phase="guard")
                if result.outcome == "allow" and result.updated_input is not None:
                    current = result.updated_input
                elif result.outcome == "block" or result.failed:
                    block = self._block(p.name, result, None)
                    break
        observers = [h for h in self._observers if h.matches(tool)]
        if observers:
            payload = _encode(
                pre_tool_payload(
                    phase="observe", tool=tool, input=current, tool_iterations=tool_iterations,
                    cwd=self._cwd, blocked=block is not None,
                    blocked_by=block.blocked_by if block else None,
                    block_reason=block.reason if block else None,
                )
            )  # fmt: skip
            for o in observers:
                result = await self._shell(
                    o, payload, interpret_observe, phase="observe", tool=tool
                )
                self._log_ignored(
                    "PreToolUse observe hook", o.command, result, o.effective_timeout_ms
                )
        return block if block is not None else Allow(current)

    def _block(self, name: str, result: HookResult, timeout_ms: int | None) -> Block:
        message = block_message(name, result, timeout_ms)
        if result.failed:
            self._log(f"PreToolUse guard: {message}{_detail(result)}")
        return Block(
            message=message,
            blocked_by=name,
            reason=result.reason if result.outcome == "block" else message,
        )

    async def post_tool_use(
        self,
        *,
        tool: str,
        input: dict[str, Any],
        result: str,
        is_error: bool,
        tool_iterations: int,
    ) -> PostToolResult:
        """All matching hooks; first signal returned, every signal recorded (one write)."""
        first: Signal | None = None
        observations: list[Observation] = []

        def take(res: HookResult) -> None:
            nonlocal first
            if res.outcome == "signal" and res.signal is not None:
                observations.append(
                    Observation(
                        signal=res.signal, reason=res.reason, tool_iterations=tool_iterations
                    )
                )
                if first is None:
                    first = Signal(signal=res.signal, reason=res.reason)

        shell = [h for h in self._post if h.matches(tool)]
        if shell:
            payload = _encode(
                post_tool_payload(
                    tool=tool, input=input, result=result, is_error=is_error,
                    tool_iterations=tool_iterations, cwd=self._cwd,
                )
            )  # fmt: skip
            for h in shell:
                res = await self._shell(h, payload, interpret_post, phase=None, tool=tool)
                self._log_ignored("PostToolUse hook", h.command, res, h.effective_timeout_ms)
                take(res)
        for p in self._py[HookEvent.POST_TOOL_USE]:
            if not p.matches(tool):
                continue
            args = {
                "tool": tool,
                "input": input,
                "result": result,
                "is_error": is_error,
                "tool_iterations": tool_iterations,
            }
            res = await self._python(p, args)
            self._log_ignored("PostToolUse hook", p.name, res, None)
            take(res)
        if observations and self._convergence_file is not None:
            try:
                append_observations(self._convergence_file, observations)
            except OSError as exc:
                self._log(
                    f"warning: could not record convergence signal in "
                    f"{self._convergence_file}: {exc.strerror or exc}"
                )
        return first if first is not None else Continue()

    async def stop(
        self, *, reason: ExitReason, tool_iterations: int, total_tokens: int
    ) -> str | None:
        """Shell Stop hooks observe; the first Python ``continue`` returns the next prompt."""
        if self._stop:
            payload = _encode(
                stop_payload(
                    reason=str(reason), tool_iterations=tool_iterations,
                    total_tokens=total_tokens, cwd=self._cwd,
                )
            )  # fmt: skip
            for h in self._stop:
                res = await self._shell(h, payload, interpret_stop, phase=None, tool=None)
                self._log_ignored("Stop hook", h.command, res, h.effective_timeout_ms)
        for p in self._py[HookEvent.STOP]:
            args = {
                "reason": reason,
                "tool_iterations": tool_iterations,
                "total_tokens": total_tokens,
            }
            res = await self._python(p, args)
            self._log_ignored("Stop hook", p.name, res, None)
            if res.prompt is not None:
                return res.prompt
            if res.outcome == "stop":
                return None
        return None


def _jsonl_writer(path: Path, log: Callable[[str], None]) -> AuditSink:
    """Append each record as one JSON line; a write failure is a warning, logged once."""
    warned = False

    def write(record: dict[str, Any]) -> None:
        nonlocal warned
        line = json.dumps(record, ensure_ascii=False, default=str) + "\n"
        try:
            append_line(path, line)
        except OSError as exc:
            if not warned:
                warned = True
                log(f"warning: cannot write hook audit log {path}: {exc.strerror or exc}")

    return write


def build_pipeline(
    *,
    project_dir: Path,
    hooks_file: Path | None = None,
    python_hooks: Sequence[Hook] = (),
    audit_path: Path | None = None,
    log: Callable[[str], None],
) -> HookPipeline:
    """Load hooks.toml (default ``project_dir/.forgeflare/hooks.toml``) and build the pipeline.

    Returns :class:`NoHooks` when the file is missing (or lists no hooks) and there are no
    Python hooks: then no hook work happens at all. Raises
    :class:`~forgeflare.hooks.HookConfigError` for a malformed file.
    """
    path = hooks_file if hooks_file is not None else project_dir / HOOKS_RELPATH
    loaded = load_hooks_file(path)
    shell = loaded.hooks if loaded is not None else []
    if not shell and not python_hooks:
        return NoHooks()
    return HookDispatcher(
        project_dir=project_dir,
        shell_hooks=shell,
        python_hooks=python_hooks,
        log=log,
        audit=_jsonl_writer(audit_path, log) if audit_path is not None else None,
        convergence_file=convergence_path(project_dir),
    )
