"""The pinned OpenCode CLI for integration tests (``make opencode`` installs it).

Tests that drive the real OpenCode take :func:`require_opencode`: the path of the CLI in
``.cache/opencode``. When it is missing the test is skipped with the reason, except with
``FORGEFLARE_REQUIRE_OPENCODE=1`` (set by ``.ci/run``), where a missing CLI fails the test.

OpenCode runs offline against the project's Messages mock (``forgeflare mock-api``): its
Anthropic provider reads ``ANTHROPIC_BASE_URL`` (with ``/v1``: it appends ``/messages``) and
``ANTHROPIC_API_KEY``; ``OPENCODE_DISABLE_MODELS_FETCH=1`` keeps it from fetching models.dev; a
private ``HOME`` and ``XDG_*`` keep the user's config, sessions and snapshots out.

Before it loads any plugin (forgeflare's retry plugin is one) OpenCode makes sure its config
folder has ``@opencode-ai/plugin`` installed, by npm: in a fresh home that was an install per
run, 14 to 30 s with a registry reachable and a network timeout without one.
:func:`seed_opencode_config` gives the private home the state a user's has after their first
run (a lock naming the package), so OpenCode skips the install and the tests stay offline.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from platform_support import require_pinned_cli

REPO = Path(__file__).resolve().parent.parent
OPENCODE = REPO / ".cache" / "opencode" / "node_modules" / ".bin" / "opencode"
VERSION = "1.18.33"
MODEL = "anthropic/claude-sonnet-4-5"

__all__ = [
    "MODEL",
    "OPENCODE",
    "QUIET",
    "VERSION",
    "opencode_env",
    "quiet_opencode_env",
    "quiet_opencode_settings",
    "require_opencode",
    "seed_opencode_config",
]


def require_opencode() -> Path:
    """The CLI's path, or skip (fail with FORGEFLARE_REQUIRE_OPENCODE=1) when not installed."""
    return require_pinned_cli(
        OPENCODE, f"OpenCode {VERSION}", "opencode", "FORGEFLARE_REQUIRE_OPENCODE"
    )


def seed_opencode_config(config_home: Path) -> None:
    """Mark ``config_home/opencode`` as having OpenCode's plugin package installed.

    OpenCode (``Npm.install``) installs into a config folder that has no ``node_modules``, or
    whose ``package-lock.json`` lacks a dependency it wants; our plugin imports nothing, so an
    empty ``node_modules`` and a lock naming the package are all it checks.
    """
    folder = config_home / "opencode"
    (folder / "node_modules").mkdir(parents=True, exist_ok=True)
    lock = {"packages": {"": {"dependencies": {"@opencode-ai/plugin": VERSION}}}}
    (folder / "package-lock.json").write_text(json.dumps(lock), encoding="utf-8")


QUIET = {
    "OPENCODE_DISABLE_AUTOUPDATE": "1",
    "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
    "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
    "OPENCODE_EXPERIMENTAL_DISABLE_FILEWATCHER": "1",
    "OPENCODE_DISABLE_SHARE": "1",
    "OPENCODE_DISABLE_CLAUDE_CODE": "1",
    "OPENCODE_DISABLE_EXTERNAL_SKILLS": "1",
    "OPENCODE_DISABLE_PRUNE": "1",
    "OPENCODE_CONFIG_CONTENT": json.dumps({"snapshot": False}),
    # Bun's JavaScriptCore without its DFG optimizing tier: a test's OpenCode lives seconds, and
    # the tier's compiles cost more than they win there (4.0 s of CPU per start, was 4.9).
    "BUN_JSC_useDFGJIT": "0",
}
"""OpenCode's documented switches for what a test run never uses: auto-update, the default
(provider login) plugins, LSP downloads, the file watcher, sharing, Claude Code's files and
external skills, pruning, and the undo snapshots (a git repository of the project per step).
About 1.5 s of CPU less per start (of 8); the stream keeps its events and fields (the recorded
streams have no ``snapshot``). forgeflare adds its retry plugin to this config."""


def _claude(
    model: str, name: str, knowledge: str, released: str, context: int, prices: list[float]
) -> dict[str, object]:
    """One Claude model as models.dev lists it (``prices``: input, output, cache read and
    write, USD per million tokens)."""
    return {
        "id": model,
        "name": name,
        "family": "-".join(model.split("-")[:2]),
        "attachment": True,
        "reasoning": True,
        "reasoning_options": [{"type": "budget_tokens", "min": 1024}],
        "tool_call": True,
        "structured_output": True,
        "temperature": True,
        "knowledge": knowledge,
        "release_date": released,
        "last_updated": released,
        "modalities": {"input": ["text", "image", "pdf"], "output": ["text"]},
        "open_weights": False,
        "limit": {"context": context, "output": 64000},
        "cost": dict(zip(("input", "output", "cache_read", "cache_write"), prices, strict=True)),
    }


MODELS = {
    "anthropic": {
        "id": "anthropic",
        "env": ["ANTHROPIC_API_KEY"],
        "npm": "@ai-sdk/anthropic",
        "name": "Anthropic",
        "doc": "https://docs.anthropic.com/en/docs/about-claude/models",
        "models": {
            "claude-sonnet-4-5": _claude(
                "claude-sonnet-4-5",
                "Claude Sonnet 4.5 (latest)",
                "2025-07-31",
                "2025-09-29",
                1000000,
                [3, 15, 0.3, 3.75],
            ),
            "claude-haiku-4-5-20251001": _claude(
                "claude-haiku-4-5-20251001",
                "Claude Haiku 4.5",
                "2025-02-28",
                "2025-10-15",
                200000,
                [1, 5, 0.1, 1.25],
            ),
        },
    }
}
"""The two models the tests' OpenCode uses (the model, and the small one that names the
session), copied from the models.dev snapshot built into OpenCode 1.18.33 (same prices).
Read through ``OPENCODE_MODELS_PATH`` instead of that snapshot (every provider, about 2 s of
CPU per start to build)."""


def quiet_opencode_settings(folder: Path) -> dict[str, str]:
    """:data:`QUIET` and ``OPENCODE_MODELS_PATH`` naming :data:`MODELS`, written in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    models = folder / "opencode-models.json"
    models.write_text(json.dumps(MODELS), encoding="utf-8")
    return {**QUIET, "OPENCODE_MODELS_PATH": str(models)}


def quiet_opencode_env(home: Path, base_url: str, **extra: str) -> dict[str, str]:
    """:func:`opencode_env` with :func:`quiet_opencode_settings`: what the tests drive, minus
    the start-up work they never read."""
    return opencode_env(home, base_url, **{**quiet_opencode_settings(home), **extra})


def opencode_env(home: Path, base_url: str, **extra: str) -> dict[str, str]:
    """An environment for OpenCode against the Messages mock at ``base_url``: a private home,
    a test key, no models.dev fetch, no user config, no npm install."""
    home.mkdir(parents=True, exist_ok=True)
    seed_opencode_config(home / ".config")
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("OPENCODE_", "ANTHROPIC_", "XDG_", "FRESHER_"))
    }
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_DATA_HOME=str(home / ".local" / "share"),
        XDG_CACHE_HOME=str(home / ".cache"),
        XDG_STATE_HOME=str(home / ".local" / "state"),
        ANTHROPIC_BASE_URL=f"{base_url.rstrip('/')}/v1",
        ANTHROPIC_API_KEY="test-key",
        OPENCODE_DISABLE_MODELS_FETCH="1",
        NO_COLOR="1",
    )
    env.update(extra)
    return env
