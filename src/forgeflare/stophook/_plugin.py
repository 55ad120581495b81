"""The Claude Code plugin: ``/forgeflare:loop``, ``/forgeflare:cancel``, ``/forgeflare:status``,
``/forgeflare:answer`` and the Stop hook, shipped as package data and installed by
``stop-hook install --plugin``.

The files in ``forgeflare/templates/claude_plugin`` hold two placeholders: ``@FORGEFLARE@``
(how to run this forgeflare without ``PATH``, see ``forgeflare_command``) and ``@VERSION@``.
By default the plugin goes to ``~/.claude/skills/forgeflare``, a folder Claude Code loads as
the plugin ``forgeflare@skills-dir`` in every new session; ``claude --plugin-dir DIR`` loads
one from anywhere for a single session.

``/forgeflare:loop`` runs ``stop-hook start --args-stdin`` with the command's arguments in a
quoted here-document, so a prompt with quotes, ``$`` or backticks reaches forgeflare as typed;
:func:`parse_loop_args` takes the options out of that text. ``/forgeflare:answer`` passes its
arguments to ``stop-hook answer --args-stdin`` the same way.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import NamedTuple

from forgeflare import __version__
from forgeflare.disk import atomic_write_text
from forgeflare.stophook._errors import LoopStateError
from forgeflare.stophook._signals import Mode

__all__ = [
    "PLUGIN_FILES",
    "LoopArgs",
    "default_plugin_dir",
    "install_plugin",
    "parse_loop_args",
    "plugin_files",
]

PLUGIN_FILES = (
    ".claude-plugin/plugin.json",
    "hooks/hooks.json",
    "commands/loop.md",
    "commands/cancel.md",
    "commands/status.md",
    "commands/answer.md",
)
"""The plugin's files, relative to its folder (and to ``forgeflare/templates/claude_plugin``)."""


def default_plugin_dir(home: Path | None = None) -> Path:
    """Where ``install --plugin`` puts the plugin: Claude Code's user skills folder."""
    return (home or Path.home()) / ".claude" / "skills" / "forgeflare"


def plugin_files(forgeflare: str, version: str = __version__) -> dict[str, str]:
    """The plugin's files (relative path -> text) running forgeflare as ``forgeflare``."""
    # Imported here: every Stop loads this module with its package, and never installs.
    from importlib import resources

    root = resources.files("forgeflare.templates").joinpath("claude_plugin")
    out: dict[str, str] = {}
    for rel in PLUGIN_FILES:
        text = root.joinpath(*rel.split("/")).read_text(encoding="utf-8")
        # In JSON the command is a string value: escape it (a path may hold '"' or '\').
        command = json.dumps(forgeflare)[1:-1] if rel.endswith(".json") else forgeflare
        out[rel] = text.replace("@FORGEFLARE@", command).replace("@VERSION@", version)
    return out


def install_plugin(target: Path, forgeflare: str) -> list[Path]:
    """Write the plugin into ``target`` (created if needed); return the files written.

    Files of an earlier install are replaced; other files in ``target`` are left alone.
    """
    written: list[Path] = []
    for rel, text in plugin_files(forgeflare).items():
        path = target / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, text)
        written.append(path)
    return written


class LoopArgs(NamedTuple):
    """What ``/forgeflare:loop <prompt> [--max-iterations N] [--mode M] [--reviewer MODEL]``
    asked for."""

    prompt: str
    max_iterations: int | None = None
    mode: Mode | None = None
    reviewer: str | None = None


# An option with the blanks before it (so removing it leaves single spacing), at the start of
# the text or of a line, or after a blank; its value ends at whitespace.
_OPTION = re.compile(
    r"(?:^|[ \t]+|(?<=\n))--(max-iterations|mode|reviewer)(?:[ \t]*=[ \t]*|[ \t]+)(\S+)(?=\s|$)"
)


def parse_loop_args(text: str) -> LoopArgs:
    """Split the slash command's raw arguments into the prompt and the options (pure).

    Options may stand anywhere, as ``--max-iterations 5`` or ``--mode=grind``; the last of
    each wins. Everything else, with its own spacing and lines, is the prompt. Raises
    :class:`LoopStateError` for a bad value or an empty prompt.
    """
    max_iterations: int | None = None
    mode: Mode | None = None
    reviewer: str | None = None
    for match in _OPTION.finditer(text):
        name, value = match.group(1), match.group(2)
        if name == "max-iterations":
            if not (value.isdecimal() and value.isascii() and int(value) >= 1):
                raise LoopStateError(f"--max-iterations {value!r}: give a whole number >= 1")
            max_iterations = int(value)
        elif name == "reviewer":
            reviewer = value
        else:
            try:
                mode = Mode(value)
            except ValueError:
                known = "|".join(m.value for m in Mode)
                raise LoopStateError(f"--mode {value!r}: choose one of {known}") from None
    prompt = "\n".join(line.rstrip() for line in _OPTION.sub("", text).strip().splitlines())
    if not prompt:
        raise LoopStateError("no task given: /forgeflare:loop <prompt> [--max-iterations N]")
    return LoopArgs(prompt=prompt, max_iterations=max_iterations, mode=mode, reviewer=reviewer)
