"""One step of the loop, built over parts built alone: the checks, the next_iteration hook,
the agent or a skip, the verdict and its record."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from forgeflare.supervisor import request_stop
from forgeflare.supervisor.evidence import FinishType
from forgeflare.supervisor.run import LoopParts, LoopStep
from loop_support import loop_setup, opened_book

AGENT = "import sys\nsys.stdin.read()\nprint('done')\n"


def _step(project: Path, **config: dict[str, Any]) -> LoopStep:
    (project.parent).mkdir(parents=True, exist_ok=True)
    (project.parent / "agent.py").write_text(AGENT)
    settings = {
        "agent": {"command": f"{sys.executable} {project.parent / 'agent.py'}"},
        "security": {"sandbox": "off"},
        **config,
    }
    setup = loop_setup(project, config=settings, env={"FORGEFLARE_TRUST": "1"})
    book = opened_book(setup)
    return LoopStep(setup, book, LoopParts.build(setup, book))


def test_the_hooks_see_what_the_parts_know(tmp_path: Path) -> None:
    step = _step(tmp_path / "p")
    step.parts.iteration.last_exit = 5
    ctx = step.context(iteration=3)
    assert (ctx.iteration, ctx.last_exit_code, ctx.last_claim) == (3, 5, "none")
    assert ctx.log_dir == step.book.store.dir
    assert step.context(finish_type="complete").finish_type == "complete"


async def test_a_stop_request_finishes_before_anything_runs(tmp_path: Path) -> None:
    step = _step(tmp_path / "p")
    request_stop(step.setup.project)
    assert await step.iterate() is FinishType.STOPPED
    assert step.book.record.iterations == []


async def test_a_skip_by_next_iteration_is_a_row(tmp_path: Path) -> None:
    project = tmp_path / "p"
    hooks = project / ".fresher" / "hooks"
    hooks.mkdir(parents=True)
    (hooks / "next_iteration").write_text("#!/bin/sh\nexit 1\n")
    (hooks / "next_iteration").chmod(0o755)
    step = _step(project)
    assert await step.iterate() is None
    [row] = step.book.record.iterations
    assert row.skipped
    assert row.next_iteration_hook is not None


async def test_an_agent_step_is_recorded_and_the_loop_goes_on(tmp_path: Path) -> None:
    step = _step(tmp_path / "p", fresher={"max_iterations": 2})
    assert await step.iterate() is None
    assert await step.iterate() is FinishType.MAX_ITERATIONS
    rows = step.book.record.iterations
    assert [(row.number, row.exit_code, row.decision) for row in rows] == [
        (1, 0, "continue"),
        (2, 0, "max_iterations"),
    ]
