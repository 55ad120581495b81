"""Errors of the Messages API client and their transient/permanent classification.

Exception tree (every class is an ``APIError``; ``.transient`` says whether a retry may help)::

    ForgeflareError
    └── APIError                    the Messages API call failed
        ├── APIStatusError          the API answered with an HTTP error status (by status)
        ├── APIConnectionError      no connection, or it broke before a response  (transient)
        ├── APITimeoutError         connect, read (between chunks) or overall timeout  (transient)
        ├── APIRequestError         the request cannot be made at all: bad URL, bad scheme
        ├── StreamTransientError    the stream failed on the server's side: an overloaded /
        │                           api / rate-limit error event, or EOF before message_stop
        └── StreamParseError        the stream is wrong and a retry will not fix it: an
                                    invalid_request_error event, unparseable JSON, an unknown
                                    stop reason

``APIConnectionError`` and ``StreamTransientError`` look alike: the first means the response
never started, the second that a started response was cut short (so text already shown to the
user is repeated by the retry).
"""

from __future__ import annotations

from datetime import datetime

from forgeflare._errors import ForgeflareError

__all__ = [
    "APIConnectionError",
    "APIError",
    "APIRequestError",
    "APIStatusError",
    "APITimeoutError",
    "StreamParseError",
    "StreamTransientError",
    "UsageLimitError",
    "is_transient",
]


class APIError(ForgeflareError):
    """The Messages API call failed; ``str(error)`` is one line that says how."""

    @property
    def transient(self) -> bool:
        """Whether retrying the same request may succeed (see :func:`is_transient`)."""
        return is_transient(self)


class APIStatusError(APIError):
    """The API answered with an HTTP error status.

    ``retry_after`` is the server's ``retry-after`` in seconds (``None`` when absent or
    unreadable); ``should_retry`` is the ``x-should-retry`` header (``None`` when absent);
    ``body`` is the response body as text, ``error_type`` the API's ``error.type`` when the body
    is the usual JSON error object.
    """

    def __init__(
        self,
        message: str,
        *,
        status: int,
        body: str = "",
        retry_after: float | None = None,
        should_retry: bool | None = None,
        error_type: str | None = None,
        reset_in: float | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.body = body
        self.retry_after = retry_after
        self.should_retry = should_retry
        self.error_type = error_type
        self.reset_in = reset_in
        """Seconds until a rate limit resets, from the ``anthropic-ratelimit-*-reset`` headers."""


class UsageLimitError(APIError):
    """A rate or usage limit that lasts longer than the retries may wait (a 429 whose
    ``retry-after`` or reset time is beyond the retries' 60 s cap).

    Not a failure of the API: the same request will succeed after ``resets_at`` (UTC), so the
    turn ends with ``rate_limited`` and the loop waits for the window instead of counting an
    error.
    """

    def __init__(self, message: str, *, resets_at: datetime | None) -> None:
        super().__init__(message)
        self.resets_at = resets_at


class APIConnectionError(APIError):
    """The connection could not be made, or broke before the response started."""


class APITimeoutError(APIError):
    """A timeout expired: connect, read (a stream stalled between chunks) or the whole attempt."""


class APIRequestError(APIError):
    """The request cannot be sent as configured (e.g. the base URL has no http(s) scheme)."""


class StreamTransientError(APIError):
    """A started stream failed in a way a retry can fix.

    Raised for ``overloaded_error``, ``api_error``, ``rate_limit_error`` and ``timeout_error``
    error events, for a connection that dropped mid-stream, and for a stream that ended before
    ``message_stop``: a partial answer is never accepted.
    """


class StreamParseError(APIError):
    """The stream cannot be understood, or the API rejected the request inside the stream."""


def is_transient(error: APIError) -> bool:
    """Classify an API error: ``True`` when a retry may succeed (plan item 3a).

    An explicit ``x-should-retry`` header wins: ``false`` is never retried, ``true`` always is.
    Otherwise a status is transient when it is 429 or 5xx (500, 503, 529, ...), and permanent
    for other 4xx. Connection errors, timeouts and transient stream errors are
    transient; request, parse and other errors are permanent.
    """
    if isinstance(error, APIStatusError):
        if error.should_retry is not None:
            return error.should_retry
        return error.status == 429 or error.status >= 500
    return isinstance(error, APIConnectionError | APITimeoutError | StreamTransientError)
