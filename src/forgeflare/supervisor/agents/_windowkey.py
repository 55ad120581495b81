"""Which account a usage window belongs to: ``BACKEND[:PROFILE]@ENDPOINT#ACCOUNT`` (pure).

A usage limit is the account's at one API address, not the backend's: the machine's window
store keys each window by the agent (backend and profile), the endpoint it talks to
(``scheme://host[:port][/path]``, no userinfo, query or fragment) and a short hash of the
credential that identifies the account (never the credential). A window learnt against one
endpoint or key therefore does not hold a loop that uses another.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from forgeflare.supervisor.agents._fallback import AgentSpec, parse_agent_spec
from forgeflare.supervisor.backends import AgentAccount

__all__ = [
    "AgentAccount",
    "WindowKey",
    "account_hash",
    "agent_account",
    "endpoint_of",
    "parse_window_key",
]


@dataclass(frozen=True, slots=True, order=True)
class WindowKey:
    """An agent at one endpoint with one account: the window store's key."""

    agent: AgentSpec
    endpoint: str
    account: str

    @property
    def text(self) -> str:
        return f"{self.agent.label}@{self.endpoint}#{self.account}"


def parse_window_key(text: str) -> WindowKey:
    """``BACKEND[:PROFILE]@ENDPOINT#ACCOUNT``, split at the first ``@`` and the last ``#``.

    Raises ``ValueError`` for a key without ``@`` (0.3's keys named the agent only)."""
    agent, at, rest = text.partition("@")
    if not at:
        raise ValueError(f"{text!r} is not BACKEND[:PROFILE]@ENDPOINT#ACCOUNT")
    endpoint, hashed, account = rest.rpartition("#")
    if not hashed:
        endpoint, account = rest, ""
    return WindowKey(parse_agent_spec(agent), endpoint, account)


def endpoint_of(url: str) -> str:
    """``scheme://host[:port][/path]`` of ``url``: no userinfo, query, fragment or final ``/``;
    the scheme and host lower-cased. A value that is no URL gives ``""``."""
    try:
        parts = urlsplit(url.strip())
        host = parts.hostname or ""
        port = parts.port
    except ValueError:
        return ""
    if not parts.scheme or not host:
        return ""
    if ":" in host:
        host = f"[{host}]"
    netloc = f"{host}:{port}" if port is not None else host
    return f"{parts.scheme.lower()}://{netloc}{parts.path.rstrip('/')}"


def account_hash(identity: str) -> str:
    """A short, stable hash of a credential (``""`` for none): names the account, not the key."""
    if not identity:
        return ""
    return hashlib.sha256(identity.encode("utf-8", "replace")).hexdigest()[:12]


def agent_account(
    where: AgentAccount | None, env: Mapping[str, str], *, configured_url: str = ""
) -> tuple[str, str]:
    """``(endpoint, account hash)`` in ``env`` of an agent whose backend finds its API and
    credential ``where`` says (``None``: no known endpoint or account); ``configured_url``
    (from the agent's own config file, like Codex's provider) wins over the variables."""
    if where is None:
        return "", ""
    urls = [configured_url, *(env.get(name, "") for name in where.url_vars)]
    url = next((u.strip() for u in urls if u and u.strip()), where.default_url)
    key = next((env[name] for name in where.key_vars if env.get(name)), "")
    identity = key or (f"{where.home_var}={env[where.home_var]}" if env.get(where.home_var) else "")
    return endpoint_of(url), account_hash(identity)
