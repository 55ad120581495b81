"""The pinned Codex CLI for integration tests (``make codex`` installs it).

Tests that drive the real Codex take :func:`require_codex`: the path of the CLI in
``.cache/codex-VERSION`` (the Makefile's folder for the pin). When it is missing the test is
skipped with the reason, except with ``FORGEFLARE_REQUIRE_CODEX=1`` (set by ``.ci/run``), where
a missing CLI fails the test.

Codex runs offline against the project's Responses API (``forgeflare.mockapi.ResponsesServer``)
through a private ``CODEX_HOME/config.toml`` with a ``[model_providers.mock]`` entry, and a
``TMPDIR`` outside ``CODEX_HOME``.
"""

from __future__ import annotations

import os
from pathlib import Path

from platform_support import require_pinned_cli

REPO = Path(__file__).resolve().parent.parent
VERSION = "0.171.0"
CODEX = REPO / ".cache" / f"codex-{VERSION}" / "node_modules" / ".bin" / "codex"
MODEL = "gpt-5.5"
KEY_VAR = "OPENAI_API_KEY"
"""The variable Codex reads its key from (``env_key``): one the loop passes to Codex."""

__all__ = ["CODEX", "MODEL", "VERSION", "codex_env", "require_codex", "write_codex_home"]


def require_codex() -> Path:
    """The CLI's path, or skip (fail with FORGEFLARE_REQUIRE_CODEX=1) when it is not installed."""
    return require_pinned_cli(CODEX, f"Codex CLI {VERSION}", "codex", "FORGEFLARE_REQUIRE_CODEX")


def write_codex_home(
    home: Path,
    base_url: str,
    *,
    request_retries: int = 0,
    stream_retries: int = 0,
    model: str | None = MODEL,
) -> Path:
    """A private ``CODEX_HOME`` whose provider is the local Responses API at ``base_url``.

    Codex's own retries are settings here (0 by default) so a scenario stays fast.
    ``[features]`` comes last: TOML puts every key after a table header into that table.
    """
    home.mkdir(parents=True, exist_ok=True)
    top = f'model = "{model}"\n' if model else ""
    (home / "config.toml").write_text(
        f'{top}model_provider = "mock"\n\n'
        "[model_providers.mock]\n"
        'name = "mock"\n'
        f'base_url = "{base_url}"\n'
        'wire_api = "responses"\n'
        f'env_key = "{KEY_VAR}"\n'
        f"request_max_retries = {request_retries}\n"
        f"stream_max_retries = {stream_retries}\n"
        "stream_idle_timeout_ms = 5000\n"
        # Codex snapshots the login shell at start; a turn that fails at once leaves that
        # shell running and the loop ends it after a grace: not what these tests are about.
        "\n[features]\nshell_snapshot = false\n"
    )
    return home


def codex_env(home: Path, tmp: Path, **extra: str) -> dict[str, str]:
    """An environment for Codex: its home, a TMPDIR outside it, a test key, no user config."""
    tmp.mkdir(parents=True, exist_ok=True)
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("CODEX_", "OPENAI_", "FRESHER_")) and k != "TMPDIR"
    }
    env.update(CODEX_HOME=str(home), TMPDIR=str(tmp), NO_COLOR="1")
    env[KEY_VAR] = "test-key"
    env.update(extra)
    return env
