"""Where the Messages API is: ``--api-url``, ``ANTHROPIC_API_URL``, ``ANTHROPIC_BASE_URL``.

Apart from the client so that the loop's preflight checks the URL without importing the agent.
"""

from __future__ import annotations

from collections.abc import Mapping

from forgeflare._errors import ConfigError

__all__ = ["DEFAULT_BASE_URL", "checked_base_url", "resolve_base_url"]

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
    # Here, not at the top: the backends import this module for every command that reads
    # the supervisor (report, trust, the stop-hook's gate); only a URL to check needs httpx.
    from forgeflare._httpx import httpx

    sources = (
        ("--api-url", flag),
        ("ANTHROPIC_API_URL", env.get("ANTHROPIC_API_URL")),
        ("ANTHROPIC_BASE_URL", env.get("ANTHROPIC_BASE_URL")),
    )
    for name, candidate in sources:
        url = (candidate or "").strip().rstrip("/")
        if not url:
            continue
        try:
            parsed = httpx.URL(url)
            ok = parsed.scheme in ("http", "https") and bool(parsed.host)
        except (httpx.InvalidURL, TypeError, ValueError):
            ok = False
        if not ok:
            shown = f"{name} {url}" if name.startswith("--") else f"{name}={url}"
            raise ConfigError(
                f"{shown}: not an http(s) URL (like http://127.0.0.1:8080 or {DEFAULT_BASE_URL})"
            )
        return url
    return DEFAULT_BASE_URL
