"""Secrets stay out of children's environments unless allowed by name.

Hooks, the Bash tool, gates and notify commands run code from the project: they get the
environment without variables that look like secrets. The patterns are a documented default
(:data:`SECRET_PATTERNS`); ``--pass-env NAME`` / ``[security] pass_env`` lets named ones through,
and the agent process itself keeps the key its backend needs (the backend's ``secret_names``).
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Mapping, MutableMapping

__all__ = [
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
    "*_PW",
    "*_PAT",
    "*_SK",
    "*AUTH*",
    "*SESSION*",
    "*COOKIE*",
    "*JWT*",
    "*HOOK_URL",
    "*CONNECTION_STRING*",
    "*CONNSTR*",
    "*CONFIG_DATA",
    "*_IDENTITY",
)
"""Variable names (shell patterns, case-insensitive) treated as secrets. ``*PASS*`` covers
``*PASSWORD*`` and ``*PRIVATE*`` covers ``*PRIVATE*KEY*``; ``*CONNSTR*`` is Azure App
Service's connection strings (``SQLCONNSTR_DB``), ``*CONFIG_DATA`` a whole kubeconfig
(``KUBE_CONFIG_DATA``), ``*_IDENTITY`` an age or ssh identity (``AGE_IDENTITY``)."""

ORDINARY: tuple[str, ...] = (
    "*_PASS_ENV",
    "*PASSENV*",
    "GIT_AUTHOR_*",
    "GIT_COMMITTER_*",
    "XAUTHORITY",
    "XDG_SESSION_*",
    "DBUS_SESSION_BUS_ADDRESS",
    "DESKTOP_SESSION",
    "GNOME_DESKTOP_SESSION_ID",
    "SESSION_MANAGER",
    "TERM_SESSION_ID",
    "FORGEFLARE_KEY_FD",
    "GPG_TTY",
    "PASSWORD_STORE_DIR",
    "*_TOKENS",
    "TOKENIZERS_*",
)
"""Names the patterns catch that hold no secret: lists of names to pass (forgeflare's
``FORGEFLARE_PASS_ENV``, ``FRESHER_SECURITY_PASS_ENV``, tox's ``TOX_TESTENV_PASSENV``), git's
author and committer, the desktop's session (X authority file, D-Bus bus, session type and
manager, a terminal's session id), gpg's terminal, pass's folder, token counts
(``CLAUDE_CODE_MAX_OUTPUT_TOKENS``, ``MAX_THINKING_TOKENS``). They win over the patterns and
over the values below."""

# scheme://user:password@host anywhere; scheme://user@host in a *_URL/*_URI value (a DSN's
# key, a token as user name); password=... in a keyword DSN.
_URL_PASSWORD = re.compile(r"[a-z][a-z0-9+.-]*://[^/@\s:]*:[^/@\s]+@", re.IGNORECASE)
_URL_USER = re.compile(r"[a-z][a-z0-9+.-]*://[^/@\s]+@", re.IGNORECASE)
_URL_QUERY = re.compile(
    r"[?&](?:[a-z_]*token|[a-z_]*key|secret|sig|signature|password|auth)=[^&\s]", re.IGNORECASE
)
_KEYWORD_PASSWORD = re.compile(r"(?:^|\s)(?:password|passwd|pwd)\s*=", re.IGNORECASE)
# Under any name: a connection string's password or account key (ADO.NET, Azure Storage and
# Service Bus), a chat webhook (the URL is the credential), a key by its vendor's prefix, a
# private key, a JWT.
_CONNECTION_SECRET = re.compile(
    r"(?:^|[;\s])(?:password|pwd|accountkey|sharedaccesskey|sharedaccesssignature)\s*=\s*[^;\s]",
    re.IGNORECASE,
)
_WEBHOOK_URL = re.compile(
    r"https?://(?:hooks\.slack\.com/(?:services|workflows|triggers)/"
    r"|(?:[a-z0-9-]+\.)?discord(?:app)?\.com/api/webhooks/"
    r"|[a-z0-9-]+\.webhook\.office\.com/"
    r"|outlook\.office(?:365)?\.com/webhook)",
    re.IGNORECASE,
)
_KEY_PREFIX = re.compile(
    r"(?<![A-Za-z0-9])(?:"
    r"sk-ant-[A-Za-z0-9_-]{16,}"  # Anthropic
    r"|sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"  # OpenAI
    r"|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,}"  # GitHub
    r"|glpat-[A-Za-z0-9_-]{20,}"  # GitLab
    r"|xox[abposr]-[A-Za-z0-9-]{10,}"  # Slack
    r"|(?:AKIA|ASIA)[0-9A-Z]{16}"  # AWS access key id
    r"|AIza[0-9A-Za-z_-]{35}"  # Google
    r"|[rs]k_(?:live|test)_[0-9A-Za-z]{16,}"  # Stripe
    r"|npm_[A-Za-z0-9]{36}"  # npm
    r"|hf_[A-Za-z0-9]{30,}"  # Hugging Face
    r"|pypi-[A-Za-z0-9_-]{50,}"  # PyPI
    r"|AGE-SECRET-KEY-1[0-9A-Z]{50,}"  # age
    r"|eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*"  # JWT
    r")"
    r"|-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----"
)


def is_secret(name: str, value: str = "") -> bool:
    """Does the variable ``name`` (with ``value``) look like a secret?

    By name (:data:`SECRET_PATTERNS`, less :data:`ORDINARY`), or by value under any name but a
    proxy's: a URL with a password in it (``BACKUP=s3://k:s@host``), a connection string's
    ``Password=``/``AccountKey=``, a Slack, Discord or Teams webhook URL, a key with a known
    vendor prefix (``sk-ant-``, ``ghp_``, ``glpat-``, ``xoxb-``, ``AKIA``...), a private key or a
    JWT; and under a name ending ``_URL``/``_URI`` a URL with a user (``SENTRY``-style keys), a
    token in its query, or a keyword DSN's ``password=``.
    """
    upper = name.upper()
    if any(fnmatch.fnmatchcase(upper, pattern) for pattern in ORDINARY):
        return False
    if any(fnmatch.fnmatchcase(upper, pattern) for pattern in SECRET_PATTERNS):
        return True
    if not value or upper.endswith("_PROXY"):
        # Proxies stay: the agent's HTTP client and the tools read them from the environment.
        return False
    if _URL_PASSWORD.search(value) or _carries_credential(value):
        return True
    if upper.endswith(("_URL", "_URI", "_URLS", "_URIS")):
        return bool(
            _URL_USER.search(value) or _URL_QUERY.search(value) or _KEYWORD_PASSWORD.search(value)
        )
    return False


def _carries_credential(value: str) -> bool:
    return bool(
        _KEY_PREFIX.search(value) or _WEBHOOK_URL.search(value) or _CONNECTION_SECRET.search(value)
    )


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
