"""The fleet's own record: one JSON file per fleet, replaced atomically on every change.

It lives beside the fleet file in ``.forgeflare-fleet/<name>/fleet.json`` with the fleet's
worktrees and clones, and says for each loop where it runs, which runs it made, how it ended and
whether it landed. The fleet supervisor's pid and start time make ``--resume`` refuse a live
fleet and end what a killed one left running.
"""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from forgeflare._errors import ConfigError
from forgeflare.disk import atomic_write_text, read_json_model
from forgeflare.fleet._land import LandOutcome

__all__ = [
    "FleetRecord",
    "LoopRecord",
    "LoopStatus",
    "ended_without_finish",
    "load_record",
    "save_record",
    "state_dir",
]

LoopStatus = Literal[
    "pending", "running", "finished", "landing", LandOutcome, "not_landed", "failed", "stopped"
]


def ended_without_finish(exit_code: int, *, budget_hit: bool) -> tuple[LoopStatus, str]:
    """The status and reason of a loop whose process ended before its run recorded a finish
    (pure; ``exit_code`` is -N after signal N). The fleet's budget TERMs every running loop
    (then KILLs after the grace); one still starting has no handler yet and dies of it: the
    fleet stopped that loop, it did not fail."""
    if budget_hit and exit_code in (-signal.SIGTERM, -signal.SIGKILL):
        return "stopped", (
            f"the fleet budget was spent; the loop ended before it recorded a finish "
            f"(exit {exit_code})"
        )
    return "failed", f"forgeflare loop exited {exit_code}"


class LoopRecord(BaseModel):
    """One loop of the fleet."""

    model_config = ConfigDict(defer_build=True)

    name: str
    status: LoopStatus = "pending"
    branch: str = ""
    worktree: str = ""
    repo: str = ""
    runs: list[str] = Field(default_factory=list)
    """Run ids of this loop's ``forgeflare loop`` runs, oldest first."""
    pid: int | None = None
    pid_started: float | None = None
    finish_type: str | None = None
    exit_code: int | None = None
    commits: int = 0
    cost_usd: float | None = None
    tokens: int = 0
    landing: str | None = None
    """The marker of the landing in progress (its gate carries it), saved before the landing
    starts: a resumed fleet ends that gate and lands the loop again; ``None`` when none is."""
    land_status: str | None = None
    reason: str = ""
    question: str | None = None
    """The open question its newest run finished ``blocked`` on (``forgeflare answer``)."""


class FleetRecord(BaseModel):
    """``fleet.json``."""

    model_config = ConfigDict(defer_build=True)

    name: str
    fleet_file: str
    started_at: str
    finished_at: str | None = None
    pid: int | None = None
    pid_started: float | None = None
    loops: list[LoopRecord] = Field(default_factory=list)
    spent_usd: float | None = 0.0
    """What the loops spent; ``None`` when they used tokens at no known price."""
    budget_hit: bool = False
    window_until: str | None = None
    attempt: int = 1
    """Which run of this fleet file this is (``fleet run --again`` starts the next one; the
    record of run N is kept as ``fleet.N.json``, its worktrees and branches stay)."""

    def loop(self, name: str) -> LoopRecord:
        return next(loop for loop in self.loops if loop.name == name)


def state_dir(fleet_file: Path, name: str) -> Path:
    """``.forgeflare-fleet/<name>/`` beside the fleet file."""
    return fleet_file.resolve().parent / ".forgeflare-fleet" / name


def load_record(path: Path) -> FleetRecord | None:
    """The fleet record, or ``None`` when there is none yet."""
    return read_json_model(
        path,
        FleetRecord,
        ConfigError,
        cannot_read="cannot read the fleet record",
        invalid="not a readable fleet record",
    )


def save_record(path: Path, record: FleetRecord) -> None:
    """Replace ``fleet.json`` atomically."""
    atomic_write_text(path, record.model_dump_json(indent=2) + "\n")
