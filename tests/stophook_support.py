"""What a ``forgeflare stop-hook`` process answered Claude Code: a block (the session goes on with
a continuation) is exit 0 with the continuation as JSON on stdout, never exit 2."""

from __future__ import annotations

import subprocess

from forgeflare.stophook import continued

__all__ = ["blocks", "reason_of"]


def blocks(out: subprocess.CompletedProcess[str]) -> bool:
    """Whether the hook kept the session going (exit 0 and a continuation on stdout)."""
    return out.returncode == 0 and continued(out.stdout) is not None


def reason_of(out: subprocess.CompletedProcess[str]) -> str:
    """The continuation the hook gave the model; fails the test when it let the stop happen."""
    reason = continued(out.stdout)
    assert reason is not None, (out.returncode, out.stdout, out.stderr)
    return reason
