"""``forgeflare pause``, ``unpause`` and ``hint``: a hand on the loop running in a project.

The files they write are :mod:`~forgeflare.supervisor.run._hand`'s; the loop reads them between
iterations.
"""

from __future__ import annotations

import os
from pathlib import Path

import typer

from forgeflare._cliopts import ProjectDir
from forgeflare._errors import ConfigError
from forgeflare.disk import read_named_text

__all__ = ["register"]


def register(app: typer.Typer) -> None:
    """Add ``pause``, ``unpause`` and ``hint``."""

    @app.command("pause", help=_PAUSE_HELP)
    def pause_cmd(project: ProjectDir = Path(".")) -> None:
        from forgeflare.supervisor.run._hand import request_pause

        run_dir = _running_run(project, "pause")
        if run_dir is None:
            return
        request_pause(run_dir)
        typer.echo(
            f"the loop in {project} pauses after its current iteration "
            f"(`forgeflare unpause{_dir_words(project)}` goes on)"
        )

    @app.command("unpause", help=_UNPAUSE_HELP)
    def unpause_cmd(project: ProjectDir = Path(".")) -> None:
        from forgeflare.supervisor.run._hand import clear_pause

        run_dir = _running_run(project, "unpause")
        if run_dir is None:
            return
        if clear_pause(run_dir):
            typer.echo(f"the loop in {project} goes on")
        else:
            typer.echo(f"the loop in {project} was not paused")

    @app.command("hint", help=_HINT_HELP)
    def hint_cmd(
        text: str = typer.Argument(
            None, metavar="TEXT", show_default=False, help="The hint, in words."
        ),
        file: Path = typer.Option(None, "--file", metavar="FILE", help="Read the hint here."),
        project: ProjectDir = Path("."),
    ) -> None:
        from forgeflare.supervisor.run._hand import NoLoopRunning, add_hint, running_run

        hint = _text_or_file("hint", text, file)
        if not project.is_dir():
            raise ConfigError(f"hint: --dir {project}: not a directory")
        try:
            run_dir = running_run(project, os.environ)
        except NoLoopRunning as exc:
            raise NoLoopRunning(f"{exc}: the hint was not kept") from exc
        waiting = add_hint(run_dir, hint)
        more = f" ({waiting} hints wait there)" if waiting > 1 else ""
        typer.echo(f"the next iteration's prompt in {project} starts with your hint{more}")


def _dir_words(project: Path) -> str:
    """`` --dir PATH`` for a command suggested to the user, empty for the current directory."""
    return "" if project.resolve() == Path.cwd().resolve() else f" --dir {project}"


def _running_run(project: Path, command: str) -> Path | None:
    """The running loop's run folder, or ``None`` after saying that no loop runs there."""
    from forgeflare.supervisor.run._hand import NoLoopRunning, running_run

    if not project.is_dir():
        raise ConfigError(f"{command}: --dir {project}: not a directory")
    try:
        return running_run(project, os.environ)
    except NoLoopRunning as exc:
        typer.echo(f"{exc}: nothing to {command}")
        return None


def _text_or_file(command: str, text: str | None, file: Path | None) -> str:
    """A command's words from TEXT or ``--file F`` (exactly one of them, not empty)."""
    if (text is None) == (file is None):
        raise ConfigError(f'{command}: give "TEXT" or --file FILE (one of them)')
    if file is not None:
        text = read_named_text(file, f"{command} --file {file}", error=ConfigError)
    assert text is not None
    if not text.strip():
        raise ConfigError(f"{command}: the text is empty")
    return text


_PAUSE_HELP = """Pause the loop running in the project after its current iteration.

The agent finishes its iteration; then the loop waits (the status line and `forgeflare watch`
say paused) until `forgeflare unpause`. `forgeflare stop` still ends a paused loop, and paused
time counts toward max_runtime. The request is a file in the run's folder (pause).
"""

_UNPAUSE_HELP = """Let a paused loop go on with its next iteration."""

_HINT_HELP = """Give the loop's next iteration a hint: `forgeflare hint "use the v2 API"`.

The next iteration's prompt starts with it, once; the iteration's row in run.json records it
(hint). Several hints before the next iteration are all given, in order. The hint waits in the
run's folder (hint.md); with no loop running it is not kept (exit 1).
"""
