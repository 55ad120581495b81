"""The loop's delivery, built alone over real git: the checkpoint commits what the agent
left, the failures' streak ends the loop, the claim's fate is kept for the hooks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from forgeflare.supervisor import IterationRecord, LoopConfig
from forgeflare.supervisor.evidence import (
    ContinueLoop,
    Finish,
    FinishType,
    Streaks,
    Verdict,
    WaitStreaks,
)
from forgeflare.supervisor.records import CheckpointRecord, ClaimRecord
from forgeflare.supervisor.run import LoopDelivery
from forgeflare.supervisor.run._checkpoint import CLAIM_REASON_FILE
from loop_support import Shown, loop_setup, opened_book
from project_support import git, new_repo


async def _delivery(project: Path, config: dict[str, Any] | None = None) -> LoopDelivery:
    setup = loop_setup(project, config=config)
    delivery = LoopDelivery(setup, opened_book(setup))
    await delivery.start()
    return delivery


async def test_outside_git_nothing_is_checkpointed(tmp_path: Path) -> None:
    delivery = await _delivery(tmp_path / "p")
    assert delivery.git_repo is False
    assert await delivery.snapshot() is None
    done = await delivery.checkpoint(1, 0.0)
    assert done.record.skipped == "not a git repository"


async def test_the_checkpoint_commits_what_the_agent_left(tmp_path: Path) -> None:
    project = new_repo(tmp_path / "p")
    delivery = await _delivery(project)
    (project / "notes.txt").write_text("work\n")
    done = await delivery.checkpoint(3, 0.0)
    assert done.record.sha == git(project, "rev-parse", "HEAD")
    message = git(project, "log", "-1", "--format=%B")
    assert "forgeflare: checkpoint after iteration 3" in message
    assert f"Forgeflare-Run: {delivery.book.record.run_id}" in message
    assert await delivery.dirty_paths() == []


async def test_checkpoint_off_leaves_the_work_as_it_is(tmp_path: Path) -> None:
    project = new_repo(tmp_path / "p")
    delivery = await _delivery(project, {"fresher": {"checkpoint": "off"}})
    (project / "notes.txt").write_text("work\n")
    done = await delivery.checkpoint(1, 0.0)
    assert done.record.skipped == "checkpoint = off"
    assert await delivery.dirty_paths() == ["notes.txt"]


async def test_no_identity_commits_as_forgeflare(tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    git(project, "init", "-q", "-b", "main")
    shown = Shown()
    setup = loop_setup(project, shown=shown, env={"GIT_CONFIG_NOSYSTEM": "1"})
    delivery = LoopDelivery(setup, opened_book(setup))
    await delivery.start()
    await delivery.delivery_banner(LoopConfig().backend())
    assert delivery.git_identity["GIT_AUTHOR_NAME"] == "forgeflare"
    assert "git has no identity here" in shown.text


def _failed(number: int) -> IterationRecord:
    return IterationRecord(
        number=number,
        started_at="2026-01-01T00:00:00Z",
        checkpoint=CheckpointRecord(failed="error: cannot lock ref"),
    )


@pytest.mark.parametrize(("failures", "finishes"), [(1, False), (2, True)])
async def test_failed_checkpoints_in_a_row_end_the_loop(
    tmp_path: Path, failures: int, finishes: bool
) -> None:
    delivery = await _delivery(tmp_path / "p")
    for number in range(1, failures + 1):
        delivery.count(_failed(number))
    go_on = Verdict(ContinueLoop(), Streaks(), WaitStreaks())
    action = delivery.delivery_rules(go_on).action
    assert (isinstance(action, Finish) and action.type is FinishType.UNDELIVERED) is finishes
    delivery.count(IterationRecord(number=9, started_at="2026-01-01T00:00:00Z"))
    assert delivery.checkpoint_failures == 0


async def test_a_refused_claim_is_kept_for_the_hooks(tmp_path: Path) -> None:
    delivery = await _delivery(tmp_path / "p")
    reason_file = delivery.book.store.dir / CLAIM_REASON_FILE
    delivery.note_claim(ClaimRecord(by="signal", accepted=False, rejected_by="gate", why="red"))
    assert (delivery.last_claim, reason_file.read_text()) == ("refused", "red\n")
    delivery.note_claim(ClaimRecord(by="signal", accepted=True))
    assert (delivery.last_claim, reason_file.read_text()) == ("accepted", "")
