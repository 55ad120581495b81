"""The pinned pi coding agent for integration tests (``make pi`` installs it).

Tests that drive the real pi take :func:`require_pi`: the path of the CLI in ``.cache/pi``.
When it is missing the test is skipped with the reason, except with ``FORGEFLARE_REQUIRE_PI=1``
(set by ``.ci/run``), where a missing CLI fails the test.

pi runs offline against the project's Messages mock (``forgeflare mock-api``): it reads no
base-URL variable, so a private ``PI_CODING_AGENT_DIR`` holds a ``models.json`` whose
``providers.anthropic.baseUrl`` is the mock and a ``settings.json`` with pi's own retries off
(each scenario stays fast); ``PI_OFFLINE=1`` skips its start-up network calls.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from platform_support import require_pinned_cli

REPO = Path(__file__).resolve().parent.parent
PI = REPO / ".cache" / "pi" / "node_modules" / ".bin" / "pi"
VERSION = "0.73.1"
MODEL = "anthropic/claude-sonnet-4-5"

__all__ = ["MODEL", "PI", "VERSION", "pi_env", "require_pi"]


def require_pi() -> Path:
    """The CLI's path, or skip (fail with FORGEFLARE_REQUIRE_PI=1) when it is not installed."""
    return require_pinned_cli(PI, f"pi {VERSION}", "pi", "FORGEFLARE_REQUIRE_PI")


def pi_env(home: Path, base_url: str, *, retries: int = 0, **extra: str) -> dict[str, str]:
    """An environment for pi against the Messages mock at ``base_url``: a private home and
    agent folder naming the mock, a test key, pi's retries at ``retries``."""
    agent_dir = home / ".pi" / "agent"
    agent_dir.mkdir(parents=True, exist_ok=True)
    models = {"providers": {"anthropic": {"baseUrl": base_url}}}
    (agent_dir / "models.json").write_text(json.dumps(models), encoding="utf-8")
    settings = {"retry": {"maxRetries": retries, "provider": {"maxRetries": 0}}}
    (agent_dir / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("PI_", "ANTHROPIC_", "FRESHER_"))
    }
    env.update(
        HOME=str(home),
        PI_CODING_AGENT_DIR=str(agent_dir),
        PI_OFFLINE="1",
        ANTHROPIC_API_KEY="test-key",
        NO_COLOR="1",
    )
    env.update(extra)
    return env
