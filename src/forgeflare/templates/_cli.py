"""Command-line commands of this part (registered on the root app by ``forgeflare.cli``).

``forgeflare init [DIR]`` and ``forgeflare demo [--dir DIR]``. The work is imported when a
command runs, so that registering costs other commands nothing.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:  # the work is imported when a command runs
    from forgeflare.templates._init import InitReport

__all__ = ["register"]

_INIT_HELP = "\n\n".join(
    [
        "Scaffold a project for a Ralph loop (DIR defaults to .).",
        "Writes .fresher/ (lifecycle hooks started, next_iteration, finished and "
        "custom/notify; config.toml with every setting at its default; PROMPT.planning.md, "
        "PROMPT.building.md; AGENTS.md), .forgeflare/hooks.toml with its hook scripts (a Bash "
        "guard against destructive commands, an audit log, a convergence check, a session "
        "log), IMPLEMENTATION_PLAN.md and specs/README.md, and adds every file the loop "
        "writes at run time (its lock, records, convergence.json, transcripts) to .gitignore.",
        'A file that exists is kept ("exists, kept") unless --force.',
        "--NAME makes the agent backend NAME the agent ([agent] backend = NAME in config.toml), "
        "for each backend that has an init template: --agents lists them. The Claude Code one "
        "also installs `forgeflare stop-hook` as its Stop hook in .claude/settings.json.",
    ]
)

_DEMO_HELP = "\n\n".join(
    [
        "Run a whole Ralph loop offline: no network, no API key, exit 0 when complete.",
        "In a fresh temporary directory (or --dir, which must be empty or missing): a small "
        "project, `forgeflare init`, `forgeflare mock-api` with a scripted story, and "
        "`forgeflare loop --mode building` against it. Two iterations: the agent uses all "
        "five tools on real files, the guard blocks a destructive command, hooks log and "
        "signal convergence, the loop finishes complete. Ends with a summary read from the "
        "run's records; the project is kept for a look.",
        "--backend claude|codex|... runs the same two tasks through that agent's real CLI "
        "(installed and on PATH), against a mock of the API it speaks, with the environment "
        "it needs set by the demo; a CLI that is not installed is said with how to install it "
        "(exit 2).",
    ]
)


def _say_init(report: InitReport, directory: Path, *, dry_run: bool) -> None:
    """What ``init`` wrote (or would), and what to run next."""
    typer.echo(f"forgeflare init: {report.title()}")
    for line in report.lines():
        typer.echo(line)
    if dry_run:
        typer.echo("dry run: nothing written")
        return
    if report.settings_path is not None:
        typer.echo(
            "note: .claude/settings.json names this machine's forgeflare; to commit it, run "
            "`forgeflare stop-hook install --portable` (a project-relative wrapper)"
        )
    where = "" if directory == Path(".") else f" --dir {shlex.quote(str(directory))}"
    typer.echo("")
    typer.echo("Next: describe what to build in specs/, then")
    typer.echo(f"  forgeflare loop --mode planning{where}   # writes IMPLEMENTATION_PLAN.md")
    typer.echo(f"  forgeflare loop --mode building{where}   # works through it")


def register(app: typer.Typer) -> None:
    """Add this part's commands to ``app``."""

    @app.command(
        "init",
        help=_INIT_HELP,
        # --NAME for each backend with an init template: the registry says which (importing it
        # here would cost every other command its import).
        context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
    )
    def init_cmd(
        ctx: typer.Context,
        directory: Annotated[
            Path, typer.Argument(metavar="DIR", help="Project directory (created if missing).")
        ] = Path("."),
        force: Annotated[bool, typer.Option("--force", help="Overwrite existing files.")] = False,
        dry_run: Annotated[
            bool, typer.Option("--dry-run", help="List what would be written; write nothing.")
        ] = False,
        agents: Annotated[
            bool, typer.Option("--agents", help="List the agents --NAME can choose; write nothing.")
        ] = False,
    ) -> None:
        # Imported here: every forgeflare command imports this module to register.
        from forgeflare.templates._init import TemplateUsageError, init_backends, init_project

        if agents:
            for name, template in init_backends().items():
                typer.echo(f"--{name:<12}{template.agent}")
            return
        # Click takes the first unknown --NAME for DIR: sort the words out again.
        words = [str(directory), *ctx.args]
        chosen = [w.lstrip("-") for w in words if w.startswith("-")]
        for name in chosen:
            if name not in init_backends():  # click's own words for an unknown option
                ctx.fail(f"No such option: --{name}")
        dirs = [w for w in words if not w.startswith("-")]
        if len(dirs) > 1:
            raise TemplateUsageError(f"{' '.join(dirs)}: one directory only (DIR)")
        directory = Path(dirs[0]) if dirs else Path(".")
        report = init_project(directory, force=force, dry_run=dry_run, agents=chosen)
        _say_init(report, directory, dry_run=dry_run)

    @app.command("demo", help=_DEMO_HELP)
    def demo_cmd(
        directory: Annotated[
            Path | None,
            typer.Option("--dir", help="Run in this directory (empty or missing)."),
        ] = None,
        backend: Annotated[
            str,
            typer.Option(
                "--backend",
                metavar="NAME",
                help="The agent: a backend of the registry (forgeflare, claude, codex, ...).",
            ),
        ] = "forgeflare",
    ) -> None:
        from forgeflare.supervisor.backends import backend_names
        from forgeflare.templates._demo import run_demo
        from forgeflare.templates._init import TemplateUsageError

        if backend not in backend_names():
            names = ", ".join(backend_names())
            raise TemplateUsageError(f"--backend {backend}: not a backend (one of: {names})")
        raise typer.Exit(run_demo(directory, backend=backend))
