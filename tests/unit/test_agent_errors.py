"""The Messages API errors: the tree every caller catches, and which of them a retry may fix
(the header first, then the status, then the kind)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from forgeflare._errors import ForgeflareError
from forgeflare.agent import (
    APIConnectionError,
    APIError,
    APIRequestError,
    APIStatusError,
    APITimeoutError,
    StreamParseError,
    StreamTransientError,
    UsageLimitError,
    is_transient,
)


@pytest.mark.parametrize(
    ("error", "transient"),
    [
        (APIConnectionError("refused"), True),
        (APITimeoutError("read"), True),
        (StreamTransientError("overloaded_error"), True),
        (StreamParseError("bad json"), False),
        (APIRequestError("no scheme"), False),
        (APIError("other"), False),
        (UsageLimitError("5h window", resets_at=None), False),  # waited for, not retried
    ],
    ids=lambda v: type(v).__name__ if isinstance(v, APIError) else str(v),
)
def test_each_kind_is_transient_or_permanent(error: APIError, transient: bool) -> None:
    assert is_transient(error) is transient
    assert error.transient is transient


@given(st.integers(400, 599), st.sampled_from([None, True, False]))
@example(428, None)
@example(429, None)
@example(430, None)
@example(499, None)
@example(500, None)
def test_a_status_is_transient_by_its_header_else_429_or_5xx(
    code: int, should: bool | None
) -> None:
    error = APIStatusError(f"API returned {code}", status=code, should_retry=should)
    expected = (code == 429 or code >= 500) if should is None else should
    assert is_transient(error) is expected


@pytest.mark.parametrize(
    "kind",
    [
        APIStatusError,
        APIConnectionError,
        APITimeoutError,
        APIRequestError,
        StreamTransientError,
        StreamParseError,
        UsageLimitError,
    ],
)
def test_every_api_error_is_caught_as_one(kind: type[APIError]) -> None:
    assert issubclass(kind, APIError)
    assert issubclass(kind, ForgeflareError)


def test_the_errors_keep_what_the_answer_said() -> None:
    error = APIStatusError(
        "API returned 429",
        status=429,
        body='{"error": {"type": "rate_limit_error"}}',
        retry_after=3.0,
        should_retry=None,
        error_type="rate_limit_error",
        reset_in=120.0,
    )
    assert (error.status, error.retry_after, error.error_type, error.reset_in) == (
        429,
        3.0,
        "rate_limit_error",
        120.0,
    )
    assert str(error) == "API returned 429"
    at = datetime(2026, 11, 29, 5, tzinfo=UTC)
    assert UsageLimitError("limit", resets_at=at).resets_at == at
