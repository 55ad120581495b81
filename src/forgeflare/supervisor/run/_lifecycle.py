"""fresher lifecycle hooks: ``started``, ``next_iteration``, ``finished`` (lifecycle spec).

A hook is an executable file in ``.fresher/hooks/``. A hook file that is not executable is
warned about and skipped; ``custom/`` is never run by the supervisor (main hooks call those
scripts themselves). Exit status conventions (§3.4): 0 success, 1 warning (``next_iteration``:
skip this iteration), 2 abort (finish type ``hook_abort``), 3+ error (logged, the loop goes on),
124 timeout (the hook's process group is killed after ``[hooks] timeout``; logged, goes on).
With ``fail_behavior = "abort"`` an error or a timeout aborts too.
"""

from __future__ import annotations

import os
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Literal

from forgeflare.supervisor.agents._agentproc import StopControl, exit_status, supervise

__all__ = [
    "HookContext",
    "HookName",
    "HookStatus",
    "LifecycleResult",
    "classify_exit",
    "hook_env",
    "hook_words",
    "run_lifecycle_hook",
]

HookName = Literal["started", "next_iteration", "finished"]

_HOOK_MARKER = "FORGEFLARE_HOOK_ID"
"""A fresh token per hook run: what the hook starts is ended with it, however it detached."""


class HookStatus(StrEnum):
    """What a hook run amounted to."""

    OK = "ok"
    WARNING = "warning"
    ABORT = "abort"
    ERROR = "error"
    TIMEOUT = "timeout"
    MISSING = "missing"
    NOT_EXECUTABLE = "not_executable"
    DISABLED = "disabled"


def classify_exit(code: int, *, fail_behavior: str = "continue") -> HookStatus:
    """The §3.4 meaning of a hook's exit status (124 is a timeout)."""
    if code == 0:
        return HookStatus.OK
    if code == 1:
        return HookStatus.WARNING
    if code == 2:
        return HookStatus.ABORT
    status = HookStatus.TIMEOUT if code == 124 else HookStatus.ERROR
    return HookStatus.ABORT if fail_behavior == "abort" else status


@dataclass(frozen=True, slots=True)
class HookContext:
    """Everything the hooks' environment is made of (§3.1, §3.2)."""

    mode: str
    max_iterations: int
    project_dir: Path
    log_dir: Path
    started_at: str
    plan_file: Path
    spec_dir: Path
    run_id: str
    iteration: int = 0
    last_exit_code: int = 0
    last_duration: float = 0.0
    commits_made: int = 0
    finish_type: str = ""
    finish_reason: str = ""
    last_gate: str = ""
    """``passed`` or ``failed``: how the gate ended the last time it ran in this run."""
    total_iterations: int = 0
    duration: float = 0.0
    last_claim: str = "none"
    """``none`` / ``accepted`` / ``refused``: the last completion claim's fate."""
    last_claim_reason_file: Path | None = None
    """A file holding why the last claim was refused (empty until one is)."""


def _secs(value: float) -> str:
    return str(round(value))


