"""The typer app behind ``forgeflare``: a root group that loads a part only when it must.

Each part registers its own commands (``register(app)`` in its ``_cli`` module). Listing the
commands (``forgeflare --help``) uses the one-line help in :data:`COMMANDS` and imports no
part; running or describing a command imports only the module that defines it.
"""

from __future__ import annotations

import copy
import importlib
import inspect
import re
from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup

from forgeflare import __version__

__all__ = ["COMMANDS", "app", "real_command", "tidy_help"]

# command -> (the module below forgeflare whose register(app) defines it, the command's one-line
# help for the listing); tests/unit/test_cli.py checks each line against the command's own help.
COMMANDS: dict[str, tuple[str, str]] = {
    "run": ("agent._cli", "Run the coding agent on a task."),
    "loop": (
        "supervisor.run._cli",
        "Run a Ralph loop: a fresh agent each iteration until the work converges.",
    ),
    "plan": ("supervisor.run._cli", "Shortcut for `forgeflare loop --mode planning`."),
    "build": ("supervisor.run._cli", "Shortcut for `forgeflare loop --mode building`."),
    "stop": ("supervisor.run._cli", "Ask the running loop to stop after its current iteration."),
    "answer": (
        "supervisor.run._cli",
        "Answer the question a loop stopped on (the newest run with one in the project).",
    ),
    "pause": (
        "supervisor.run._handcli",
        "Pause the loop running in the project after its current iteration.",
    ),
    "unpause": ("supervisor.run._handcli", "Let a paused loop go on with its next iteration."),
    "hint": (
        "supervisor.run._handcli",
        'Give the loop\'s next iteration a hint: `forgeflare hint "use the v2 API"`.',
    ),
    "schema": ("supervisor.run._cli", "Print a JSON schema."),
    "init": ("templates._cli", "Scaffold a project for a Ralph loop (DIR defaults to .)."),
    "demo": (
        "templates._cli",
        "Run a whole Ralph loop offline: no network, no API key, exit 0 when complete.",
    ),
    "hooks": (
        "agent._hookscli",
        "Check, try out and describe the agent hooks (.forgeflare/hooks.toml, --hooks-module).",
    ),
    "stop-hook": (
        "stophook._cli",
        "Claude Code's Stop hook and the loops it drives inside one agent session.",
    ),
    "mock-api": ("mockapi._cli", "Serve a scripted, protocol-accurate Messages API (offline)."),
    "trust": ("supervisor.config._trustcli", "Review and trust what a project would run."),
    "runs": ("report._cli", "List a project's loop runs, newest first."),
    "report": ("report._cli", "Show one run (default: the newest) as a report."),
    "watch": ("report._cli", "Watch a running loop from another terminal, until it ends."),
    "fleet": ("fleet._cli", "Many loops at once, from one fleet file (FLEET.toml)."),
    "doctor": (
        "supervisor.run._doctor",
        "Check every configured agent before a night: what would make each iteration fail.",
    ),
    "windows": (
        "supervisor.agents._windowscli",
        "List the usage windows every loop on this machine knows.",
    ),
}


_RICH_TAG = re.compile(r"(?<!\\)\[(?!/?(?:bold|dim|italic|underline)\])")
"""A ``[`` that opens no style of ours: ``[agent] backend``, ``[[loop]]``, ``[]``."""

_METAVARS = {"int": "N", "float": "NUMBER", "str": "TEXT", "Path": "PATH"}


def tidy_help(text: str | None) -> str | None:
    """Help text as written, for rich: ``[section]`` kept (escaped), lines of a paragraph
    joined (the terminal wraps them; a source line break must not break at 80 columns).
    A paragraph whose lines all start with a style tag or a space is a table: kept."""
    if not text:
        return text
    paragraphs = []
    for para in inspect.cleandoc(text).split("\n\n"):
        lines = para.splitlines()
        table = len(lines) > 1 and all(ln.startswith(("[bold]", " ")) for ln in lines[1:])
        paragraphs.append(para if table else " ".join(ln.strip() for ln in lines))
    return _RICH_TAG.sub(r"\\[", "\n\n".join(paragraphs))


HIDDEN_ALIASES = frozenset({"--cwd", "--project-dir"})
"""Older spellings of ``--dir`` (the project directory): still read, not shown."""


def _hide_aliases(command: Any) -> None:
    for param in list(command.params):
        aliases = [o for o in getattr(param, "opts", ()) if o in HIDDEN_ALIASES]
        shown = [o for o in param.opts if o not in HIDDEN_ALIASES]
        if not aliases or not shown:
            continue
        # A hidden twin with the same name: click reads both into one value.
        twin = copy.copy(param)
        twin.opts, twin.secondary_opts, twin.hidden = aliases, [], True
        param.opts = shown
        command.params.append(twin)


def _tidy(command: Any) -> None:
    """One look for every command: help as written, no metavar on flags, metavars in one
    style (``N``, ``TEXT``, ``PATH``) where a parameter names none."""
    command.help = tidy_help(command.help)
    _hide_aliases(command)
    for param in command.params:
        if getattr(param, "help", None):
            param.help = tidy_help(param.help)
        if param.param_type_name == "argument":
            # An argument's name says what it is (DIR, FLEET_FILE): no type column beside it.
            if param.metavar is None:
                dirs = ("directory", "project_dir")
                param.metavar = "DIR" if param.name in dirs else str(param.name).upper()
            param.display_type_rich = lambda ctx: None
        elif getattr(param, "is_flag", False):
            param.metavar = ""
        elif param.metavar is None and hasattr(param, "type_descriptor"):
            annotation = param.type_descriptor.annotation
            if getattr(annotation, "__origin__", None) is list:
                annotation = annotation.__args__[0]
            named = getattr(annotation, "__name__", "")
            if named in _METAVARS:
                param.metavar = _METAVARS[named]
    make_help_option = command.get_help_option

    def help_option(ctx: Any) -> Any:
        option = make_help_option(ctx)
        if option is not None:
            option.metavar = ""  # --help is a flag too
        return option

    command.get_help_option = help_option
    for sub in getattr(command, "commands", {}).values():
        _tidy(sub)


def real_command(ctx: Any, name: str) -> Any:
    """The click command ``name`` as its part defines it (imports that part), or ``None``."""
    entry = COMMANDS.get(name)
    if entry is None:
        return None
    part = typer.Typer(add_completion=False)
    importlib.import_module(f"forgeflare.{entry[0]}").register(part)
    command = typer.main.get_command(part)
    if command.name != name and hasattr(command, "get_command"):
        command = command.get_command(ctx, name)
    if command is not None:
        _tidy(command)
    return command


class _LazyGroup(TyperGroup):
    """Lists every command from :data:`COMMANDS`; imports a part only to run or describe it."""

    _listing = False
    _tidied = False

    def list_commands(self, ctx: Any) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if self._listing:
            entry = COMMANDS.get(cmd_name)
            return None if entry is None else TyperCommand(cmd_name, short_help=entry[1])
        return real_command(ctx, cmd_name)

    def format_help(self, ctx: Any, formatter: Any) -> None:
        # The listing needs each command's name and one line only: no part is imported for it.
        # The same rich layout as every command's own --help (rich is imported for help only).
        if not self._tidied:
            self._tidied = True
            _tidy(self)  # the root's own options: flags without a metavar
        self._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False


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
