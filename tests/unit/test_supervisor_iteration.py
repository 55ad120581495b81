"""One iteration, built alone: a real agent process gets its prompt and the run's variables,
its output is logged, and git and the convergence file are read into its record."""

from __future__ import annotations

import sys
from pathlib import Path

from forgeflare.supervisor import IterationRecord
from forgeflare.supervisor.run import (
    AgentSwitching,
    HookContext,
    IterationRunner,
    LoopDelivery,
    is_fresh,
)
from loop_support import Shown, loop_setup, opened_book
from project_support import git, new_repo

AGENT = """
import os, sys
prompt = sys.stdin.read()
open("prompt.txt", "w").write(prompt)
open("iteration.txt", "w").write(os.environ["FRESHER_ITERATION"])
print("agent says hello", flush=True)
sys.exit(int(os.environ.get("AGENT_EXIT", "0")))
"""


async def _runner(project: Path, shown: Shown) -> IterationRunner:
    (project.parent / "agent.py").write_text(AGENT)
    config = {
        "agent": {"command": f"{sys.executable} {project.parent / 'agent.py'}"},
        "security": {"sandbox": "off"},
    }
    setup = loop_setup(project, config=config, shown=shown)
    book = opened_book(setup)
    delivery = LoopDelivery(setup, book)
    await delivery.start()
    runner = IterationRunner(setup, book, agent=AgentSwitching(setup, book), delivery=delivery)
    await runner.choose_sandbox()
    return runner


def _context(runner: IterationRunner, number: int) -> HookContext:
    setup = runner.setup
    return HookContext(
        mode="building",
        max_iterations=0,
        project_dir=setup.project,
        log_dir=runner.book.store.dir,
        started_at="2026-01-01T00:00:00Z",
        plan_file=setup.project / "IMPLEMENTATION_PLAN.md",
        spec_dir=setup.project / "specs",
        run_id=runner.book.record.run_id,  # the marker the loop ends leftovers by
        iteration=number,
    )


async def test_an_iteration_runs_its_agent_and_reads_what_it_did(tmp_path: Path) -> None:
    project = new_repo(tmp_path / "p")
    shown = Shown()
    runner = await _runner(project, shown)
    it, outcome = await runner.run_agent(
        2, context=_context(runner, 2), preamble="# first this\n\n"
    )
    prompt = (project / "prompt.txt").read_text()
    assert prompt.startswith("# first this\n\n")
    assert (project / "iteration.txt").read_text() == "2"
    assert "agent says hello" in (runner.book.store.dir / it.log).read_text()
    assert (it.number, it.exit_code, outcome.exit_code) == (2, 0, 0)
    # The agent left files: the checkpoint committed them, so the iteration counts a commit.
    assert it.commits == 1
    assert outcome.git_changed is True
    assert runner.git_last is not None
    assert runner.git_last.head == git(project, "rev-parse", "HEAD")
    assert (runner.last_exit, runner.last_duration) == (0, it.duration)


async def test_a_failing_agent_is_recorded_with_its_exit(tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    runner = await _runner(project, Shown())
    setup = runner.setup
    failing = loop_setup(project, config=setup.cfg.model_dump(), env={"AGENT_EXIT": "4"})
    runner = IterationRunner(
        failing,
        runner.book,
        agent=AgentSwitching(failing, runner.book),
        delivery=runner.delivery,
    )
    it, outcome = await runner.run_agent(1, context=_context(runner, 1))
    assert (it.exit_code, outcome.exit_code) == (4, 4)
    assert outcome.git_changed is None  # no git here
    assert runner.last_exit == 4


def test_resume_takes_the_last_agent_run_s_exit(tmp_path: Path) -> None:
    setup = loop_setup(tmp_path / "p")
    book = opened_book(setup)
    runner = IterationRunner(
        setup, book, agent=AgentSwitching(setup, book), delivery=LoopDelivery(setup, book)
    )
    rows = [
        IterationRecord(number=1, started_at="t", exit_code=3, duration=2.0),
        IterationRecord(number=2, started_at="t", skipped=True),
    ]
    runner.resume_from(rows)
    assert (runner.last_exit, runner.last_duration) == (3, 2.0)


def test_only_a_file_written_during_the_iteration_is_fresh() -> None:
    assert is_fresh(None, (1, 2, 3))
    assert is_fresh((1, 2, 3), (1, 2, 4))
    assert not is_fresh((1, 2, 3), (1, 2, 3))
    assert not is_fresh((1, 2, 3), None)


def test_a_skip_is_a_row_and_an_outcome_without_an_agent(tmp_path: Path) -> None:
    setup = loop_setup(tmp_path / "p", config={"fresher": {"mode": "planning"}})
    (setup.project / "IMPLEMENTATION_PLAN.md").write_text("- [ ] one\n- [x] two\n")
    book = opened_book(setup)
    runner = IterationRunner(
        setup, book, agent=AgentSwitching(setup, book), delivery=LoopDelivery(setup, book)
    )
    it, outcome = runner.skip(4)
    assert (it.number, it.skipped, it.plan_unchecked) == (4, True, 1)
    assert (outcome.mode, outcome.skipped, outcome.plan_unchecked) == ("planning", True, 1)
