"""The run's records as the loop keeps them: its store and record, its active time, why it is
ending, and a records failure held until its iteration is recorded.

The loop opens (or resumes) the run and hands it to :meth:`RunBook.begin`; from then on every
part writes the run through this book.
"""

from __future__ import annotations

import time
from typing import Any

from forgeflare.supervisor.records._records import IterationRecord, RunRecord, RunStore
from forgeflare.supervisor.run._setup import LoopSetup

__all__ = ["RunBook"]


class RunBook:
    """The run's store and record, and what the loop knows of the run as a whole."""

    store: RunStore
    record: RunRecord

    def __init__(self, setup: LoopSetup, *, t0: float | None = None) -> None:
        self.setup = setup
        self.t0 = time.monotonic() if t0 is None else t0
        """When this supervisor started the run (``time.monotonic``)."""
        self.base_active = 0.0
        """Active seconds of the run before this supervisor (a resumed run's)."""
        self.finishing = False
        """Set once the loop is finishing: a records failure then no longer stops anything."""
        self.finish_reason: str | None = None
        self.records_failure: Exception | None = None
        """A write that failed during the agent: raised once its iteration is recorded."""

    @property
    def opened(self) -> bool:
        """Whether the run has its store and record yet."""
        return hasattr(self, "record")

    def begin(self, store: RunStore, record: RunRecord) -> None:
        """Keep the opened (or resumed) run; its active time so far counts on."""
        self.store, self.record = store, record
        self.base_active = record.totals.active_seconds

    def elapsed(self) -> float:
        """Active seconds of the run so far."""
        return self.base_active + time.monotonic() - self.t0

    def save(self) -> None:
        """Write run.json with the active time so far."""
        self.record.totals.active_seconds = round(self.elapsed(), 3)
        self.store.save(self.record)

    def say_why(self, reason: str | None) -> None:
        """Why the run is ending (``None``: the finish type's own words)."""
        self.finish_reason = reason

    def start_finishing(self) -> None:
        """From now on a records failure no longer stops anything."""
        self.finishing = True

    def hold_failure(self, failure: Exception | None) -> None:
        """A write that failed while the agent ran: raised once its iteration is recorded."""
        self.records_failure = failure

    def finish_iteration(self, it: IterationRecord, decision: str, *, counted: bool) -> None:
        """Record iteration ``it`` with the verdict's ``decision``."""
        display = self.setup.display
        it.decision = decision
        rec = self.record
        rec.add_iteration(it, counted=counted)
        if it.cost_usd is None and it.tokens.total and rec.totals.cost_unknown == 1:
            display.warn(
                f"iteration {it.number}: cost unknown (no price for model "
                f"{it.model or self.setup.cfg.fresher.model or '?'}); tokens are recorded"
            )
        display.spent = rec.totals.cost_usd
        self.save()
        self.store.event("iteration", **it.model_dump(exclude={"observations"}))
        if self.records_failure is not None:
            failure, self.records_failure = self.records_failure, None
            raise failure

    def summary(self) -> dict[str, Any]:
        """The run as notifications tell it."""
        rec = self.record
        return {
            "run_id": rec.run_id,
            "project_dir": rec.project_dir,
            "mode": rec.mode,
            "started_at": rec.started_at,
            "finished_at": rec.finished_at,
            "finish_type": rec.finish_type,
            "finish_reason": rec.finish_reason,
            "exit_code": rec.exit_code,
            "question": rec.question,
            "totals": {
                **rec.totals.model_dump(),
                "duration": round(self.elapsed(), 1),
            },
            "run_dir": str(self.store.dir),
        }
