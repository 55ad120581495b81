"""The typer app behind ``forgeflare``: every command's help, one metavar style, help text as
written (config sections kept, source line breaks joined), the hidden older spellings of
``--dir``, and the static listing line equal to each command's own help."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from forgeflare._app import COMMANDS, app, real_command, tidy_help
from project_support import run_text


@pytest.mark.parametrize(
    ("written", "shown"),
    [
        (None, None),
        ("", ""),
        ("One line.", "One line."),
        ("Joined\n    over lines.", "Joined over lines."),
        ("First.\n\nSecond\nparagraph.", "First.\n\nSecond paragraph."),
        ("See [agent] backend.", "See \\[agent] backend."),
        ("A [[loop]] table; [] empty.", "A \\[\\[loop]] table; \\[] empty."),
        ("[bold]kept[/bold] style", "[bold]kept[/bold] style"),
        ("Already \\[escaped]", "Already \\[escaped]"),
        (
            "Table:\n[bold]a[/bold]  one\n  indented",
            "Table:\n[bold]a[/bold]  one\n  indented",
        ),
    ],
)
def test_help_text_as_written(written: str | None, shown: str | None) -> None:
    assert tidy_help(written) == shown


def test_an_unknown_command_is_none() -> None:
    assert real_command(None, "nope") is None


@pytest.mark.parametrize("name", list(COMMANDS))
def test_every_command_has_help(name: str) -> None:
    result = CliRunner().invoke(app, [name, "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, (name, result.output)
    assert "Usage" in result.output


def _help(*args: str) -> str:
    result = CliRunner().invoke(app, [*args, "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, (args, result.output)
    return result.output


_SUBCOMMANDS = [
    ("hooks", "validate"),
    ("hooks", "test"),
    ("fleet", "run"),
    ("fleet", "k8s"),
    ("stop-hook", "start"),
    ("stop-hook", "install"),
]


@pytest.mark.parametrize("args", [(name,) for name in COMMANDS] + _SUBCOMMANDS)
def test_help_shows_no_type_on_flags_and_one_metavar_style(args: tuple[str, ...]) -> None:
    text = _help(*args)
    for bad in ("<bool>", "<str>", "<int>", "<float>", "<path>", "<Path>", "<list[", "(default:  "):
        assert bad not in text, (args, bad)


def test_help_keeps_config_sections_and_its_own_line_breaks_out() -> None:
    assert "(default: [agent] backend)" in _help("loop")
    fleet = _help("fleet")
    assert "a [fleet] table (name, parallel" in fleet
    assert "one [[loop]] per loop" in fleet
    # the source's line breaks at 80 columns do not break a 200-column terminal's lines
    assert "runs the finished hook and ends with finish type stopped (exit 18)." in _help("stop")
    assert "(default 1h; 0 = no limit)" in _help("loop")
    assert "[agent] backend = NAME" in _help("init")


def test_the_project_directory_is_dir_everywhere_older_spellings_hidden(tmp_path: Path) -> None:
    assert "--dir" in _help("run")
    assert "--cwd" not in _help("run")
    assert "--project-dir" not in _help("stop-hook", "status")
    done = run_text(
        [sys.executable, "-m", "forgeflare", "stop-hook", "status", "--project-dir", str(tmp_path)],
    )
    assert (done.returncode, done.stdout.strip()) == (0, "no loop in this project")


@pytest.mark.parametrize("name", list(COMMANDS))
def test_static_listing_line_is_the_commands_own_help(name: str) -> None:
    """The root listing's one line cannot drift from the first paragraph of the real help."""
    command = real_command(None, name)
    assert command is not None, name
    own = command.short_help or command.help or ""
    first_paragraph = " ".join(own.strip().split("\n\n")[0].split())
    assert COMMANDS[name][1] == first_paragraph
