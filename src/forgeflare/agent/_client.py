"""The streaming Messages API client: one attempt per call, errors classified at the boundary.

httpx does the HTTP (under trio through anyio); :mod:`forgeflare.agent._sse` does the parsing.
Every httpx error is translated here into the most specific :class:`APIError`, so nothing
above this module sees a foreign exception. Retrying is :mod:`forgeflare.agent._retry`'s job.
"""

from __future__ import annotations

import email.utils
import json
import math
import ssl
import time
import urllib.request
from collections.abc import Callable, Mapping
from types import TracebackType
from typing import Any

import trio

from forgeflare._apiurl import DEFAULT_BASE_URL, checked_base_url, resolve_base_url
from forgeflare._httpx import httpx
from forgeflare.agent._errors import (
    APIConnectionError,
    APIError,
    APIRequestError,
    APIStatusError,
    APITimeoutError,
    StreamParseError,
    StreamTransientError,
)
from forgeflare.agent._messages import AssistantResponse, MessagesRequest
from forgeflare.agent._sse import StreamParser
from forgeflare.disk import loads

__all__ = [
    "ANTHROPIC_VERSION",
    "DEFAULT_BASE_URL",
    "MessagesClient",
    "checked_base_url",
    "parse_retry_after",
    "resolve_base_url",
    "status_error",
    "tls_verify",
]

ANTHROPIC_VERSION = "2023-06-01"
# An error body is kept for the error object, but only this much of it goes in the message.
_MESSAGE_BODY_CHARS = 200
_MAX_ERROR_BODY = 64 * 1024


_RESET_HEADERS = (
    "anthropic-ratelimit-unified-reset",
    "anthropic-ratelimit-requests-reset",
    "anthropic-ratelimit-tokens-reset",
    "anthropic-ratelimit-input-tokens-reset",
    "anthropic-ratelimit-output-tokens-reset",
)


def parse_ratelimit_reset(headers: Mapping[str, str], *, now: float | None = None) -> float | None:
    """Seconds until the latest ``anthropic-ratelimit-*-reset`` (epoch seconds or RFC 3339).

    ``None`` when there is none or none is readable; never negative.
    """
    from datetime import datetime

    now = time.time() if now is None else now
    latest: float | None = None
    for name in _RESET_HEADERS:
        raw = headers.get(name)
        if not raw:
            continue
        try:
            when = float(raw)
        except ValueError:
            try:
                moment = datetime.fromisoformat(raw.strip().replace("Z", "+00:00"))
            except ValueError:
                continue
            if moment.tzinfo is None:
                continue
            when = moment.timestamp()
        if math.isfinite(when):
            left = max(when - now, 0.0)
            latest = left if latest is None else max(latest, left)
    return latest


