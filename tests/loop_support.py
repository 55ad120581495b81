"""The loop's parts for tests: a setup over a project in a scratch folder, an opened run book.

Each part of the loop is built alone from these (``LoopSetup`` and ``RunBook`` are its only
shared inputs), with real files, real git and real processes.
"""

from __future__ import annotations

import io
import os
import secrets
from pathlib import Path
from typing import Any

from forgeflare.supervisor import LoopConfig, LoopOptions, RunRecord, RunStore
from forgeflare.supervisor.agents import StopControl
from forgeflare.supervisor.records import LoopDisplay
from forgeflare.supervisor.run import LoopSetup, RunBook

__all__ = ["Shown", "loop_options", "loop_setup", "opened_book"]


class Shown:
    """What a display showed: its terminal lines (stdout and stderr) as one text."""

    def __init__(self) -> None:
        self.out = io.StringIO()
        self.err = io.StringIO()

    def display(self) -> LoopDisplay:
        return LoopDisplay(out=self.out, err=self.err, live=False)

    @property
    def text(self) -> str:
        return self.out.getvalue() + self.err.getvalue()


def loop_options(
    project: Path, *, config: dict[str, Any] | None = None, env: dict[str, str] | None = None
) -> LoopOptions:
    """The options of a loop in ``project`` (made if missing) with ``config``'s sections; the
    user's state and config folders are in the scratch folder beside it."""
    project.mkdir(parents=True, exist_ok=True)
    home = project.parent / f"{project.name}-home"
    base = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "XDG_STATE_HOME": str(home / "state"),
        "XDG_CONFIG_HOME": str(home / "config"),
        "FORGEFLARE_TIME_SCALE": "0.001",
    }
    return LoopOptions(
        project_dir=project,
        config=LoopConfig.model_validate(config or {}),
        env={**base, **(env or {})},
    )


def loop_setup(
    project: Path,
    *,
    config: dict[str, Any] | None = None,
    shown: Shown | None = None,
    env: dict[str, str] | None = None,
) -> LoopSetup:
    """The setup of a loop in :func:`loop_options`' project."""
    opts = loop_options(project, config=config, env=env)
    return LoopSetup.build(opts, (shown or Shown()).display(), StopControl())


def opened_book(setup: LoopSetup, run_id: str | None = None) -> RunBook:
    """A run book over a new run folder under the setup's log root (a random run id unless
    given: the id is the marker its agents and hooks carry, and after each one the loop ends
    every process of the user that carries it, so tests running at once, in other workers or
    other suites, must not share one)."""
    run_id = run_id or f"run-{secrets.token_hex(4)}"
    book = RunBook(setup)
    store = RunStore(setup.log_root / run_id)
    store.create()
    record = RunRecord(
        run_id=run_id,
        mode=setup.cfg.fresher.mode,
        project_dir=str(setup.project),
        started_at="2026-01-01T00:00:00Z",
        max_iterations=setup.cfg.fresher.max_iterations,
        backend=setup.cfg.backend().name,
    )
    book.begin(store, record)
    return book
