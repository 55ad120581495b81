"""The loop's checks, built alone: lifecycle hooks run for real, trust and git's internals
checked before anything of the project runs, the rules between iterations."""

from __future__ import annotations

import secrets
from pathlib import Path

from forgeflare.supervisor import IterationRecord, request_stop
from forgeflare.supervisor.evidence import FinishType
from forgeflare.supervisor.run import HookContext, HookStatus, LoopChecks, LoopSetup, stop_requested
from loop_support import Shown, loop_setup, opened_book
from project_support import git, new_repo

TRUSTED = {"FORGEFLARE_TRUST": "1"}


# A run id is the marker the loop ends leftover processes by, on the whole machine: one of
# its own for this module, not one a test running at once elsewhere shares.
_RUN = f"run-{secrets.token_hex(4)}"


def _context(setup: LoopSetup, iteration: int = 1) -> HookContext:
    return HookContext(
        mode="building",
        max_iterations=0,
        project_dir=setup.project,
        log_dir=setup.log_root,
        started_at="2026-01-01T00:00:00Z",
        plan_file=setup.project / "IMPLEMENTATION_PLAN.md",
        spec_dir=setup.project / "specs",
        run_id=_RUN,
        iteration=iteration,
    )


def _hook(project: Path, name: str, body: str) -> None:
    hooks = project / ".fresher" / "hooks"
    hooks.mkdir(parents=True, exist_ok=True)
    (hooks / name).write_text(f"#!/bin/sh\n{body}\n")
    (hooks / name).chmod(0o755)


async def test_a_trusted_hook_runs_with_the_run_s_environment(tmp_path: Path) -> None:
    project = tmp_path / "p"
    _hook(project, "next_iteration", 'echo "iteration $FRESHER_ITERATION" > seen.txt\nexit 1')
    setup = loop_setup(project, env=TRUSTED)
    checks = LoopChecks(setup, opened_book(setup))
    result = await checks.hook("next_iteration", _context(setup, iteration=4))
    assert result.status is HookStatus.WARNING  # exit 1: skip this iteration
    assert (project / "seen.txt").read_text() == "iteration 4\n"
    assert '"hook": "next_iteration"' in (checks.book.store.dir / "events.jsonl").read_text()


async def test_a_disabled_hook_does_not_run(tmp_path: Path) -> None:
    project = tmp_path / "p"
    _hook(project, "started", "touch ran.txt")
    setup = loop_setup(project, config={"hooks": {"enabled": False}}, env=TRUSTED)
    result = await LoopChecks(setup, opened_book(setup)).hook("started", _context(setup))
    assert result.status is HookStatus.DISABLED
    assert not (project / "ran.txt").exists()


async def test_an_untrusted_hook_is_refused_once(tmp_path: Path) -> None:
    project = tmp_path / "p"
    _hook(project, "started", "touch ran.txt")
    shown = Shown()
    setup = loop_setup(project, shown=shown)
    checks = LoopChecks(setup, opened_book(setup))
    first = await checks.hook("started", _context(setup))
    second = await checks.untrusted_now()
    assert first.status is HookStatus.ABORT
    assert second is not None
    assert checks.refused == second
    assert shown.text.count(second) == 1
    assert not (project / "ran.txt").exists()


async def test_git_internals_changed_since_the_start_are_refused(tmp_path: Path) -> None:
    project = new_repo(tmp_path / "p")
    setup = loop_setup(project, env=TRUSTED)
    checks = LoopChecks(setup, opened_book(setup))
    await checks.note_git_start()
    assert await checks.untrusted_now() is None
    git(project, "config", "core.hooksPath", "/tmp/elsewhere")
    refusal = await checks.untrusted_now()
    assert refusal is not None
    assert "core.hookspath" in refusal


async def test_a_stop_request_finishes_stopped_and_is_cleared(tmp_path: Path) -> None:
    setup = loop_setup(tmp_path / "p", env=TRUSTED)
    checks = LoopChecks(setup, opened_book(setup))
    assert await checks.before_iteration() is None
    request_stop(setup.project)
    assert await checks.before_iteration() is FinishType.STOPPED
    assert not stop_requested(setup.project)


async def test_the_iteration_limit_finishes_with_its_reason(tmp_path: Path) -> None:
    setup = loop_setup(tmp_path / "p", config={"fresher": {"max_iterations": 1}}, env=TRUSTED)
    book = opened_book(setup)
    book.finish_iteration(
        IterationRecord(number=1, started_at="2026-01-01T00:00:01Z"), "continue", counted=True
    )
    verdict = await LoopChecks(setup, book).before_iteration()
    assert verdict is FinishType.MAX_ITERATIONS
