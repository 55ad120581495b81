"""The Claude Code backend: ``claude -p --output-format stream-json --verbose``.

Everything forgeflare knows of Claude Code as an agent lives here and in its reader
(:mod:`._claude`): its key handover (a one-shot ``apiKeyHelper``), its account, the offline
facts that make it fail, what it runs from a project, its budget flag and its ``init`` option.
"""

from __future__ import annotations

import json
import os
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from forgeflare.security import AgentBox
from forgeflare.supervisor.backends._backends import (
    AgentAccount,
    AgentSettings,
    InitTemplate,
    LineReader,
    StreamBackend,
    register_backend,
)
from forgeflare.supervisor.backends._claude import ClaudeStreamReader
from forgeflare.trust import TrustItem, claude_items

__all__ = ["HELPER_TTL_ENV", "ClaudeBackend", "claude_problems", "helper_settings"]

HELPER_TTL_ENV = "CLAUDE_CODE_API_KEY_HELPER_TTL_MS"
_HELPER_TTL_MS = str(7 * 24 * 3600 * 1000)  # a week: the one-shot helper is never asked again
_KEYS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN")
_SKIP_PERMISSIONS = ("--dangerously-skip-permissions", "--allow-dangerously-skip-permissions")


def helper_settings(path: Path) -> str:
    """``--settings`` JSON whose ``apiKeyHelper`` prints the key file once and deletes it."""
    quoted = shlex.quote(str(path))
    return json.dumps({"apiKeyHelper": f"cat -- {quoted} && rm -f -- {quoted}"})


def claude_problems(
    env: Mapping[str, str], argv: Sequence[str], permission_mode: str, root: bool
) -> list[str]:
    """What makes every Claude Code iteration fail in ``env`` (pure): a mock named through
    ``ANTHROPIC_API_URL`` (it reads ``ANTHROPIC_BASE_URL``, and says ``Not logged in``), a
    base URL without a key, skipping permissions as root without ``IS_SANDBOX=1``."""
    problems = []
    api_url = env.get("ANTHROPIC_API_URL", "").strip()
    base_url = env.get("ANTHROPIC_BASE_URL", "").strip()
    if api_url and not base_url:
        problems.append(
            f"Claude Code reads ANTHROPIC_BASE_URL, not ANTHROPIC_API_URL (={api_url}): it would "
            f"say `Not logged in`; export ANTHROPIC_BASE_URL={api_url} and ANTHROPIC_API_KEY"
        )
    elif base_url and not any(env.get(name) for name in _KEYS):
        problems.append(
            f"Claude Code at ANTHROPIC_BASE_URL={base_url} needs a key: it would say "
            "`Not logged in`; export ANTHROPIC_API_KEY (any value for a local mock)"
        )
    skips = permission_mode == "bypassPermissions" or any(a in _SKIP_PERMISSIONS for a in argv)
    if root and skips and env.get("IS_SANDBOX") != "1":
        problems.append(
            "Claude Code refuses to skip permissions as root (`--dangerously-skip-permissions "
            "cannot be used with root/sudo privileges`): export IS_SANDBOX=1 in a container or "
            "VM, run as another user, or set [agent] permission_mode to another mode"
        )
    return problems


@register_backend
@dataclass
class ClaudeBackend(StreamBackend):
    """Claude Code headless: ``claude -p --output-format stream-json --verbose``."""

    name: str = "claude"
    secret_names: ClassVar[tuple[str, ...]] = _KEYS
    helper_keys: ClassVar[tuple[str, ...]] = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
    """``CLAUDE_CODE_OAUTH_TOKEN`` (a subscription token) no helper can give: it stays in the
    environment, as the docs ("Agents and accounts") say."""
    helper_env: ClassVar[Mapping[str, str]] = {HELPER_TTL_ENV: _HELPER_TTL_MS}
    """Claude Code keeps the helper's key in memory for this long: beyond a night."""
    box: ClassVar[AgentBox] = "own"
    account: ClassVar[AgentAccount | None] = AgentAccount(
        ("ANTHROPIC_BASE_URL",), "https://api.anthropic.com", _KEYS, "CLAUDE_CONFIG_DIR"
    )
    overshoot: ClassVar[str] = (
        "one API request of Claude Code: --max-budget-usd stops it after the request "
        "that passed it, and the loop ends it when its streamed cost passes the cap"
    )
    init: ClassVar[InitTemplate | None] = InitTemplate(
        "Claude Code (and `forgeflare stop-hook` as its Stop hook)",
        own_settings=("permission_mode",),
        stop_hook=True,
    )
    permission_mode: str = "bypassPermissions"
    program: ClassVar[str] = "claude"
    deterministic_errors: ClassVar[tuple[str, ...]] = (
        r"--dangerously-skip-permissions",
        r"please run /login",
    )
    args: ClassVar[tuple[str, ...]] = ("-p", "--output-format", "stream-json", "--verbose")
    demo_api: ClassVar[str | None] = "messages"
    install_hint: ClassVar[str] = "npm install -g @anthropic-ai/claude-code"

    def demo_env(self, url: str, scratch: Path) -> dict[str, str]:
        """Claude Code reads ``ANTHROPIC_BASE_URL`` (not ``ANTHROPIC_API_URL``) and a key; as
        root it runs without permission prompts only with ``IS_SANDBOX=1``; its settings go to
        a configuration folder of the demo's own (the user's stay untouched)."""
        config = scratch / "claude-config"
        config.mkdir(parents=True, exist_ok=True)
        env = {
            "ANTHROPIC_BASE_URL": url,
            "ANTHROPIC_API_KEY": "demo-key-offline",
            "CLAUDE_CONFIG_DIR": str(config),
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
        }
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            env["IS_SANDBOX"] = "1"
        return env

    def configure(self, agent: AgentSettings) -> None:
        self.permission_mode = agent.permission_mode

    def options(self) -> list[str]:
        return ["--permission-mode", self.permission_mode] if self.permission_mode else []

    def budget_argv(self, left_usd: float) -> list[str]:
        # Claude Code checks it between API requests: one request can still pass it.
        return ["--max-budget-usd", f"{max(0.0, left_usd):.6f}"]

    def reader(self) -> LineReader:
        return ClaudeStreamReader()

    def problems(self, env: Mapping[str, str], argv: Sequence[str], *, root: bool) -> list[str]:
        return claude_problems(env, argv, self.permission_mode, root)

    def trust_items(self, project: Path, extra_args: str) -> list[TrustItem]:
        """Claude Code runs the hooks, helpers and MCP servers its settings files, ``.mcp.json``
        and the ``--settings`` files of ``extra_args`` name."""
        return claude_items(project, extra_args)

    def helper_argv(self, key_file: Path) -> list[str]:
        return ["--settings", helper_settings(key_file)]
