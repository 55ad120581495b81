"""forgeflare's built-in agent hooks, registered through the same API as a user's.

The Bash deny-list check is a PreToolUse guard for every Bash command, hooks configured or
not; it runs in-process, so an agent with no hooks still starts no hook subprocess.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from forgeflare.agent.tools._guard import denied_reason
from forgeflare.hooks import Block, Hook, make_hook

__all__ = ["BASH_CHECK", "builtin_hooks"]

BASH_CHECK = "forgeflare:bash-check"


def builtin_hooks(project_dir: Path | None = None) -> list[Hook]:
    """The built-ins, first in their events (guards run before the user's).

    ``project_dir`` is where Bash runs: the check follows ``cd`` and ``..`` from there.
    """

    def bash_check(input: dict[str, Any]) -> Block | None:
        command = input.get("command")
        if not isinstance(command, str):
            return None  # the Bash tool itself reports a malformed input
        reason = denied_reason(command, cwd=project_dir)
        if reason is None:
            return None
        return Block(f"{reason} (forgeflare's safety guard; nothing ran)")

    return [make_hook(bash_check, "PreToolUse", match="Bash", name=BASH_CHECK)]
