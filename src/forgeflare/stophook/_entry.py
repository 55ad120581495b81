"""The hot path: Claude Code runs ``forgeflare stop-hook`` on every Stop of every session.

Nothing here imports typer, pydantic, rich, trio or httpx: the whole process must cost little
more than a bare interpreter. ``forgeflare.cli.main`` hands a bare ``stop-hook`` to
:func:`run_stop_hook_process` before it loads typer, and so does the ``forgeflare-stop-hook``
console script (``forgeflare.cli.stop_hook_main``) when it has no argument.
"""

from __future__ import annotations

import os
import sys
from datetime import UTC, datetime
from pathlib import Path

from forgeflare.stophook._hook import StopHookOutcome, run_stop_hook

__all__ = ["run_stop_hook_process"]


def run_stop_hook_process() -> int:
    """Run the hook on this process's stdin/environment, print its output, return its status.

    Whatever goes wrong (even an unexpected bug) ends in exit 0: the hook fails open.
    """
    try:
        # Bytes decoded as UTF-8 whatever the locale: Claude Code always sends UTF-8 JSON.
        raw = b"" if sys.stdin is None or sys.stdin.isatty() else sys.stdin.buffer.read()
        stdin_text = raw.decode("utf-8", errors="replace")
        now = datetime.now(UTC)
        outcome = run_stop_hook(stdin_text, environ=os.environ, cwd=Path.cwd(), now=now)
    except Exception as exc:
        note = f"forgeflare stop-hook: internal error ({exc!r}); stop allowed\n"
        outcome = StopHookOutcome(0, "", note)
    try:
        sys.stdout.write(outcome.stdout)
        sys.stdout.flush()
        sys.stderr.write(outcome.stderr)
        sys.stderr.flush()
    except OSError:
        return 0
    return outcome.exit_code
