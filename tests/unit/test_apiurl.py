"""Where the Messages API is: the flag, then ``ANTHROPIC_API_URL``, then ``ANTHROPIC_BASE_URL``."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forgeflare._apiurl import (
    _PLAIN,
    DEFAULT_BASE_URL,
    checked_base_url,
    plainly_url,
    resolve_base_url,
)
from forgeflare._errors import ConfigError
from forgeflare._httpx import httpx

FLAG = "http://127.0.0.1:9/flag"
API = "http://127.0.0.1:9/api"
BASE = "http://127.0.0.1:9/base"


@pytest.mark.parametrize(
    ("flag", "env", "url"),
    [
        (FLAG, {"ANTHROPIC_API_URL": API, "ANTHROPIC_BASE_URL": BASE}, FLAG),
        (None, {"ANTHROPIC_API_URL": API, "ANTHROPIC_BASE_URL": BASE}, API),
        (None, {"ANTHROPIC_BASE_URL": BASE}, BASE),
        (None, {}, DEFAULT_BASE_URL),
        # Empty or blank values count as unset; trailing slashes go.
        ("  ", {"ANTHROPIC_API_URL": "", "ANTHROPIC_BASE_URL": f"{BASE}//"}, BASE),
        (f" {FLAG}/ ", {}, FLAG),
    ],
    ids=["flag-first", "api-url-next", "base-url-last", "default", "blank-unset", "trimmed"],
)
def test_the_first_set_source_wins(flag: str | None, env: dict[str, str], url: str) -> None:
    assert resolve_base_url(flag, env) == url
    assert checked_base_url(flag, env) == url


@pytest.mark.parametrize(
    ("flag", "env", "said"),
    [
        ("notaurl", {}, "--api-url notaurl: not an http(s) URL"),
        (None, {"ANTHROPIC_API_URL": "ftp://host"}, "ANTHROPIC_API_URL=ftp://host: not an http"),
        (None, {"ANTHROPIC_BASE_URL": "http://"}, "ANTHROPIC_BASE_URL=http:: not an http(s) URL"),
    ],
    ids=["flag", "api-url-scheme", "base-url-no-host"],
)
def test_a_value_that_is_no_url_is_a_usage_error_naming_its_source(
    flag: str | None, env: dict[str, str], said: str
) -> None:
    with pytest.raises(ConfigError) as info:
        checked_base_url(flag, env)
    assert str(info.value).startswith(said)
    assert info.value.exit_code == 2
    assert "\n" not in str(info.value)


@given(st.one_of(st.none(), st.text(max_size=30)), st.dictionaries(
    st.sampled_from(["ANTHROPIC_API_URL", "ANTHROPIC_BASE_URL", "OTHER"]), st.text(max_size=30)
))  # fmt: skip
def test_checking_keeps_the_resolved_url_or_refuses_it(
    flag: str | None, env: dict[str, str]
) -> None:
    try:
        checked = checked_base_url(flag, env)
    except ConfigError:
        return
    assert checked == resolve_base_url(flag, env)
    assert not checked.endswith("/")


@given(st.one_of(st.from_regex(_PLAIN, fullmatch=True), st.text(max_size=40)))
def test_a_plain_url_is_one_httpx_reads_as_http_with_a_host(url: str) -> None:
    # The loop checks plain URLs without loading httpx: each must be one httpx accepts.
    if plainly_url(url):
        parsed = httpx.URL(url)
        assert parsed.scheme in ("http", "https")
        assert parsed.host


@pytest.mark.parametrize(
    ("url", "plain"),
    [
        ("http://127.0.0.1:41157", True),
        ("https://api.anthropic.com/v1", True),
        ("http://localhost:65535/a/b", True),
        ("http://localhost:65536", False),
        ("http://host:0", False),
        ("http://exa mple.com", False),
        ("http://[::1]:8080", False),  # not refused: asked of httpx
        ("HTTP://host", False),
        ("http://host?q=1", False),
    ],
)
def test_what_is_plain(url: str, plain: bool) -> None:
    assert plainly_url(url) is plain


def test_a_url_out_of_the_plain_kind_is_still_checked_by_httpx() -> None:
    assert checked_base_url("http://[::1]:8080", {}) == "http://[::1]:8080"
    with pytest.raises(ConfigError):
        checked_base_url("http://[::1", {})
