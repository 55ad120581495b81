"""Where a project's loop state lives: the user's state directory, never the project.

A repository cannot carry state for its reader's Claude Code session: the hook acts only on
the file ``stop-hook start`` (or the plugin's ``/forgeflare:loop``, which runs it) wrote under
``$XDG_STATE_HOME/forgeflare/stop-hook`` (``~/.local/state/...`` on Linux), one file per
project named after the project's real path. The places 0.3 used inside the project are
named only to say, in one line, that they are ignored. Plain strings and ``os.path``: the
quick Stop loads this module, and ``pathlib`` would cost it more than everything here.
"""

from __future__ import annotations

import os
import sys

__all__ = [
    "DISABLE_FILE",
    "LEGACY_FILES",
    "STATE_DIRNAME",
    "legacy_files",
    "legacy_note",
    "lock_file",
    "project_of",
    "state_dir",
    "state_file",
    "state_name",
]

STATE_DIRNAME = "stop-hook"
LEGACY_FILES = (".forgeflare/loop-state.json", ".claude/idle-loop.local.md")
"""Where 0.3 (and the idle plugin) kept a loop's state inside the project: never read now."""
DISABLE_FILE = ".idle-disabled"
"""A file in the project that turns the hook off there (the idle plugin's switch)."""
_MAX_NAME_BYTES = 200
_HEAD_BYTES = 100


def state_dir() -> str:
    """The folder of every project's loop state: ``$XDG_STATE_HOME/forgeflare/stop-hook``
    (``~/.local/state/forgeflare/stop-hook`` on Linux), where the usage-window store's
    ``platformdirs`` finds the user's state directory too."""
    base = os.environ.get("XDG_STATE_HOME", "")
    if base.strip():
        return os.path.join(base, "forgeflare", STATE_DIRNAME)
    if sys.platform.startswith("linux"):  # platformdirs' answer, without loading it per Stop
        return os.path.join(os.path.expanduser("~"), ".local", "state", "forgeflare", STATE_DIRNAME)
    import platformdirs

    return os.path.join(platformdirs.user_state_dir("forgeflare"), STATE_DIRNAME)


def state_name(real_path: str) -> str:
    """The file name (without suffix) of the state of the project at ``real_path`` (pure).

    The path spelled out with ``%`` and ``/`` escaped, so that the name says whose loop it is
    and two projects never share one; a name too long for a file system ends in a hash of the
    whole path instead.
    """
    name = real_path.lstrip("/").replace("%", "%25").replace("/", "%2F") or "%2F"
    raw = os.fsencode(name)
    if len(raw) <= _MAX_NAME_BYTES:
        return name
    import hashlib

    digest = hashlib.sha256(os.fsencode(real_path)).hexdigest()[:32]
    return f"{os.fsdecode(raw[:_HEAD_BYTES])}%%{digest}"


def state_file(project: str | os.PathLike[str]) -> str:
    """Where the loop state of ``project`` (by its real path) lives on this machine."""
    return os.path.join(state_dir(), state_name(os.path.realpath(project)) + ".json")


def lock_file(state: str) -> str:
    """The lock file beside a state file."""
    return state[: -len(".json")] + ".lock" if state.endswith(".json") else state + ".lock"


def legacy_files(project: str | os.PathLike[str]) -> list[str]:
    """The 0.3 state files inside ``project``: a clone can carry them, so they are never
    acted on (a repository must not drive its reader's session)."""
    found = (os.path.join(project, rel) for rel in LEGACY_FILES)
    return [path for path in found if os.path.isfile(path)]


def legacy_note(path: str | os.PathLike[str]) -> str:
    """The one line that says a project's own state file is ignored, and what to do instead."""
    return (
        f"{os.fspath(path)}: ignored: a loop's state lives in your state directory now, never "
        "in the project (a clone can carry this file); start the loop with "
        "'forgeflare stop-hook start'"
    )


def project_of(payload: dict[str, object], cwd: str) -> str:
    """The project a Stop is about: the input's ``cwd`` when it names a folder (relative to
    the hook's own working directory), else the hook's working directory."""
    claimed = payload.get("cwd")
    if isinstance(claimed, str) and claimed and "\0" not in claimed:
        candidate = os.path.join(cwd, claimed)
        if os.path.isdir(candidate):
            return candidate
    return cwd
