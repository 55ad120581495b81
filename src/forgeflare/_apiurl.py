"""Where the Messages API is: ``--api-url``, ``ANTHROPIC_API_URL``, ``ANTHROPIC_BASE_URL``.

Apart from the client so that the loop's preflight checks the URL without importing the agent.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from forgeflare._errors import ConfigError

__all__ = ["DEFAULT_BASE_URL", "checked_base_url", "plainly_url", "resolve_base_url"]

DEFAULT_BASE_URL = "https://api.anthropic.com"


def resolve_base_url(flag: str | None, env: Mapping[str, str]) -> str:
    """The API base URL: ``--api-url``, ``ANTHROPIC_API_URL``, ``ANTHROPIC_BASE_URL``, default.

    Trailing ``/`` are stripped so paths join cleanly; values left empty count as unset.
    """
    for candidate in (flag, env.get("ANTHROPIC_API_URL"), env.get("ANTHROPIC_BASE_URL")):
        url = (candidate or "").strip().rstrip("/")
        if url:
            return url
    return DEFAULT_BASE_URL


def checked_base_url(flag: str | None, env: Mapping[str, str]) -> str:
    """:func:`resolve_base_url`, refusing a value that is no http(s) URL with a host.

    Raises :class:`ConfigError` (exit 2) naming where the value came from, so ``notaurl`` is
    a usage error before anything starts, not a failed request later.
    """
    sources = (
        ("--api-url", flag),
        ("ANTHROPIC_API_URL", env.get("ANTHROPIC_API_URL")),
        ("ANTHROPIC_BASE_URL", env.get("ANTHROPIC_BASE_URL")),
    )
    for name, candidate in sources:
        url = (candidate or "").strip().rstrip("/")
        if not url:
            continue
        if not plainly_url(url) and not _httpx_url(url):
            shown = f"{name} {url}" if name.startswith("--") else f"{name}={url}"
            raise ConfigError(
                f"{shown}: not an http(s) URL (like http://127.0.0.1:8080 or {DEFAULT_BASE_URL})"
            )
        return url
    return DEFAULT_BASE_URL


_PLAIN = re.compile(
    r"https?://(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?\.)*[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
    r"(?::(?P<port>[0-9]{1,5}))?(?:/[A-Za-z0-9._~/-]*)?"
)


def plainly_url(url: str) -> bool:
    """Whether ``url`` is an http(s) URL of the plain kind every client reads alike: a host
    name or IPv4 address, a port, a simple path (pure). Anything else is asked of httpx."""
    match = _PLAIN.fullmatch(url)
    return match is not None and int(match["port"] or 1) in range(1, 65536)


def _httpx_url(url: str) -> bool:
    # Here, not at the top: the loop checks the URL for each agent it starts, and httpx is
    # a tenth of its start; only a URL out of the plain kind needs its parser.
    from forgeflare._httpx import httpx

    try:
        parsed = httpx.URL(url)
        return parsed.scheme in ("http", "https") and bool(parsed.host)
    except (httpx.InvalidURL, TypeError, ValueError):
        return False
