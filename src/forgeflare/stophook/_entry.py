"""The hot path: Claude Code runs ``forgeflare stop-hook`` on every Stop of every session.

The process must cost little more than a bare interpreter. The quick Stop (``_quick``)
answers the two common Stops: no loop here (``json`` and ``os`` only), and a running loop
whose message claims nothing (``_quickloop``: ``json``, ``datetime`` and a few small modules
of this package); anything else goes to the full hook (``_hook``), which loads the state
machine. Neither loads typer, pydantic, rich, trio, httpx or dataclasses.
``forgeflare.cli.main`` hands a bare ``stop-hook`` to
:func:`run_stop_hook_process` before it loads typer, and so does the ``forgeflare-stop-hook``
console script (``forgeflare.cli.stop_hook_main``) when it has no argument.
"""

from __future__ import annotations

import os
import sys

from forgeflare.stophook._quick import quick_stop

# Annotations only, and without importing typing (as forgeflare.cli does): mypy treats any
# name TYPE_CHECKING as true; at run time it is False.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from forgeflare.stophook._check import SettingsFor

__all__ = ["run_stop_hook_process"]


def run_stop_hook_process(settings_for: SettingsFor | None = None) -> int:
    """Run the hook on this process's stdin/environment, print its output, return its status.

    ``settings_for`` reads a project's ``[security]`` for a claim's gate (the caller knows
    the configuration; the hook stays below it). Whatever goes wrong (even an unexpected
    bug) ends in exit 0: the hook fails open.
    """
    try:
        # Bytes decoded as UTF-8 whatever the locale: Claude Code always sends UTF-8 JSON.
        raw = b"" if sys.stdin is None or sys.stdin.isatty() else sys.stdin.buffer.read()
        stdin_text = raw.decode("utf-8", errors="replace")
        cwd = os.getcwd()
        try:
            outcome = quick_stop(stdin_text, environ=os.environ, cwd=cwd)
        except Exception:  # the full hook decides again, and says what went wrong
            outcome = None
        if outcome is None:
            outcome = _full_hook(stdin_text, cwd, settings_for)
    except Exception as exc:
        note = f"forgeflare stop-hook: internal error ({exc!r}); stop allowed\n"
        outcome = (0, "", note)
    code, stdout, stderr = outcome
    try:
        sys.stdout.write(stdout)
        sys.stdout.flush()
        sys.stderr.write(stderr)
        sys.stderr.flush()
    except OSError:
        return 0
    return code


def _full_hook(stdin_text: str, cwd: str, settings_for: SettingsFor | None) -> tuple[int, str, str]:
    from datetime import UTC, datetime
    from pathlib import Path

    from forgeflare.stophook._hook import run_stop_hook

    now = datetime.now(UTC)
    return run_stop_hook(
        stdin_text, environ=os.environ, cwd=Path(cwd), now=now, settings_for=settings_for
    )
