"""``forgeflare stop-hook install``: add the Stop hook to ``.claude/settings.json``.

Claude Code's format is ``{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": …}]}]}}``.
The merge keeps every key, hook and matcher group already there, appends one group for our
command only when no group runs forgeflare's stop-hook yet (idempotent; an older spelling of
it, such as a bare ``forgeflare stop-hook``, is updated in place so the hook never runs twice),
and never overwrites a file it cannot parse.

Claude Code runs hook commands with its own ``PATH``, where a virtual environment's
``forgeflare`` usually is not: :func:`hook_command` names the executable by its absolute path
(or the venv's python ``-P -m forgeflare``), and :func:`command_problem` says when a command
would not run (Claude Code would get exit 127 and the loop would silently never block).
"""

from __future__ import annotations

import copy
import json
import os
import shlex
import sys
from pathlib import Path
from typing import Any

from forgeflare.disk import atomic_write_text
from forgeflare.stophook._errors import SettingsFileError

__all__ = [
    "DEFAULT_COMMAND",
    "HOOK_TIMEOUT_S",
    "PORTABLE_COMMAND",
    "PORTABLE_RELPATH",
    "PORTABLE_SCRIPT",
    "SETTINGS_RELPATH",
    "command_problem",
    "forgeflare_command",
    "hook_command",
    "install_hook",
    "is_stop_hook_command",
    "merge_stop_hook",
    "write_portable_wrapper",
]

HOOK_TIMEOUT_S = 700
"""The Stop hook's timeout in the settings it installs (Claude Code's default is 600 s): room
for a claim's gate (600 s), its reviewer (45 s) and the state lock; at its timeout Claude Code
lets the stop through unverified."""

DEFAULT_COMMAND = "forgeflare stop-hook"
SETTINGS_RELPATH = Path(".claude") / "settings.json"


def forgeflare_command(python: str | None = None) -> str:
    """How to run this forgeflare without ``PATH``: its absolute executable, else ``python -m``.

    ``python`` defaults to the running interpreter; its ``bin`` directory is where the
    ``forgeflare`` script of the same installation lives. Symlinks are not resolved: a venv's
    python is a link out of the venv.
    """
    interpreter = Path(python or sys.executable).absolute()
    script = interpreter.parent / "forgeflare"
    if script.is_file() and os.access(script, os.X_OK):
        return shlex.quote(str(script))
    # -P: Claude Code runs hooks in the project, which must not be first on sys.path.
    return f"{shlex.quote(str(interpreter))} -P -m forgeflare"


def hook_command(python: str | None = None) -> str:
    """The Stop hook command for this forgeflare (see :func:`forgeflare_command`)."""
    return f"{forgeflare_command(python)} stop-hook"


PORTABLE_RELPATH = Path(".claude") / "forgeflare-stop-hook"
PORTABLE_COMMAND = '"$CLAUDE_PROJECT_DIR"/.claude/forgeflare-stop-hook'
"""The Stop hook of a committed settings.json: a project-relative wrapper, no machine path."""

PORTABLE_SCRIPT = """\
#!/bin/sh
# forgeflare's Stop hook for a .claude/settings.json committed with the project: it finds
# forgeflare on the machine it runs on (the project's .venv, then PATH), so the settings hold
# no machine-specific path. Commit this file together with .claude/settings.json.
dir="${CLAUDE_PROJECT_DIR:-$(cd "$(dirname "$0")/.." && pwd)}"
for f in "$dir/.venv/bin/forgeflare" "$(command -v forgeflare 2>/dev/null)"; do
  if [ -n "$f" ] && [ -x "$f" ]; then exec "$f" stop-hook; fi
done
echo "forgeflare stop-hook: forgeflare is not in $dir/.venv or on PATH: the stop is allowed" >&2
exit 0
"""


def write_portable_wrapper(project_dir: Path) -> Path:
    """Write ``.claude/forgeflare-stop-hook`` (executable) and return its path."""
    path = project_dir / PORTABLE_RELPATH
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, PORTABLE_SCRIPT)
    path.chmod(0o755)
    return path


def is_stop_hook_command(command: str) -> bool:
    """Whether ``command`` runs forgeflare's stop-hook (any path, ``python -m forgeflare``,
    the ``forgeflare-stop-hook`` script or the portable wrapper of that name)."""
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    if len(words) == 1 and Path(words[0]).name == "forgeflare-stop-hook":
        return True
    if len(words) >= 2 and Path(words[0]).name == "forgeflare":
        return words[1:] == ["stop-hook"]
    flags = [w for w in words[1:] if w == "-P"]
    rest = words[1 + len(flags) :]
    return len(words) >= 4 and rest == ["-m", "forgeflare", "stop-hook"]


