"""The loop's state, declared once: what the loop's parts (its bases, each in its own module)
read and write, and the methods one part calls on another.

:class:`~._loop._Loop` sets every field when it starts (the run's record once it opens or
resumes the run); each part is a subclass of :class:`LoopState` that adds only behaviour.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from forgeflare._evidence import ClaimBy, GateRun, Measures
from forgeflare._gaterun import GateBox
from forgeflare._sandbox import SandboxChoice
from forgeflare.supervisor._agentproc import StopControl
from forgeflare.supervisor._config import LoopConfig
from forgeflare.supervisor._display import LoopDisplay
from forgeflare.supervisor._fallback import AgentSpec, Choice, Window
from forgeflare.supervisor._finish import FinishType, IterationOutcome, Limits
from forgeflare.supervisor._git import GitSnapshot
from forgeflare.supervisor._lifecycle import HookContext, HookName, LifecycleResult
from forgeflare.supervisor._notify import Notifier
from forgeflare.supervisor._options import LoopOptions
from forgeflare.supervisor._records import (
    ClaimRecord,
    IterationRecord,
    ReviewRecord,
    RunRecord,
    RunStore,
)
from forgeflare.supervisor._waits import WaitStreaks
from forgeflare.supervisor.backends import Backend

if TYPE_CHECKING:
    from forgeflare.supervisor._checkpoint import Delivered

__all__ = ["LoopState"]


class LoopState:
    """What the loop knows: its settings, its run, and what the last iterations left."""

    # The settings and the run.
    opts: LoopOptions
    cfg: LoopConfig
    display: LoopDisplay
    project: Path
    """The project directory, resolved."""
    log_root: Path
    """Where the runs' directories are (``[paths] log_dir``)."""
    store: RunStore
    record: RunRecord
    stop: StopControl
    limits: Limits
    notifier: Notifier
    time_scale: float
    """``FORGEFLARE_TIME_SCALE``: waits are this many times as long (tests set it small)."""
    base_active: float
    """Active seconds of the run before this supervisor (a resumed run's)."""
    t0: float
    """When this supervisor started the run (``time.monotonic``)."""

    # The agent: which one runs, and the ones it may switch to.
    backend: Backend
    profile: str
    """The ``[agent.profiles]`` profile of the current agent (empty: none)."""
    primary: AgentSpec
    fallbacks: list[AgentSpec]
    current: AgentSpec
    windows: dict[AgentSpec, Window]
    window_file: Path
    """The machine's store of usage windows, shared by its loops."""
    sandbox: SandboxChoice | None
    sandbox_env: dict[str, str]
    """The agent's sandbox variables, decided once at the start (empty: none)."""
    gate_box: GateBox | None = None
    """Where the gate and the reviewer's diff run, decided before either first runs (whatever
    the backend)."""
    gate_said: bool = False
    """Whether the banner said where the gate runs."""
    git_start: dict[str, str] | None = None
    """What makes git run a program, at the run's start (``_gitguard``)."""

    # What the last iterations left.
    git_repo: bool
    git_last: GitSnapshot | None
    last_exit: int
    last_duration: float
    last_gate: str
    """``passed`` / ``failed`` once the gate ran (FRESHER_LAST_GATE for next_iteration)."""
    last_tree: str | None
    """The tree of the last iteration's newest commit (``None``: no commit, or unknown)."""
    measures: Measures
    """What progress is measured against: the last iteration's plan, gate and tree."""
    seen_trees: set[str]
    no_progress: int
    preamble: str
    requests_left: int | None = None
    """What ``[limits] max_requests_per_hour`` leaves the next agent (``None``: no limit)."""
    """What the next iteration's prompt starts with (a refused claim, a stall warning)."""
    wait_streaks: WaitStreaks
    answer_wait: float | None
    """Seconds to wait for an answer before finishing ``blocked`` (``None``: do not)."""
    notified_blocked: bool
    refused: str
    """The last trust refusal printed."""

    # Delivery (:mod:`._checkpoint`).
    git_identity: dict[str, str]
    """``GIT_AUTHOR_*``/``GIT_COMMITTER_*`` when git has no identity (empty: it has one)."""
    lock_removed: str | None
    checkpoint_failures: int
    """Checkpoints in a row whose commit failed."""
    last_claim: str
    """``none`` / ``accepted`` / ``refused``: the last claim's fate (FRESHER_LAST_CLAIM)."""
    last_claim_reason: str
    """Why the last claim was refused (the file FRESHER_LAST_CLAIM_REASON_FILE names)."""
    last_review: tuple[str, ReviewRecord] | None
    """The digest of the diff the reviewer last judged, and its verdict (it stands while
    the diff is the same)."""

    # How the run is ending.
    finishing: bool
    """Set once the loop is finishing: a records failure then no longer stops anything."""
    finish_reason: str | None
    records_failure: Exception | None
    """A write that failed during the agent: raised once its iteration is recorded."""

    if TYPE_CHECKING:  # the parts' methods (no stub at run time: it would shadow them)
        # The iteration's (:mod:`._iteration`).
        def elapsed(self) -> float:
            raise NotImplementedError

        def save(self) -> None:
            raise NotImplementedError

        def prompt_text(self) -> str:
            raise NotImplementedError

        def plan_unchecked(self) -> int | None:
            raise NotImplementedError

        async def run_agent(self, number: int) -> tuple[IterationRecord, IterationOutcome]:
            raise NotImplementedError

        def finish_iteration(self, it: IterationRecord, decision: str, *, counted: bool) -> None:
            raise NotImplementedError

        # The delivery's (:mod:`._checkpoint`).
        @property
        def pathspec(self) -> list[str]:
            raise NotImplementedError

        async def checkpoint(self, number: int, since: float) -> Delivered:
            raise NotImplementedError

        async def dirty_paths(self, limit: int | None = 100) -> list[str] | None:
            raise NotImplementedError

        async def tracked_changes(self) -> frozenset[str]:
            raise NotImplementedError

        async def undelivered(self, it: IterationRecord) -> str | None:
            raise NotImplementedError

        def note_claim(self, claim: ClaimRecord) -> None:
            raise NotImplementedError

        # The loop's own (:mod:`._loop`).
        def context(self, *, iteration: int | None = None, finish_type: str = "") -> HookContext:
            raise NotImplementedError

        # The checks' (:mod:`._checks`).
        async def before_iteration(self) -> FinishType | None:
            raise NotImplementedError

        async def hook(self, name: HookName, ctx: HookContext) -> LifecycleResult:
            raise NotImplementedError

        async def untrusted_now(self) -> str | None:
            raise NotImplementedError

        # The evidence's (:mod:`._proof`).
        async def stall_gate(
            self, it: IterationRecord, outcome: IterationOutcome
        ) -> GateRun | None:
            raise NotImplementedError

        async def measure(
            self, it: IterationRecord, outcome: IterationOutcome, gate: GateRun | None
        ) -> None:
            raise NotImplementedError

        async def check_claim(
            self, it: IterationRecord, claim: ClaimBy, gate: GateRun | None
        ) -> tuple[bool, str]:
            raise NotImplementedError

        # The switching's (:mod:`._switching`).
        def choose(self) -> Choice:
            raise NotImplementedError

        def learn_window(self, seconds: float, reason: str = "usage limit") -> None:
            raise NotImplementedError

        # The waits' (:mod:`._waiting`).
        async def wait(
            self, kind: str, seconds: float, until: datetime, *, opens_in: float | None = None
        ) -> None:
            raise NotImplementedError

        async def wait_for_answer(self, seconds: float, poll: float = 0.2) -> bool:
            raise NotImplementedError

        async def hold_while_paused(self, poll: float = 0.2) -> None:
            raise NotImplementedError

        async def hold_for_requests(self, pending: Sequence[IterationRecord] = ()) -> None:
            raise NotImplementedError

        def take_user_hint(self) -> str | None:
            raise NotImplementedError

        def summary(self) -> dict[str, Any]:
            raise NotImplementedError
