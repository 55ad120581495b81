"""``forgeflare loop --dry-run``: what the first iteration would be, with nothing started.

It prints the first prompt exactly as the agent would read it on stdin, the agent command, the
names (never the values) of the agent's environment, the bounds and whether trust holds. No
agent, no hook, no run folder, no trust record: it reads the project and writes nothing.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from forgeflare._clock import utc_timestamp
from forgeflare.supervisor.agents._agentproc import StopControl
from forgeflare.supervisor.config._config import bounds_words
from forgeflare.supervisor.config._options import LoopOptions
from forgeflare.supervisor.records._display import LoopDisplay
from forgeflare.supervisor.records._records import RunRecord, RunStore
from forgeflare.supervisor.run._runbook import RunBook
from forgeflare.supervisor.run._setup import LoopSetup
from forgeflare.supervisor.run._step import LoopParts, LoopStep

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
    setup = LoopSetup.build(opts, LoopDisplay(live=False), StopControl())
    book = RunBook(setup)
    parts = LoopParts.build(setup, book)
    agent, iteration = parts.agent, parts.iteration
    run_dir = setup.log_root / "dry-run"
    book.begin(
        RunStore(run_dir),  # never created: the paths only name it
        RunRecord(
            run_id="dry-run",
            mode=opts.config.fresher.mode,
            project_dir=str(setup.project),
            started_at=utc_timestamp(),
            max_iterations=opts.config.fresher.max_iterations,
            backend=agent.backend.name,
        ),
    )
    ctx = LoopStep(setup, book, parts).context(iteration=1)
    plan = iteration.agent_env(1, run_dir / "iteration-001.report.json", ctx)
    return dry_run_lines(
        prompt=iteration.prompt(),
        argv=iteration.agent_argv(),
        env_names=list(plan.env),
        key_names=list(plan.through_fd),
        bounds=bounds_words(opts.config, agent.backend.name, [s.label for s in agent.fallbacks]),
        trust=trust,
    )
