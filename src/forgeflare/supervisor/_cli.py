"""Command-line commands of this part (registered on the root app by ``forgeflare.cli``).

``forgeflare loop`` and its shortcuts ``forgeflare plan`` / ``forgeflare build``.
"""

from __future__ import annotations

import functools
import os
import sys
from pathlib import Path
from typing import Any

import trio
import typer

from forgeflare._errors import ConfigError
from forgeflare.supervisor._config import load_config
from forgeflare.supervisor._finish import FINISH_EXIT_CODES
from forgeflare.supervisor._loop import LoopOptions, run_loop

__all__ = ["register"]

_EXIT_TABLE = "\n".join(
    f"[bold]{code:>3}[/bold]  {ft.value}"
    for ft, code in sorted(FINISH_EXIT_CODES.items(), key=lambda kv: kv[1])
)

_HELP = "\n\n".join(
    [
        "Run a Ralph loop: a fresh agent each iteration until the work converges.",
        "Runs the lifecycle hooks in .fresher/hooks/ (started, next_iteration, finished), "
        "starts the agent with the mode's prompt (.fresher/PROMPT.<mode>.md, or the built-in "
        "one) on stdin, and decides after each iteration whether to go on. Settings: flag > "
        "FRESHER_* variable > .fresher/config.toml > default. Records: .fresher/runs/<run-id>/.",
        "[bold]Exit status by finish type:[/bold]",
        _EXIT_TABLE
        + "\n[bold]  1[/bold]  run records unusable\n[bold]  2[/bold]  bad setting or usage",
        "complete: convergence_signal, or no '- [ ]' left in the plan (building mode). "
        "manual: Ctrl+C or SIGTERM. max_iterations / timeout: the iteration / runtime limit. "
        "no_changes: no commit and no work-tree change (git, smart_termination). "
        "error: too many error iterations in a row. hook_abort: a hook exited 2. "
        "stuck: block limits several iterations in a row. "
        "skips: next_iteration skipped too many iterations in a row.",
    ]
)


def _run(
    *,
    project_dir: Path,
    mode: str | None,
    max_iterations: int | None,
    max_runtime: str | None,
    iteration_timeout: str | None,
    agent_cmd: str | None,
    model: str | None,
    resume: bool,
) -> None:
    env = dict(os.environ)
    if not project_dir.is_dir():
        raise ConfigError(f"--dir {project_dir}: not a directory")
    cli: dict[str, Any] = {
        "fresher.mode": mode,
        "fresher.max_iterations": max_iterations,
        "fresher.model": model,
        "limits.max_runtime": max_runtime,
        "limits.iteration_timeout": iteration_timeout,
        "agent.command": agent_cmd,
    }
    loaded = load_config(project_dir, env=env, cli=cli)
    opts = LoopOptions(
        project_dir=project_dir,
        config=loaded.config,
        resume=resume,
        env=env,
        python=sys.executable,
        warnings=loaded.warnings,
    )

    result = trio.run(functools.partial(run_loop, opts, signals=True))
    raise typer.Exit(result.exit_code)


_DIR = typer.Option(Path("."), "--dir", help="Project directory.", show_default=True)
_MAX_IT = typer.Option(None, "--max-iterations", help="Stop after N iterations (0 = unlimited).")
_MAX_RT = typer.Option(
    None, "--max-runtime", metavar="DURATION", help="Wall-clock limit: 90s, 15m, 2h (0 = none)."
)
_IT_TO = typer.Option(
    None, "--iteration-timeout", metavar="DURATION", help="Kill an agent run after this long."
)
_AGENT = typer.Option(
    None,
    "--agent-cmd",
    metavar="CMD",
    help="Agent command (prompt on stdin); default: forgeflare run.",
)
_MODEL = typer.Option(None, "--model", help="Model for the default agent.")
_RESUME = typer.Option(False, "--resume", help="Continue the newest unfinished run.")


def register(app: typer.Typer) -> None:
    """Add this part's commands to ``app``."""

    @app.command("loop", help=_HELP)
    def loop_cmd(
        mode: str = typer.Option(
            None, "--mode", help="planning or building (default: config, else building)."
        ),
        max_iterations: int = _MAX_IT,
        max_runtime: str = _MAX_RT,
        iteration_timeout: str = _IT_TO,
        agent_cmd: str = _AGENT,
        model: str = _MODEL,
        resume: bool = _RESUME,
        project_dir: Path = _DIR,
    ) -> None:
        _run(
            project_dir=project_dir,
            mode=mode,
            max_iterations=max_iterations,
            max_runtime=max_runtime,
            iteration_timeout=iteration_timeout,
            agent_cmd=agent_cmd,
            model=model,
            resume=resume,
        )

    for name, mode_value in (("plan", "planning"), ("build", "building")):
        app.command(name, help=f"Shortcut for `forgeflare loop --mode {mode_value}`.\n\n" + _HELP)(
            _shortcut(mode_value)
        )


def _shortcut(mode_value: str) -> Any:
    def shortcut(
        max_iterations: int = _MAX_IT,
        max_runtime: str = _MAX_RT,
        iteration_timeout: str = _IT_TO,
        agent_cmd: str = _AGENT,
        model: str = _MODEL,
        resume: bool = _RESUME,
        project_dir: Path = _DIR,
    ) -> None:
        _run(
            project_dir=project_dir,
            mode=mode_value,
            max_iterations=max_iterations,
            max_runtime=max_runtime,
            iteration_timeout=iteration_timeout,
            agent_cmd=agent_cmd,
            model=model,
            resume=resume,
        )

    return shortcut
