"""The pinned Claude Code CLI for integration tests (``make claude-code`` installs it).

Tests that drive the real Claude Code take the ``claude_code`` fixture: the path of the CLI in
``.cache/claude-code``. When it is missing the test is skipped with the reason, except with
``FORGEFLARE_REQUIRE_CC=1`` (set by ``.ci/run``), where a missing CLI fails the test.
"""

from __future__ import annotations

import os
from pathlib import Path

from platform_support import require_pinned_cli

REPO = Path(__file__).resolve().parent.parent
CLAUDE = REPO / ".cache" / "claude-code" / "node_modules" / ".bin" / "claude"
VERSION = "2.1.197"

__all__ = ["CLAUDE", "VERSION", "claude_env", "require_claude_code"]


def require_claude_code() -> Path:
    """The CLI's path, or skip (fail with FORGEFLARE_REQUIRE_CC=1) when it is not installed."""
    return require_pinned_cli(
        CLAUDE, f"Claude Code {VERSION}", "claude-code", "FORGEFLARE_REQUIRE_CC"
    )


def claude_env(home: Path, url: str, **extra: str) -> dict[str, str]:
    """An environment for ``claude -p`` against the mock: no user settings, root allowed."""
    home.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE"))}
    env.update(
        HOME=str(home),
        ANTHROPIC_BASE_URL=url,
        ANTHROPIC_API_KEY="test-key",
        IS_SANDBOX="1",  # the tests run as root; --dangerously-skip-permissions needs this
        DISABLE_AUTOUPDATER="1",
        NO_COLOR="1",
    )
    env.update(extra)
    return env
