"""The ``forgeflare`` command: a thin typer app. Each part registers its own commands."""

from __future__ import annotations

import sys

import typer

from forgeflare import __version__
from forgeflare._errors import ForgeflareError
from forgeflare.agent import _cli as agent_cli
from forgeflare.hooks import _cli as hooks_cli
from forgeflare.mockapi import _cli as mockapi_cli
from forgeflare.supervisor import _cli as supervisor_cli
from forgeflare.supervisor.stophook import _cli as stophook_cli
from forgeflare.templates import _cli as templates_cli

__all__ = ["app", "main"]

app = typer.Typer(
    name="forgeflare",
    help="Ralph loops: a small coding agent, in-process hooks, and a loop supervisor.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="rich",
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"forgeflare {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", help="Print the version and exit.", callback=_version, is_eager=True
    ),
) -> None:
    """Ralph loops: a small coding agent, in-process hooks, and a loop supervisor."""


for _part in (agent_cli, hooks_cli, supervisor_cli, stophook_cli, templates_cli, mockapi_cli):
    _part.register(app)


def main() -> None:
    """Console-script entry point: library errors become one line and an exit status."""
    try:
        app()
    except ForgeflareError as exc:
        print(f"forgeflare: error: {exc}", file=sys.stderr)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        print("forgeflare: interrupted", file=sys.stderr)
        sys.exit(130)
