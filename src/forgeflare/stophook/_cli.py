"""``forgeflare stop-hook``: the hook (no subcommand) plus start, status, cancel, install."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer

from forgeflare.stophook._entry import run_stop_hook_process
from forgeflare.stophook._install import DEFAULT_COMMAND, install_hook
from forgeflare.stophook._loops import (
    cancel_loops,
    describe_state,
    loop_status,
    start_loop,
)
from forgeflare.stophook._signals import Mode

__all__ = ["register"]

_ProjectOpt = Annotated[
    Path | None,
    typer.Option("--project-dir", help="Project directory (default: the current directory)."),
]


def _project(project_dir: Path | None) -> Path:
    return project_dir if project_dir is not None else Path.cwd()


def register(app: typer.Typer) -> None:
    """Add the ``stop-hook`` command group to ``app``."""
    sub = typer.Typer(
        name="stop-hook",
        help=(
            "Claude Code's Stop hook and the loops it drives inside one agent session.\n\n"
            "With no subcommand, run as Claude Code's Stop hook: read its JSON on stdin, exit 2 "
            "with a continuation prompt to keep the loop going, exit 0 to let the agent stop. "
            "IDLE_LOOP_DISABLE=1 or a .idle-disabled file in the project turns it off."
        ),
        invoke_without_command=True,
        add_completion=False,
        no_args_is_help=False,
    )

    @sub.callback(invoke_without_command=True)
    def hook(ctx: typer.Context) -> None:
        if ctx.invoked_subcommand is None:
            raise typer.Exit(run_stop_hook_process())

    @sub.command("start")
    def start(
        max_iterations: Annotated[
            int, typer.Option("--max-iterations", min=1, help="Cap on iterations of this loop.")
        ],
        mode: Annotated[
            Mode, typer.Option("--mode", help="Kind of loop (sets its signals).")
        ] = Mode.LOOP,
        prompt: Annotated[
            str, typer.Option("--prompt", help="Task text repeated on each block.")
        ] = "",
        project_dir: _ProjectOpt = None,
    ) -> None:
        """Push a loop frame (nested if a loop is already running)."""
        now = datetime.now(UTC)
        project = _project(project_dir)
        record = start_loop(
            project, mode=mode, max_iterations=max_iterations, prompt=prompt, now=now
        )
        frame = record.stack[-1]
        typer.echo(
            f"started a {frame.mode}-mode loop (frame {len(record.stack)}, "
            f"max {frame.max} iterations, run {record.run_id})"
        )

    @sub.command("status")
    def status(
        project_dir: _ProjectOpt = None,
    ) -> None:
        """Show the loop stack, outermost frame first."""
        path, state = loop_status(_project(project_dir))
        typer.echo(describe_state(path, state, datetime.now(UTC)))

    @sub.command("cancel")
    def cancel(
        project_dir: _ProjectOpt = None,
    ) -> None:
        """Abort every loop of the project: its state is removed, the next stop is allowed."""
        removed = cancel_loops(_project(project_dir))
        if not removed:
            typer.echo("no loop to cancel")
        for path, _state in removed:
            typer.echo(f"cancelled: removed {path}")

    @sub.command("install")
    def install(
        project_dir: _ProjectOpt = None,
        command: Annotated[
            str, typer.Option("--command", help="The command Claude Code runs on Stop.")
        ] = DEFAULT_COMMAND,
    ) -> None:
        """Add the Stop hook to .claude/settings.json, keeping everything already there."""
        path, changed = install_hook(_project(project_dir), command=command)
        if changed:
            typer.echo(f"added Stop hook {command!r} to {path}")
        else:
            typer.echo(f"{path} already runs {command!r} on Stop; nothing changed")

    app.add_typer(sub, name="stop-hook")
