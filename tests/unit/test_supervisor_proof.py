"""The loop's evidence, built alone: the gate runs for real (its log kept), a claim is held
against it, progress is judged against the last iteration's measures."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from forgeflare.supervisor import IterationRecord
from forgeflare.supervisor.evidence import IterationOutcome
from forgeflare.supervisor.run import LoopChecks, LoopDelivery, LoopProof, LoopWaits
from loop_support import loop_setup, opened_book
from project_support import new_repo


async def _evidence(project: Path, gate: str = "", **limits: Any) -> LoopProof:
    config = {"limits": {"gate": gate, **limits}, "security": {"sandbox": "off"}}
    setup = loop_setup(project, config=config, env={"FORGEFLARE_TRUST": "1"})
    book = opened_book(setup)
    delivery = LoopDelivery(setup, book)
    await delivery.start()
    return LoopProof(
        setup,
        book,
        checks=LoopChecks(setup, book),
        delivery=delivery,
        waits=LoopWaits(setup, book),
        task=lambda: "the task",
    )


def _row(number: int, **fields: Any) -> IterationRecord:
    return IterationRecord(number=number, started_at="2026-01-01T00:00:00Z", **fields)


async def test_the_gate_runs_and_keeps_its_log(tmp_path: Path) -> None:
    evidence = await _evidence(tmp_path / "p", gate="echo checking; exit 3")
    done = await evidence.run_gate(2)
    assert (done.passed, done.exit_code) == (False, 3)
    assert "checking" in (evidence.book.store.dir / "gate-002.log").read_text()


async def test_a_claim_is_refused_on_a_red_gate(tmp_path: Path) -> None:
    evidence = await _evidence(tmp_path / "p", gate="exit 1")
    it = _row(1)
    held, preamble = await evidence.check_claim(it, "signal", None)
    assert held is False
    assert it.claim is not None
    assert it.claim.rejected_by == "gate"
    assert evidence.last_gate == "failed"
    assert "refused" in preamble or "gate" in preamble


async def test_a_claim_holds_on_a_green_gate(tmp_path: Path) -> None:
    evidence = await _evidence(new_repo(tmp_path / "p"), gate="true")
    it = _row(1)
    assert await evidence.check_claim(it, "signal", None) == (True, "")
    assert it.claim is not None
    assert it.claim.accepted
    assert evidence.last_gate == "passed"


async def test_an_iteration_without_change_is_no_progress(tmp_path: Path) -> None:
    evidence = await _evidence(tmp_path / "p", stall_after=3)
    await evidence.baseline()
    outcome = IterationOutcome(plan_unchecked=2)
    for number in (1, 2):
        it = _row(number, plan_unchecked=2)
        await evidence.measure(it, outcome, None, None)
        assert it.progress is not None
    assert evidence.no_progress == 2
    ticked = _row(3, plan_unchecked=1)
    await evidence.measure(ticked, IterationOutcome(plan_unchecked=1), None, None)
    assert ticked.progress is not None
    assert ticked.progress.made
    assert evidence.no_progress == 0


async def test_without_the_stall_rule_nothing_is_measured(tmp_path: Path) -> None:
    evidence = await _evidence(tmp_path / "p", stall_after=0)
    it = _row(1, plan_unchecked=2)
    await evidence.measure(it, IterationOutcome(plan_unchecked=2), None, None)
    assert it.progress is None
    assert await evidence.stall_gate(it, IterationOutcome()) is None