def command_problem(command: str, *, path: str | None = None) -> str | None:
    """Why Claude Code could not run ``command`` (``None`` when it can, as far as one can tell).

    A bare name must be on ``path`` (default: this process's ``PATH``), and even then Claude
    Code may run with another one; a path must be an executable file.
    """
    try:
        words = shlex.split(command)
    except ValueError as exc:
        return f"{command!r} is not a valid shell command ({exc})"
    if not words:
        return "the command is empty"
    program = words[0]
    if "/" not in program:
        import shutil  # here: the Stop hot path imports this module but never looks up programs

        if shutil.which(program, path=path) is None:
            return (
                f"{program!r} is not on PATH, so Claude Code would fail with exit 127 and "
                "the loop would never block; give its absolute path"
            )
        return None
    if not Path(program).is_absolute():
        return f"{program!r} is relative: Claude Code resolves it against its own directory"
    if not (Path(program).is_file() and os.access(program, os.X_OK)):
        return f"{program!r} is not an executable file; Claude Code could not run it"
    return None


def merge_stop_hook(settings: object, command: str) -> tuple[dict[str, Any], bool]:
    """``settings`` with a Stop hook running ``command`` and whether anything was added (pure).

    Raises :class:`SettingsFileError` (its message says which part) when ``settings`` is not
    an object, or ``hooks`` / ``hooks.Stop`` / a group's ``hooks`` has the wrong type.
    """
    if not isinstance(settings, dict):
        raise SettingsFileError("the top level is not a JSON object")
    merged: dict[str, Any] = copy.deepcopy(settings)
    hooks = merged.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise SettingsFileError("'hooks' is not a JSON object")
    stop = hooks.setdefault("Stop", [])
    if not isinstance(stop, list):
        raise SettingsFileError("'hooks.Stop' is not a JSON array")
    for index, group in enumerate(stop):
        inner = group.get("hooks", []) if isinstance(group, dict) else None
        if not isinstance(inner, list):
            raise SettingsFileError(f"'hooks.Stop[{index}].hooks' is not a JSON array")
        for hook in inner:
            if (
                isinstance(hook, dict)
                and hook.get("type") == "command"
                and isinstance(hook.get("command"), str)
                and hook["command"].strip() == command.strip()
            ):
                return copy.deepcopy(settings), False
    if is_stop_hook_command(command):
        for group in stop:
            for hook in group.get("hooks", []):
                if (
                    isinstance(hook, dict)
                    and hook.get("type") == "command"
                    and isinstance(hook.get("command"), str)
                    and is_stop_hook_command(hook["command"])
                ):
                    # Another spelling of our hook (say, a bare name that is not on Claude
                    # Code's PATH): update it rather than run the hook twice per stop.
                    hook["command"] = command
                    hook.setdefault("timeout", HOOK_TIMEOUT_S)
                    return merged, True
    stop.append({"hooks": [{"type": "command", "command": command, "timeout": HOOK_TIMEOUT_S}]})
    return merged, True


def install_hook(project_dir: Path, *, command: str = DEFAULT_COMMAND) -> tuple[Path, bool]:
    """Merge the Stop hook into the project's settings; return the file and whether it changed.

    Raises :class:`SettingsFileError` naming the file when it is unreadable or not valid JSON
    of the expected shape; the file is then left untouched.
    """
    path = project_dir / SETTINGS_RELPATH
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raw = ""
    except (OSError, UnicodeDecodeError) as exc:
        raise SettingsFileError(f"{path}: cannot read: {exc}") from exc
    if raw.strip():
        try:
            settings: object = json.loads(raw)
        except ValueError as exc:
            raise SettingsFileError(
                f"{path}: not valid JSON ({exc}); fix it by hand, it was not changed"
            ) from exc
    else:
        settings = {}
    try:
        merged, changed = merge_stop_hook(settings, command)
    except SettingsFileError as exc:
        raise SettingsFileError(f"{path}: {exc}; it was not changed") from exc
    if changed:
        atomic_write_text(path, json.dumps(merged, indent=2, ensure_ascii=False) + "\n")
    return path, changed