def parse_retry_after(headers: Mapping[str, str], *, now: float | None = None) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``retry-after`` (seconds or an HTTP date).

    ``None`` when absent or unreadable; never negative.
    """
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            value = float(millis) / 1000.0
        except ValueError:
            value = math.nan
        if math.isfinite(value):
            return max(value, 0.0)
    raw = headers.get("retry-after")
    if raw is None:
        return None
    try:
        value = float(raw)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(raw)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            return None
        value = when.timestamp() - (time.time() if now is None else now)
    return max(value, 0.0) if math.isfinite(value) else None


def _should_retry(headers: Mapping[str, str]) -> bool | None:
    value = headers.get("x-should-retry", "").strip().lower()
    return {"true": True, "false": False}.get(value)


def status_error(status: int, headers: Mapping[str, str], body: str) -> APIStatusError:
    """The :class:`APIStatusError` for an HTTP error response, with a one-line message.

    The message is ``API returned 400 invalid_request_error: <message>`` when the body is the
    API's JSON error object, else ``API returned 502: <start of the body>``.
    """
    error_type: str | None = None
    detail = " ".join(body.split())[:_MESSAGE_BODY_CHARS] or "(empty body)"
    try:
        parsed: Any = loads(body)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict) and isinstance(parsed.get("error"), dict):
        error = parsed["error"]
        if isinstance(error.get("type"), str):
            error_type = error["type"]
        if isinstance(error.get("message"), str) and error["message"].strip():
            detail = " ".join(error["message"].split())
    prefix = f"API returned {status} {error_type}" if error_type else f"API returned {status}"
    return APIStatusError(
        f"{prefix}: {detail}",
        status=status,
        body=body,
        retry_after=parse_retry_after(headers),
        should_retry=_should_retry(headers),
        error_type=error_type,
        reset_in=parse_ratelimit_reset(headers),
    )


def _describe(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def _translate(
    exc: httpx.HTTPError | httpx.InvalidURL, *, url: str, streaming: bool, timeout: httpx.Timeout
) -> APIError:
    """The most specific :class:`APIError` for an httpx failure (its message on one line)."""
    if isinstance(exc, httpx.ConnectTimeout):
        return APITimeoutError(f"connecting to {url} timed out after {timeout.connect:g}s")
    if isinstance(exc, httpx.ReadTimeout):
        what = "API stream stalled" if streaming else "API did not answer"
        return APITimeoutError(f"{what}: no data from {url} for {timeout.read:g}s")
    if isinstance(exc, httpx.TimeoutException):
        return APITimeoutError(f"request to {url} timed out ({type(exc).__name__})")
    if isinstance(exc, httpx.UnsupportedProtocol | httpx.LocalProtocolError):
        return APIRequestError(f"cannot send a request to {url}: {_describe(exc)}")
    if isinstance(exc, httpx.TransportError):
        if streaming:
            return StreamTransientError(f"API stream from {url} broke off: {_describe(exc)}")
        return APIConnectionError(f"cannot connect to {url}: {_describe(exc)}")
    return APIRequestError(f"request to {url} failed: {_describe(exc)}")


def tls_verify(base_url: str, proxies: Mapping[str, str]) -> ssl.SSLContext | bool:
    """What the client of ``base_url`` verifies TLS with, given the environment's ``proxies``.

    ``True`` (httpx's default: the CA bundle, about 50 ms of CPU to load at every agent start)
    whenever a connection could use TLS. A plain ``http://`` URL with no proxy in the
    environment (the mock API, a local server) never does: then a context with no CA, which
    costs nothing and would refuse every certificate (closed, never open).
    """
    if not base_url.strip().lower().startswith("http://") or proxies:
        return True
    return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)


class MessagesClient:
    """Streams ``POST {base_url}/v1/messages``; one call of :meth:`stream` is one attempt.

    Timeouts: ``connect_timeout`` to connect, ``read_timeout`` between two chunks of the
    response (so a stalled stream cannot hang), ``total_timeout`` for the whole attempt.
    ``transport`` replaces the network (e.g. ``httpx.MockTransport`` in tests).
    Use as an async context manager, or call :meth:`aclose`.
    """

    def __init__(
        self,
        *,
        base_url: str,
        api_key: str | None,
        connect_timeout: float = 30.0,
        total_timeout: float = 300.0,
        read_timeout: float = 120.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.url = f"{self.base_url}/v1/messages"
        self.total_timeout = total_timeout
        headers = {
            "anthropic-version": ANTHROPIC_VERSION,
            "content-type": "application/json",
            "accept": "text/event-stream",
        }
        if api_key:
            headers["x-api-key"] = api_key
        self._timeout = httpx.Timeout(
            connect=connect_timeout, read=read_timeout, write=read_timeout, pool=connect_timeout
        )
        self._http = httpx.AsyncClient(
            headers=headers,
            timeout=self._timeout,
            transport=transport,
            follow_redirects=False,
            verify=tls_verify(self.base_url, urllib.request.getproxies()),
        )

    async def __aenter__(self) -> MessagesClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the connection pool."""
        await self._http.aclose()

    async def stream(
        self, request: MessagesRequest, *, on_text: Callable[[str], None] | None = None
    ) -> AssistantResponse:
        """Send ``request`` once and return the complete streamed response.

        ``on_text`` receives text deltas as they arrive. Raises an :class:`APIError`
        (classified: see ``.transient``) on any failure, including a stream cut short.
        """
        body = json.dumps(request.to_body(stream=True), ensure_ascii=False).encode("utf-8")
        try:
            with trio.fail_after(self.total_timeout):
                return await self._attempt(body, on_text)
        except trio.TooSlowError as exc:
            raise APITimeoutError(
                f"API response from {self.url} not complete within {self.total_timeout:g}s"
            ) from exc

    async def _attempt(
        self, body: bytes, on_text: Callable[[str], None] | None
    ) -> AssistantResponse:
        streaming = False
        try:
            async with self._http.stream("POST", self.url, content=body) as response:
                if response.status_code != 200:
                    raw = await self._read_capped(response)
                    raise status_error(
                        response.status_code,
                        response.headers,
                        raw.decode("utf-8", errors="replace"),
                    )
                content_type = response.headers.get("content-type", "")
                if "text/event-stream" not in content_type:
                    raise StreamParseError(
                        f"API at {self.url} answered {content_type or 'no content-type'}, "
                        "not an event stream"
                    )
                streaming = True
                parser = StreamParser(on_text=on_text)
                async for chunk in response.aiter_bytes():
                    if parser.feed(chunk):
                        break  # complete: leave at once rather than wait for the server to close
                return parser.result()
        except (httpx.HTTPError, httpx.InvalidURL) as exc:  # InvalidURL is no HTTPError
            raise _translate(exc, url=self.url, streaming=streaming, timeout=self._timeout) from exc

    @staticmethod
    async def _read_capped(response: httpx.Response) -> bytes:
        parts: list[bytes] = []
        size = 0
        async for chunk in response.aiter_bytes():
            parts.append(chunk)
            size += len(chunk)
            if size >= _MAX_ERROR_BODY:
                break
        return b"".join(parts)[:_MAX_ERROR_BODY]