def hook_env(name: str, ctx: HookContext) -> dict[str, str]:
    """The ``FRESHER_*`` variables for hook ``name`` (``"agent"`` for the agent process).

    Every hook gets the §3.1 variables plus ``FRESHER_PLAN_FILE`` / ``FRESHER_SPEC_DIR`` and
    ``FRESHER_RUN_ID``; ``next_iteration`` and ``finished`` add theirs (§3.2). Before the first
    iteration, ``FRESHER_LAST_EXIT_CODE`` and ``FRESHER_LAST_DURATION`` are ``0``.
    """
    env = {
        "FRESHER_MODE": ctx.mode,
        "FRESHER_MAX_ITERATIONS": str(ctx.max_iterations),
        "FRESHER_PROJECT_DIR": str(ctx.project_dir),
        "FRESHER_LOG_DIR": str(ctx.log_dir),
        "FRESHER_STARTED_AT": ctx.started_at,
        "FRESHER_PLAN_FILE": str(ctx.plan_file),
        "FRESHER_SPEC_DIR": str(ctx.spec_dir),
        "FRESHER_RUN_ID": ctx.run_id,
    }
    if name != "started":
        env["FRESHER_ITERATION"] = str(ctx.iteration)
    if name == "next_iteration":
        env["FRESHER_LAST_EXIT_CODE"] = str(ctx.last_exit_code)
        env["FRESHER_LAST_DURATION"] = _secs(ctx.last_duration)
        env["FRESHER_COMMITS_MADE"] = str(ctx.commits_made)
        env["FRESHER_LAST_GATE"] = ctx.last_gate
    if name in ("next_iteration", "finished"):
        env["FRESHER_LAST_CLAIM"] = ctx.last_claim
        env["FRESHER_LAST_CLAIM_REASON_FILE"] = str(ctx.last_claim_reason_file or "")
    if name == "finished":
        env["FRESHER_FINISH_TYPE"] = ctx.finish_type
        env["FRESHER_FINISH_REASON"] = ctx.finish_reason
        env["FRESHER_TOTAL_ITERATIONS"] = str(ctx.total_iterations)
        env["FRESHER_TOTAL_COMMITS"] = str(ctx.commits_made)
        env["FRESHER_DURATION"] = _secs(ctx.duration)
    return env


@dataclass(frozen=True, slots=True)
class LifecycleResult:
    """One hook run (or non-run): status, exit status (124 on timeout), seconds taken."""

    name: str
    status: HookStatus
    exit_code: int | None = None
    duration: float = 0.0


async def run_lifecycle_hook(
    name: HookName,
    *,
    hooks_dir: Path,
    cwd: Path,
    env: Mapping[str, str],
    timeout: float,
    fail_behavior: str = "continue",
    stop: StopControl | None = None,
    on_line: Callable[[bytes], None] = lambda _line: None,
) -> LifecycleResult:
    """Run hook ``name`` if it exists and is executable; never raises for a hook's failure.

    ``stop`` ends the hook like the agent (TERM, grace, KILL); its exit status then counts.
    """
    path = hooks_dir / name
    if not path.is_file():
        return LifecycleResult(name, HookStatus.MISSING)
    if not os.access(path, os.X_OK):
        return LifecycleResult(name, HookStatus.NOT_EXECUTABLE)
    started = time.monotonic()
    try:
        token = secrets.token_hex(8)
        result = await supervise(
            [str(path.resolve())],
            cwd=cwd,
            env={**env, _HOOK_MARKER: token},
            marker=(_HOOK_MARKER, token),
            timeout=timeout,
            grace=min(2.0, max(timeout, 0.1)),
            stop=stop,
            on_line=on_line,
        )
    except OSError:
        # Not runnable although executable (bad interpreter line): an error, like exit 126.
        code = 126
        return LifecycleResult(
            name, classify_exit(code, fail_behavior=fail_behavior), code, time.monotonic() - started
        )
    code = exit_status(result)
    return LifecycleResult(
        name, classify_exit(code, fail_behavior=fail_behavior), code, result.duration
    )


_HOOK_SAYS: dict[HookStatus, tuple[str, str]] = {
    HookStatus.NOT_EXECUTABLE: ("warn", "exists but is not executable (skipped)"),
    HookStatus.OK: ("info", "completed successfully"),
    HookStatus.WARNING: ("warn", "returned warning (exit 1)"),
    HookStatus.ABORT: ("error", "requested abort (exit {code})"),
    HookStatus.TIMEOUT: ("error", "timed out after {timeout:g}s (exit 124)"),
    HookStatus.ERROR: ("error", "failed with exit code {code}"),
}
"""What the loop says of a lifecycle hook's run, by its status: (display level, words)."""


def hook_words(result: LifecycleResult, timeout: float) -> tuple[str, str] | None:
    """What the loop says of a hook's run: (display level, line), or ``None`` for nothing."""
    said = _HOOK_SAYS.get(result.status)
    if said is None:
        return None
    level, words = said
    text = words.format(name=result.name, code=result.exit_code, timeout=timeout)
    return level, f"Hook {result.name} {text}"
