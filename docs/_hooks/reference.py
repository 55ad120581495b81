"""The generated reference: every command's help and every configuration key, from the code.

MkDocs runs this file as a hook (``hooks:`` in mkdocs.yml). A page line
``<!-- generated: NAME -->`` is replaced by ``GENERATORS[NAME]()`` each time the site is
built, so the reference says what the installed code does and cannot drift from it.
``tests/e2e/test_readme.py`` reads the same functions (it checks the tables and runs the
commands the pages show).
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Callable
from typing import Any

import typer
from pydantic import BaseModel
from pydantic_core import PydanticUndefined
from typer.testing import CliRunner

from forgeflare._app import app
from forgeflare.fleet._config import FleetLoop, FleetSettings
from forgeflare.hooks._config import HookConfig
from forgeflare.supervisor.config._config import (
    AgentProfile,
    LoopConfig,
    default_config_toml,
    env_name,
)

MARKER = re.compile(r"^<!-- generated: ([\w-]+) -->$", re.MULTILINE)

HELP_ENV = {"COLUMNS": "88", "NO_COLOR": "1", "TERM": "dumb"}
"""The terminal the help is rendered for: 88 columns (the width of a page's text), no colour."""


_CODE = re.compile(r"(`+)(.+?)\1")


def _one_line(text: str | None) -> str:
    """A docstring as one table cell: lines joined, pipes escaped, ``<`` and ``>`` outside
    code kept as text (``<log_dir>`` is no HTML tag)."""
    cell = " ".join((text or "").split()).replace("|", "\\|")
    parts, last = [], 0
    for code in _CODE.finditer(cell):
        parts += [cell[last : code.start()].replace("<", "&lt;").replace(">", "&gt;"), code[0]]
        last = code.end()
    parts.append(cell[last:].replace("<", "&lt;").replace(">", "&gt;"))
    return "".join(parts)


def command_paths() -> list[tuple[str, ...]]:
    """Every visible command and group below ``forgeflare``, depth first, in help order."""
    root = typer.main.get_command(app)
    found: list[tuple[str, ...]] = []

    # typer carries its own click: groups are told apart by what they do, not by class.
    def walk(group: Any, path: tuple[str, ...], ctx: Any) -> None:
        for name in group.list_commands(ctx):
            command = group.get_command(ctx, name)
            if command is None or command.hidden:
                continue
            found.append((*path, name))
            if hasattr(command, "list_commands"):
                sub = command.context_class(command, parent=ctx, info_name=name)
                walk(command, (*path, name), sub)

    walk(root, (), root.context_class(root, info_name="forgeflare"))
    return found


def command_help(path: tuple[str, ...]) -> str:
    """``forgeflare PATH --help`` as a terminal of :data:`HELP_ENV` shows it."""
    result = CliRunner().invoke(app, [*path, "--help"], env=HELP_ENV, prog_name="forgeflare")
    if result.exit_code != 0:
        raise RuntimeError(f"forgeflare {' '.join(path)} --help: exit {result.exit_code}")
    return "\n".join(line.rstrip() for line in result.output.strip("\n").splitlines())


def cli_reference() -> str:
    """One section per command: its name as a heading, its help as a text block."""
    parts = []
    for path in [(), *command_paths()]:
        name = " ".join(("forgeflare", *path))
        level = "#" * min(2 + max(len(path) - 1, 0), 4)
        parts.append(f"{level} `{name}`\n\n```text\n{command_help(path)}\n```\n")
    return "\n".join(parts)


def _rendered(value: Any) -> str:
    """A default the way config.toml spells it (strings quoted, booleans lower case)."""
    return json.dumps(value) if isinstance(value, str) else str(value).lower()


def loop_config_rows() -> list[tuple[str, str, str, str]]:
    """``(key, variable, default, meaning)`` of every ``.fresher/config.toml`` key."""
    defaults = tomllib.loads(default_config_toml())
    rows = []
    for section, field in LoopConfig.model_fields.items():
        model: Any = field.annotation
        for key, info in model.model_fields.items():
            if section == "agent" and key == "profiles":
                rows.append(("[agent.profiles.NAME]", "", "", _one_line(info.description)))
                continue
            rows.append(
                (
                    f"[{section}] {key}",
                    env_name(section, key),
                    _rendered(defaults[section][key]),
                    _one_line(info.description),
                )
            )
    return rows


def loop_config_table() -> str:
    """The keys of ``.fresher/config.toml`` as a Markdown table, and a profile's keys."""
    lines = ["| key | variable | default | meaning |", "|---|---|---|---|"]
    for key, variable, default, meaning in loop_config_rows():
        # An empty cell is "| |": tests/unit/test_documented_settings_table.py reads rows so.
        var = f"`{variable}` " if variable else ""
        dflt = f"`{default}` " if default else ""
        lines.append(f"| `{key}` | {var}| {dflt}| {meaning} |")
    lines += ["", "The keys of one profile, `[agent.profiles.NAME]`:", ""]
    lines += _model_table(AgentProfile, "")
    return "\n".join(lines) + "\n"


def _default(info: Any) -> str:
    if info.default is PydanticUndefined and info.default_factory is None:
        return "required"
    value = info.get_default(call_default_factory=True)
    return "none" if value is None else f"`{_rendered(value)}`"


def _model_table(model: type[BaseModel], prefix: str) -> list[str]:
    lines = ["| key | default | meaning |", "|---|---|---|"]
    for key, info in model.model_fields.items():
        name = f"{prefix} {key}" if prefix else key
        lines.append(f"| `{name}` | {_default(info)} | {_one_line(info.description)} |")
    return lines


def fleet_config_table() -> str:
    """The keys of a fleet file (``[fleet]`` and each ``[[loop]]``) as Markdown tables."""
    lines = _model_table(FleetSettings, "[fleet]")
    lines += ["", "Each `[[loop]]`:", ""]
    lines += _model_table(FleetLoop, "[[loop]]")
    return "\n".join(lines) + "\n"


def hooks_config_table() -> str:
    """The keys of one ``[[hooks]]`` entry of ``.forgeflare/hooks.toml``."""
    return "\n".join(_model_table(HookConfig, "")) + "\n"


GENERATORS: dict[str, Callable[[], str]] = {
    "cli": cli_reference,
    "loop-config": loop_config_table,
    "fleet-config": fleet_config_table,
    "hooks-config": hooks_config_table,
}


def expand(markdown: str) -> str:
    """The page with each ``<!-- generated: NAME -->`` line replaced by its text."""

    def generated(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in GENERATORS:
            raise KeyError(f"<!-- generated: {name} -->: no such generator ({sorted(GENERATORS)})")
        return GENERATORS[name]().rstrip("\n")

    return MARKER.sub(generated, markdown)


def on_page_markdown(markdown: str, **_: Any) -> str:
    """MkDocs hook: expand the generated parts of every page."""
    return expand(markdown)
