"""Secrets stay out of children's environments unless allowed by name.

Hooks, the Bash tool, gates and notify commands run code from the project: they get the
environment without variables that look like secrets. The patterns are a documented default
(:data:`SECRET_PATTERNS`); ``--pass-env NAME`` / ``[security] pass_env`` lets named ones through,
and the agent process itself keeps the key its backend needs (:data:`AGENT_KEYS`).
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Mapping, MutableMapping

__all__ = [
    "AGENT_KEYS",
    "ORDINARY",
    "PASS_ENV_VAR",
    "SECRET_PATTERNS",
    "child_environment",
    "is_secret",
    "pass_env_from",
    "scrub_environment",
]

PASS_ENV_VAR = "FORGEFLARE_PASS_ENV"
"""Comma-separated names a loop passes on to its agent (its ``--pass-env``)."""

SECRET_PATTERNS: tuple[str, ...] = (
    "*TOKEN*",
    "*SECRET*",
    "*PASS*",
    "*APIKEY*",
    "*API_KEY*",
    "*_KEY",
    "*KEY_*",
    "KEY",
    "*_PWD",
    "*PASSWD*",
    "*CREDENTIAL*",
    "*PRIVATE*",
    "*WEBHOOK*",
    "*_AUTH",
    "*_DSN",
    "SSH_AUTH_SOCK",
    "GPG_*",
    "FORGEFLARE_NOTIFY_URLS",
)
"""Variable names (shell patterns, case-insensitive) treated as secrets."""

ORDINARY: tuple[str, ...] = (
    "*_PASS_ENV",
    "FORGEFLARE_KEY_FD",
    "GPG_TTY",
    "PASSWORD_STORE_DIR",
    "*_TOKENS",
    "TOKENIZERS_*",
)
"""Names the patterns catch that hold no secret: forgeflare's own (``FORGEFLARE_PASS_ENV``,
``FRESHER_SECURITY_PASS_ENV``: lists of names), gpg's terminal, pass's
folder, token counts (``CLAUDE_CODE_MAX_OUTPUT_TOKENS``, ``MAX_THINKING_TOKENS``)."""

# scheme://user:password@host anywhere; scheme://user@host in a *_URL/*_URI value (a DSN's
# key, a token as user name); password=... in a keyword DSN.
_URL_PASSWORD = re.compile(r"[a-z][a-z0-9+.-]*://[^/@\s:]*:[^/@\s]+@", re.IGNORECASE)
_URL_USER = re.compile(r"[a-z][a-z0-9+.-]*://[^/@\s]+@", re.IGNORECASE)
_URL_QUERY = re.compile(
    r"[?&](?:[a-z_]*token|[a-z_]*key|secret|sig|signature|password|auth)=[^&\s]", re.IGNORECASE
)
_KEYWORD_PASSWORD = re.compile(r"(?:^|\s)(?:password|passwd|pwd)\s*=", re.IGNORECASE)

AGENT_KEYS: dict[str, tuple[str, ...]] = {
    "forgeflare": ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"),
    "claude": ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"),
    "codex": ("OPENAI_API_KEY", "CODEX_API_KEY"),
    "command": ("ANTHROPIC_API_KEY", "OPENAI_API_KEY"),
}
"""What each agent backend's process keeps: the key it needs to talk to its API."""


def is_secret(name: str, value: str = "") -> bool:
    """Does the variable ``name`` (with ``value``) look like a secret?

    By name (:data:`SECRET_PATTERNS`, less :data:`ORDINARY`), or by value: a URL with a
    password in it under any name but a proxy's (``BACKUP=s3://k:s@host``), and under a name ending
    ``_URL``/``_URI`` a URL with a user (``SENTRY``-style keys), a token in its query, or a
    keyword DSN's ``password=``.
    """
    upper = name.upper()
    if any(fnmatch.fnmatchcase(upper, pattern) for pattern in ORDINARY):
        return False
    if any(fnmatch.fnmatchcase(upper, pattern) for pattern in SECRET_PATTERNS):
        return True
    if not value or upper.endswith("_PROXY"):
        # Proxies stay: the agent's HTTP client and the tools read them from the environment.
        return False
    if _URL_PASSWORD.search(value):
        return True
    if upper.endswith(("_URL", "_URI", "_URLS", "_URIS")):
        return bool(
            _URL_USER.search(value) or _URL_QUERY.search(value) or _KEYWORD_PASSWORD.search(value)
        )
    return False


def child_environment(
    env: Mapping[str, str], pass_env: Iterable[str] = (), keep: Iterable[str] = ()
) -> dict[str, str]:
    """``env`` without secret-looking variables, except those in ``pass_env`` and ``keep``."""
    allowed = {n.upper() for n in (*pass_env, *keep)}
    return {k: v for k, v in env.items() if k.upper() in allowed or not is_secret(k, v)}


def pass_env_from(env: Mapping[str, str], names: Iterable[str] = ()) -> tuple[str, ...]:
    """``names`` plus those listed in ``FORGEFLARE_PASS_ENV``."""
    listed = [n.strip() for n in env.get(PASS_ENV_VAR, "").split(",") if n.strip()]
    return tuple(dict.fromkeys([*names, *listed]))


def scrub_environment(environ: MutableMapping[str, str], pass_env: Iterable[str] = ()) -> list[str]:
    """Remove secret-looking variables from ``environ`` (this process's, so that every child
    inherits the clean copy); returns the names removed. The caller keeps what it needs first.
    """
    allowed = {n.upper() for n in pass_env}
    removed = [k for k, v in environ.items() if is_secret(k, v) and k.upper() not in allowed]
    for name in removed:
        del environ[name]
    return removed
