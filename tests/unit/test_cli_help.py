"""Every command's --help: it renders (rich, the root too), and every argument and option
says what it is."""

from __future__ import annotations

from typing import Any

import click
import pytest
from typer.testing import CliRunner

from forgeflare._app import COMMANDS, app, real_command


def _commands() -> list[tuple[list[str], Any]]:
    found: list[tuple[list[str], Any]] = []
    ctx = click.Context(click.Command("forgeflare"))

    def walk(path: list[str], command: Any) -> None:
        found.append((path, command))
        for name, sub in sorted(getattr(command, "commands", {}).items()):
            walk([*path, name], sub)

    for name in COMMANDS:
        walk([name], real_command(ctx, name))
    return found


COMMAND_PATHS = _commands()


@pytest.mark.parametrize(
    ("path", "command"), COMMAND_PATHS, ids=[" ".join(p) for p, _ in COMMAND_PATHS]
)
def test_every_argument_and_option_is_described(path: list[str], command: Any) -> None:
    undescribed = [
        p.name
        for p in command.params
        if not getattr(p, "hidden", False) and not (getattr(p, "help", None) or "").strip()
    ]
    assert undescribed == [], f"forgeflare {' '.join(path)}: {undescribed}"
    done = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "100"})
    assert done.exit_code == 0, done.output
    assert "Usage: forgeflare " + " ".join(path) in done.output
    assert "\n\n\n" not in done.output.replace(" ", "")  # no stray blank line


def test_the_root_help_has_the_same_rich_layout() -> None:
    done = CliRunner().invoke(app, ["--help"], env={"COLUMNS": "100"})
    assert done.exit_code == 0
    assert "╭─ Commands" in done.output
    assert "<bool>" not in done.output
    for name in ("pause", "unpause", "hint"):
        assert f" {name} " in done.output


def test_what_newcomers_looked_for_is_there() -> None:
    def help_of(*path: str) -> str:
        done = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "200"})
        return " ".join(done.output.split())

    assert "<loop-done>COMPLETE</loop-done>" in help_of("loop")
    assert "quota: the account's credit" in help_of("loop")
    assert "agent_command" in help_of("fleet")
    assert "The answer, in words" in help_of("answer")
    for command in ("runs", "watch", "stop", "answer", "trust", "pause", "unpause", "hint"):
        assert "--dir" in help_of(command), command
