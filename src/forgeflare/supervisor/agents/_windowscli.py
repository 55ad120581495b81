"""``forgeflare windows``: the machine's usage windows, listed and forgotten."""

from __future__ import annotations

import os
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Annotated

import typer

from forgeflare._clock import format_wait
from forgeflare.supervisor.agents._fallback import Window
from forgeflare.supervisor.agents._windowkey import WindowKey

__all__ = ["register", "window_lines"]

_HELP = """List the usage windows every loop on this machine knows.

A loop that hits a usage limit stores the window under BACKEND[:PROFILE]@ENDPOINT#ACCOUNT
(ACCOUNT: a short hash of the credential, never the credential); another loop of the same
agent, endpoint and account starts on its fallback, or waits, instead of hitting the limit
again. `forgeflare windows clear [KEY]` forgets one window, or all.
"""

_CLEAR_HELP = """Forget the window stored under KEY (as `forgeflare windows` lists it), or all.

A loop that meets the limit again learns the window again. Exit 2 when no window has KEY.
"""


def window_lines(windows: Mapping[WindowKey, Window], now: datetime) -> list[str]:
    """One line per window still closed, soonest first: key, when it opens, why."""
    shut = sorted(
        (w.resets_at, key.text, w.reason)
        for key, w in windows.items()
        if w.resets_at is not None and w.resets_at > now
    )
    return [
        f"{text}  opens {until.astimezone():%Y-%m-%d %H:%M} "
        f"({format_wait((until - now).total_seconds())})  {reason}"
        for until, text, reason in shut
    ]


def _list(ctx: typer.Context) -> None:
    if ctx.invoked_subcommand is not None:
        return
    from forgeflare.supervisor.agents._windowstore import read_windows, window_store_path

    path = window_store_path(os.environ)
    windows = read_windows(path, warn=lambda line: typer.echo(line, err=True))
    lines = window_lines(windows, datetime.now(UTC))
    for line in lines:
        typer.echo(line)
    if not lines:
        typer.echo(f"no usage window known ({path})")


def _clear(
    key: Annotated[
        str | None, typer.Argument(metavar="KEY", help="The window's key; none: every window.")
    ] = None,
) -> None:
    from forgeflare.supervisor.agents._windowstore import forget_windows, window_store_path

    path = window_store_path(os.environ)
    try:
        gone = forget_windows(path, key, datetime.now(UTC))
    except OSError as exc:
        typer.echo(f"{path}: cannot forget: {exc.strerror or exc}", err=True)
        raise typer.Exit(1) from exc
    if key is not None and not gone:
        typer.echo(f"no usage window {key!r} in {path}; `forgeflare windows` lists them", err=True)
        raise typer.Exit(2)
    for text in gone:
        typer.echo(f"forgot {text}")
    if not gone:
        typer.echo(f"no usage window known ({path})")


def register(app: typer.Typer) -> None:
    """Add ``windows`` and ``windows clear``."""
    windows = typer.Typer(help=_HELP, invoke_without_command=True, add_completion=False)
    windows.callback()(_list)
    windows.command("clear", help=_CLEAR_HELP)(_clear)
    app.add_typer(windows, name="windows")
