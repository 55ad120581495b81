"""Secrets stay out of children's environments unless allowed by name.

Hooks, the Bash tool, gates and notify commands run code from the project: they get the
environment without variables that look like secrets. The patterns are a documented default
(:data:`SECRET_PATTERNS`); ``--pass-env NAME`` / ``[security] pass_env`` lets named ones through,
and the agent process itself keeps the key its backend needs (:data:`AGENT_KEYS`).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping, MutableMapping

__all__ = [
    "AGENT_KEYS",
    "PASS_ENV_VAR",
    "SAFE_PATH_ENV",
    "SECRET_PATTERNS",
    "child_environment",
    "is_secret",
    "pass_env_from",
    "scrub_environment",
]

PASS_ENV_VAR = "FORGEFLARE_PASS_ENV"
"""Comma-separated names a loop passes on to its agent (its ``--pass-env``)."""

SECRET_PATTERNS: tuple[str, ...] = (
    "*_API_KEY",
    "*_APIKEY",
    "*_TOKEN",
    "*_SECRET",
    "*_SECRET_KEY",
    "*_PASSWORD",
    "*_PASSWD",
    "*_CREDENTIALS",
    "*_PRIVATE_KEY",
    "*_AUTH",
    "API_KEY",
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "FORGEFLARE_NOTIFY_URLS",
)
"""Variable names (shell patterns, case-insensitive) treated as secrets."""

SAFE_PATH_ENV: dict[str, str] = {"PYTHONSAFEPATH": "1"}
"""Added to the environment of hook scripts: ``python3 .forgeflare/hooks/x.py`` then does not
put the script's (project-writable) directory first on ``sys.path``, so a ``json.py`` planted
beside a trusted hook is not imported. Not given to Bash commands and gates: they run the
project's own code by design, and ``python -m pytest`` relies on the working directory."""

AGENT_KEYS: dict[str, tuple[str, ...]] = {
    "forgeflare": ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"),
    "claude": ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"),
    "codex": ("OPENAI_API_KEY", "CODEX_API_KEY"),
    "command": ("ANTHROPIC_API_KEY", "OPENAI_API_KEY"),
}
"""What each agent backend's process keeps: the key it needs to talk to its API."""


def is_secret(name: str) -> bool:
    """Does ``name`` look like a secret?"""
    upper = name.upper()
    return any(fnmatch.fnmatchcase(upper, pattern) for pattern in SECRET_PATTERNS)


def child_environment(
    env: Mapping[str, str], pass_env: Iterable[str] = (), keep: Iterable[str] = ()
) -> dict[str, str]:
    """``env`` without secret-looking variables, except those in ``pass_env`` and ``keep``."""
    allowed = {n.upper() for n in (*pass_env, *keep)}
    return {k: v for k, v in env.items() if k.upper() in allowed or not is_secret(k)}


def pass_env_from(env: Mapping[str, str], names: Iterable[str] = ()) -> tuple[str, ...]:
    """``names`` plus those listed in ``FORGEFLARE_PASS_ENV``."""
    listed = [n.strip() for n in env.get(PASS_ENV_VAR, "").split(",") if n.strip()]
    return tuple(dict.fromkeys([*names, *listed]))


def scrub_environment(environ: MutableMapping[str, str], pass_env: Iterable[str] = ()) -> list[str]:
    """Remove secret-looking variables from ``environ`` (this process's, so that every child
    inherits the clean copy); returns the names removed. The caller keeps what it needs first.
    """
    allowed = {n.upper() for n in pass_env}
    removed = [k for k in environ if is_secret(k) and k.upper() not in allowed]
    for name in removed:
        del environ[name]
    return removed
