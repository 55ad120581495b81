"""``forgeflare loop --dry-run``: what the first iteration would be, with nothing started.

It prints the first prompt exactly as the agent would read it on stdin, the agent command, the
names (never the values) of the agent's environment, the bounds and whether trust holds. No
agent, no hook, no run folder, no trust record: it reads the project and writes nothing.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from forgeflare._clock import utc_timestamp
from forgeflare.supervisor._agentproc import StopControl
from forgeflare.supervisor._config import bounds_words
from forgeflare.supervisor._display import LoopDisplay
from forgeflare.supervisor._options import LoopOptions
from forgeflare.supervisor._records import RunRecord, RunStore

__all__ = ["dry_run_lines", "first_iteration"]


def dry_run_lines(
    *,
    prompt: str,
    argv: Sequence[str],
    env_names: Sequence[str],
    key_names: Sequence[str],
    bounds: str,
    trust: str,
) -> list[str]:
    """The dry run's report (pure)."""
    keys = f" (its key {', '.join(key_names)} through a descriptor)" if key_names else ""
    return [
        "dry run: nothing was started (no agent, no hook, no run folder, no trust record)",
        f"bounds: {bounds}",
        f"trust: {trust}",
        f"agent command: {shlex.join(argv)}",
        f"agent environment{keys}: {' '.join(sorted(env_names))}",
        "first prompt (on the agent's stdin):",
        "---",
        prompt.rstrip("\n"),
        "---",
    ]


def first_iteration(opts: LoopOptions, trust: str) -> list[str]:
    """The dry run of the loop ``opts`` describes: the first iteration's prompt, command and
    environment, as the loop would build them (the loop's own methods, on a run that is
    never opened)."""
    from forgeflare.supervisor._loop import _Loop  # the loop imports this module

    loop = _Loop(opts, LoopDisplay(live=False), StopControl())
    run_dir = loop.log_root / "dry-run"
    loop.store = RunStore(run_dir)  # never created: the paths only name it
    loop.record = RunRecord(
        run_id="dry-run",
        mode=opts.config.fresher.mode,
        project_dir=str(loop.project),
        started_at=utc_timestamp(),
        max_iterations=opts.config.fresher.max_iterations,
        backend=loop.backend.name,
    )
    plan = loop.agent_env(1, run_dir / "iteration-001.report.json")
    return dry_run_lines(
        prompt=loop.prompt(),
        argv=loop.agent_argv(),
        env_names=list(plan.env),
        key_names=list(plan.through_fd),
        bounds=bounds_words(opts.config, loop.backend.name, [s.label for s in loop.fallbacks]),
        trust=trust,
    )
