"""Offline facts that make every iteration of an agent fail, found before the night (pure).

Each was a night lost: Claude Code pointed at a mock through ``ANTHROPIC_API_URL`` (it reads
``ANTHROPIC_BASE_URL``, and says ``Not logged in``), Claude Code as root without
``IS_SANDBOX=1`` (it refuses ``--dangerously-skip-permissions`` / ``bypassPermissions``), an
agent's executable missing. :func:`agent_problems` names each with its fix in one line; the
loop's preflight raises the first (exit 2), ``forgeflare doctor`` prints them all.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

__all__ = ["agent_problems"]

_CLAUDE_KEYS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN")
_UNCONFINED = ("danger-full-access", "--dangerously-bypass-approvals-and-sandbox")
_SKIP_PERMISSIONS = ("--dangerously-skip-permissions", "--allow-dangerously-skip-permissions")


def _claude(
    env: Mapping[str, str], argv: Sequence[str], permission_mode: str, root: bool
) -> list[str]:
    problems = []
    api_url = env.get("ANTHROPIC_API_URL", "").strip()
    base_url = env.get("ANTHROPIC_BASE_URL", "").strip()
    if api_url and not base_url:
        problems.append(
            f"Claude Code reads ANTHROPIC_BASE_URL, not ANTHROPIC_API_URL (={api_url}): it would "
            f"say `Not logged in`; export ANTHROPIC_BASE_URL={api_url} and ANTHROPIC_API_KEY"
        )
    elif base_url and not any(env.get(name) for name in _CLAUDE_KEYS):
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


def _under(path: str, root: str) -> bool:
    path = path.rstrip("/") or "/"
    return path == root or path.startswith(root + "/")


def _codex(env: Mapping[str, str], argv: Sequence[str], helper_found: bool) -> list[str]:
    home = env.get("CODEX_HOME", "")
    tmpdir = env.get("TMPDIR", "").rstrip("/")
    unconfined = any(a in _UNCONFINED for a in argv)
    if helper_found or unconfined or not _under(home, "/tmp") or tmpdir not in ("", "/tmp"):
        return []
    # Codex links its sandbox helper under $CODEX_HOME/tmp/arg0; its sandbox gives commands
    # a fresh /tmp when TMPDIR is /tmp, so the link is gone when bwrap starts it.
    return [
        f"Codex's sandbox helper (codex-linux-sandbox) would be under CODEX_HOME={home}, which "
        "its sandbox hides (/tmp): every command would fail with `bwrap: execvp "
        "codex-linux-sandbox`; move CODEX_HOME out of /tmp (or put codex-linux-sandbox on PATH)"
    ]


def agent_problems(
    backend: str,
    env: Mapping[str, str],
    *,
    argv: Sequence[str] = (),
    permission_mode: str = "",
    root: bool = False,
    codex_helper_found: bool = False,
) -> list[str]:
    """What would make every iteration of ``backend``'s agent fail in ``env``: one line each,
    with the fix. ``argv`` is the agent's command, ``root`` whether the loop runs as root,
    ``codex_helper_found`` whether ``codex-linux-sandbox`` is on ``PATH``."""
    if backend == "claude":
        return _claude(env, argv, permission_mode, root)
    if backend == "codex":
        return _codex(env, argv, codex_helper_found)
    return []
