"""What the loop checks before it runs anything of the project: trust, the limits between
iterations, and the lifecycle hooks themselves.

Trust is checked again before every hook, gate and iteration (the agent may have rewritten a
hook meanwhile); the rules between iterations are :func:`~._finish.before_iteration`'s (pure).
"""

from __future__ import annotations

import os
from datetime import UTC, datetime

import trio

from forgeflare._gitguard import changes, describe_changes, git_fingerprint
from forgeflare._outputcap import LineCap
from forgeflare._secrets import child_environment
from forgeflare.supervisor._finish import Between, FinishType, before_iteration
from forgeflare.supervisor._lifecycle import (
    HookContext,
    HookName,
    HookStatus,
    LifecycleResult,
    hook_env,
    hook_words,
    run_lifecycle_hook,
)
from forgeflare.supervisor._loopstate import LoopState
from forgeflare.supervisor._records import HookRecord, RecordError
from forgeflare.supervisor._stop import clear_stop, stop_requested
from forgeflare.supervisor._trust import loop_trust_items
from forgeflare.trust import TrustError, require_trust, trust_override

__all__ = ["LoopChecks", "hook_record"]

_HOOK_SWITCH = {
    "started": "started_enabled",
    "next_iteration": "next_iteration_enabled",
    "finished": "finished_enabled",
}


def hook_record(result: LifecycleResult, iteration: int) -> HookRecord:
    """A lifecycle hook's run as ``run.json`` keeps it."""
    return HookRecord(
        name=result.name,
        status=result.status.value,
        exit_code=result.exit_code,
        duration=round(result.duration, 3),
        iteration=iteration,
    )


class LoopChecks(LoopState):
    """The checking part of the loop (a base of the loop; its state is :class:`LoopState`)."""

    async def hook(self, name: HookName, ctx: HookContext) -> LifecycleResult:
        hooks = self.cfg.hooks
        hooks_dir = self.project / self.cfg.paths.hooks_dir
        refusal = None
        if not hooks.enabled or not getattr(hooks, _HOOK_SWITCH[name]):
            result = LifecycleResult(name, HookStatus.DISABLED)
        elif (refusal := await self.untrusted_now()) is not None:
            # Checked before every call: the agent may have rewritten the hook meanwhile.
            result = LifecycleResult(name, HookStatus.ABORT)
        else:
            path = hooks_dir / name
            if path.is_file() and os.access(path, os.X_OK):
                self.display.info(f"Running hook: {name}")
            # A hook printing without end must not fill hooks.log: head and tail are kept.
            kept = LineCap(lambda line: self.display.output(line, prefix=f"[{name}] "), overhead=40)
            result = await run_lifecycle_hook(
                name,
                hooks_dir=hooks_dir,
                cwd=self.project,
                env={
                    **child_environment(self.opts.env, self.opts.pass_env),
                    **hook_env(name, ctx),
                    "PYTHONDONTWRITEBYTECODE": "1",  # no __pycache__ in the trusted hooks dir
                },
                timeout=hooks.timeout,
                fail_behavior=hooks.fail_behavior,
                stop=self.stop.escalated() if name == "finished" else self.stop,
                on_line=kept,
            )
            kept.close()
        if refusal is None and (said := hook_words(result, hooks.timeout)) is not None:
            getattr(self.display, said[0])(said[1])
        if result.status is not HookStatus.MISSING:
            try:
                self.store.event(
                    "hook",
                    hook=name,
                    status=result.status.value,
                    exit_code=result.exit_code,
                    duration=round(result.duration, 3),
                    iteration=ctx.iteration,
                )
            except RecordError:
                if not self.finishing:
                    raise
        return result

    async def before_iteration(self) -> FinishType | None:
        """Checks between iterations (the rules are :func:`before_iteration`'s)."""
        trust_error: str | None = None
        try:
            await trio.to_thread.run_sync(self.check_trust)
        except TrustError as exc:
            trust_error = str(exc)
        verdict = before_iteration(
            Between(
                limits=self.limits,
                counted=self.record.counted_iterations,
                elapsed=self.elapsed(),
                stopped=self.stop.stop.is_set(),
                stop_requested=stop_requested(self.project),
                spent=self.record.totals.cost_usd,
                trust_error=trust_error,
                now=datetime.now(UTC),
            )
        )
        if verdict is None:
            return None
        if verdict.type is FinishType.STOPPED:
            clear_stop(self.project)
        elif verdict.type is FinishType.HOOK_ABORT and trust_error is not None:
            self.say_refusal(trust_error)
        if verdict.reason is not None:
            self.finish_reason = verdict.reason
        return verdict.type

    def check_trust(self) -> None:
        """Raise TrustError when a project hook or command changed since the start."""
        self.check_git_internals()
        if trust_override(self.opts.env, self.opts.trust_project):
            return  # nothing to gather: everything is trusted
        now = loop_trust_items(self.project, self.cfg, project_command=self.opts.project_command)
        require_trust(self.project, now, self.opts.env, flag=self.opts.trust_project)

    async def untrusted_now(self) -> str | None:
        """The one refusal line when what the project runs is no longer trusted, else None."""
        try:
            await trio.to_thread.run_sync(self.check_trust)
        except TrustError as exc:
            self.say_refusal(str(exc))
            return str(exc)
        return None

    def check_git_internals(self) -> None:
        """Raise TrustError when what makes git run a program changed since the run's start
        (whatever the backend, boxed or not: ``_gitguard``)."""
        if self.git_start is None:
            return
        changed = changes(self.git_start, git_fingerprint(self.project))
        if changed:
            raise TrustError(describe_changes(changed))

    def say_refusal(self, line: str) -> None:
        """Print a trust refusal once (the finished hook is refused for the same reason)."""
        if line != self.refused:
            self.refused = line
            self.display.error(line)
