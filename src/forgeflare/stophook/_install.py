"""``forgeflare stop-hook install``: add the Stop hook to ``.claude/settings.json``.

Claude Code's format is ``{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": …}]}]}}``.
The merge keeps every key, hook and matcher group already there, appends one group for our
command only when no group runs it yet (idempotent), and never overwrites a file it cannot
parse.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from forgeflare._fsutil import atomic_write_text
from forgeflare.stophook._errors import SettingsFileError

__all__ = ["DEFAULT_COMMAND", "SETTINGS_RELPATH", "install_hook", "merge_stop_hook"]

DEFAULT_COMMAND = "forgeflare stop-hook"
SETTINGS_RELPATH = Path(".claude") / "settings.json"


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
    stop.append({"hooks": [{"type": "command", "command": command}]})
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
