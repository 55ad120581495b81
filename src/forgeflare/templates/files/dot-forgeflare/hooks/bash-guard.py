#!/usr/bin/env python3
"""PreToolUse guard for Bash: blocks destructive commands, allows the rest.

Reads the hook JSON on stdin ({"tool": "Bash", "input": {"command": ...}, ...}) and prints
{"action": "allow"} or {"action": "block", "reason": ...}. The agent shows the reason to the
model as the tool's error, so each reason says what was refused and what to do instead.

The check is forgeflare's built-in Bash deny-list (`forgeflare init` copies it in between
the markers below: edit rules above or below them, not between) in its strict mode, which
also refuses any recursive rm, git reset --hard, git clean -f, git checkout -- . and shred.
Commands are read the way a shell reads them, in linear time: quotes, wrappers (sudo, env,
nohup, timeout, busybox, chroot, flock...), bash -c and eval strings, text piped into a shell
or xargs, and the working directory through cd, pushd, popd and subshells (the event's "cwd"
is where it starts). It is a seat belt, not a sandbox: it cannot see through code. Standard
library only (any Python 3.7+), so it runs on a fresh machine.
"""

from __future__ import annotations

import base64  # noqa: F401  (the core that init writes in below uses these)
import binascii  # noqa: F401
import bisect  # noqa: F401
import json
import os
import re  # noqa: F401
import sys

# --- guard core begin ---
# `forgeflare init` writes forgeflare's Bash deny-list core here.
# --- guard core end ---


def check(command: str, cwd: str | None = None) -> str | None:
    """A reason to block ``command`` run in ``cwd``, or None."""
    home = os.path.expanduser("~")
    # check_command is the core that `forgeflare init` writes between the markers above.
    reason: str | None = check_command(  # type: ignore[name-defined]  # noqa: F821
        command, strict=True, cwd=cwd, home=home if home.startswith("/") else None
    )
    return reason


def main() -> None:
    try:
        event = json.load(sys.stdin)
        command = str((event.get("input") or {}).get("command") or "")
        cwd = event.get("cwd")
    except (ValueError, AttributeError):
        print(json.dumps({"action": "block", "reason": "bash-guard: unreadable hook input"}))
        return
    reason = check(command, cwd if isinstance(cwd, str) else None)
    if reason:
        print(json.dumps({"action": "block", "reason": f"destructive command: {reason}"}))
    else:
        print(json.dumps({"action": "allow"}))


if __name__ == "__main__":
    main()
