"""What the loop checks before it runs anything of the project: trust, the limits between
iterations, and the lifecycle hooks themselves.

Trust is checked again before every hook, gate and iteration (the agent may have rewritten a
hook meanwhile); the rules between iterations are :func:`~._finish.before_iteration`'s (pure).
"""

from __future__ import annotations

import os
from datetime import UTC, datetime

import trio

from forgeflare.platform import LineCap
from forgeflare.security import changes, child_environment, describe_changes, git_fingerprint
from forgeflare.supervisor.config._trust import loop_trust_items
from forgeflare.supervisor.evidence._finish import Between, FinishType, before_iteration
from forgeflare.supervisor.records._records import HookRecord, RecordError
from forgeflare.supervisor.run._lifecycle import (
    HookContext,
    HookName,
    HookStatus,
    LifecycleResult,
    hook_env,
    hook_words,
    run_lifecycle_hook,
)
from forgeflare.supervisor.run._runbook import RunBook
from forgeflare.supervisor.run._setup import LoopSetup
from forgeflare.supervisor.run._stop import clear_stop, stop_requested
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


class LoopChecks:
    """The loop's checks: trust (and git's internals) before anything of the project runs,
    the rules between iterations, and the lifecycle hooks."""

    def __init__(self, setup: LoopSetup, book: RunBook) -> None:
        self.setup = setup
        self.book = book
        self.git_start: dict[str, str] | None = None
        """What makes git run a program, at the run's start (``_gitguard``)."""
        self.refused = ""
        """The last trust refusal printed."""

    async def note_git_start(self) -> None:
        """Take what makes git run a program now: later changes are refused."""
        self.git_start = await trio.to_thread.run_sync(git_fingerprint, self.setup.project)

    async def hook(self, name: HookName, ctx: HookContext) -> LifecycleResult:
        hooks = self.setup.cfg.hooks
        hooks_dir = self.setup.project / self.setup.cfg.paths.hooks_dir
        refusal = None
        if not hooks.enabled or not getattr(hooks, _HOOK_SWITCH[name]):
            result = LifecycleResult(name, HookStatus.DISABLED)
        elif (refusal := await self.untrusted_now()) is not None:
            # Checked before every call: the agent may have rewritten the hook meanwhile.
            result = LifecycleResult(name, HookStatus.ABORT)
        else:
            path = hooks_dir / name
            if path.is_file() and os.access(path, os.X_OK):
                self.setup.display.info(f"Running hook: {name}")
            # A hook printing without end must not fill hooks.log: head and tail are kept.
            kept = LineCap(
                lambda line: self.setup.display.output(line, prefix=f"[{name}] "), overhead=40
            )
            result = await run_lifecycle_hook(
                name,
                hooks_dir=hooks_dir,
                cwd=self.setup.project,
                env={
                    **child_environment(self.setup.opts.env, self.setup.opts.pass_env),
                    **hook_env(name, ctx),
                    "PYTHONDONTWRITEBYTECODE": "1",  # no __pycache__ in the trusted hooks dir
                },
                timeout=hooks.timeout,
                fail_behavior=hooks.fail_behavior,
                stop=self.setup.stop.escalated() if name == "finished" else self.setup.stop,
                on_line=kept,
            )
            kept.close()
        if refusal is None and (said := hook_words(result, hooks.timeout)) is not None:
            getattr(self.setup.display, said[0])(said[1])
        if result.status is not HookStatus.MISSING:
            try:
                self.book.store.event(
                    "hook",
                    hook=name,
                    status=result.status.value,
                    exit_code=result.exit_code,
                    duration=round(result.duration, 3),
                    iteration=ctx.iteration,
                )
            except RecordError:
                if not self.book.finishing:
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
                limits=self.setup.limits,
                counted=self.book.record.counted_iterations,
                elapsed=self.book.elapsed(),
                stopped=self.setup.stop.stop.is_set(),
                stop_requested=stop_requested(self.setup.project),
                spent=self.book.record.totals.cost_usd,
                trust_error=trust_error,
                now=datetime.now(UTC),
            )
        )
        if verdict is None:
            return None
        if verdict.type is FinishType.STOPPED:
            clear_stop(self.setup.project)
        elif verdict.type is FinishType.HOOK_ABORT and trust_error is not None:
            self.say_refusal(trust_error)
        if verdict.reason is not None:
            self.book.say_why(verdict.reason)
        return verdict.type

    def check_trust(self) -> None:
        """Raise TrustError when a project hook or command changed since the start."""
        self.check_git_internals()
        if trust_override(self.setup.opts.env, self.setup.opts.trust_project):
            return  # nothing to gather: everything is trusted
        now = loop_trust_items(
            self.setup.project, self.setup.cfg, project_command=self.setup.opts.project_command
        )
        require_trust(
            self.setup.project, now, self.setup.opts.env, flag=self.setup.opts.trust_project
        )

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
        changed = changes(self.git_start, git_fingerprint(self.setup.project))
        if changed:
            raise TrustError(describe_changes(changed))

    def say_refusal(self, line: str) -> None:
        """Print a trust refusal once (the finished hook is refused for the same reason)."""
        if line != self.refused:
            self.refused = line
            self.setup.display.error(line)
