"""The ``forgeflare`` command: a thin typer app.

Each part registers its own commands (``register(app)`` in its ``_cli`` module). The root group
imports a part only when one of its commands runs, so ``forgeflare stop-hook`` (called on every
stop of a Claude Code session) does not pay for the agent's HTTP stack.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

import typer
from typer.core import TyperGroup

from forgeflare import __version__
from forgeflare._errors import ForgeflareError

__all__ = ["app", "main"]

# command -> the module whose register(app) defines it
_COMMANDS: dict[str, str] = {
    "run": "forgeflare.agent._cli",
    "loop": "forgeflare.supervisor._cli",
    "plan": "forgeflare.supervisor._cli",
    "build": "forgeflare.supervisor._cli",
    "stop": "forgeflare.supervisor._cli",
    "schema": "forgeflare.supervisor._cli",
    "init": "forgeflare.templates._cli",
    "demo": "forgeflare.templates._cli",
    "hooks": "forgeflare.hooks._cli",
    "stop-hook": "forgeflare.stophook._cli",
    "mock-api": "forgeflare.mockapi._cli",
    "trust": "forgeflare.supervisor._trustcli",
    "runs": "forgeflare.report._cli",
    "report": "forgeflare.report._cli",
    "watch": "forgeflare.report._cli",
    "fleet": "forgeflare.fleet._cli",
}


class _LazyGroup(TyperGroup):
    """Lists every command up front; imports a part's module only to run or describe it."""

    def list_commands(self, ctx: Any) -> list[str]:
        return list(_COMMANDS)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        module = _COMMANDS.get(cmd_name)
        if module is None:
            return None
        part = typer.Typer(add_completion=False)
        importlib.import_module(module).register(part)
        command = typer.main.get_command(part)
        if command.name == cmd_name or not hasattr(command, "get_command"):
            return command
        return command.get_command(ctx, cmd_name)


app = typer.Typer(
    name="forgeflare",
    cls=_LazyGroup,
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


def _only_forgeflare_error(group: BaseExceptionGroup[BaseException]) -> ForgeflareError | None:
    """The one ForgeflareError a trio nursery wrapped, if that is all the group holds."""
    leaves: list[BaseException] = []

    def walk(exc: BaseException) -> None:
        if isinstance(exc, BaseExceptionGroup):
            for inner in exc.exceptions:
                walk(inner)
        else:
            leaves.append(exc)

    walk(group)
    if len(leaves) == 1 and isinstance(leaves[0], ForgeflareError):
        return leaves[0]
    return None


def main() -> None:
    """Console-script entry point: library errors become one line and an exit status."""
    try:
        app()
    except ForgeflareError as exc:
        print(f"forgeflare: error: {exc}", file=sys.stderr)
        sys.exit(exc.exit_code)
    except BaseExceptionGroup as group:
        error = _only_forgeflare_error(group)
        if error is None:
            raise
        print(f"forgeflare: error: {error}", file=sys.stderr)
        sys.exit(error.exit_code)
    except KeyboardInterrupt:
        print("forgeflare: interrupted", file=sys.stderr)
        sys.exit(130)
