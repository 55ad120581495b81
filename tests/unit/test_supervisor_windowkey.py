"""Window store keys: the agent, the endpoint it talks to and its account (pure)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forgeflare.supervisor.agents import AgentSpec
from forgeflare.supervisor.agents._windowkey import (
    WindowKey,
    account_hash,
    agent_account,
    endpoint_of,
    parse_window_key,
)
from forgeflare.supervisor.backends import BACKENDS
from forgeflare.supervisor.run._waiting import wait_line


@pytest.mark.parametrize(
    ("url", "endpoint"),
    [
        ("https://api.anthropic.com", "https://api.anthropic.com"),
        ("https://api.anthropic.com/", "https://api.anthropic.com"),
        ("HTTP://LocalHost:8080/v1/?x=1#frag", "http://localhost:8080/v1"),
        ("https://user:secret@proxy.example:443/a/b/", "https://proxy.example:443/a/b"),
        ("http://[::1]:9/s/x/v1", "http://[::1]:9/s/x/v1"),
        ("  http://127.0.0.1:5  ", "http://127.0.0.1:5"),
        ("notaurl", ""),
        ("http://host:99999", ""),
        ("", ""),
    ],
)
def test_the_endpoint_keeps_scheme_host_port_and_path_only(url: str, endpoint: str) -> None:
    assert endpoint_of(url) == endpoint


@pytest.mark.parametrize(
    ("text", "key"),
    [
        (
            "codex@https://api.openai.com/v1#abc",
            WindowKey(AgentSpec("codex"), "https://api.openai.com/v1", "abc"),
        ),
        ("claude:work@http://h:1#", WindowKey(AgentSpec("claude", "work"), "http://h:1", "")),
        ("command@#", WindowKey(AgentSpec("command"), "", "")),
        ("x@http://h/a#b#c", WindowKey(AgentSpec("x"), "http://h/a#b", "c")),
        ("x@http://h", WindowKey(AgentSpec("x"), "http://h", "")),
    ],
)
def test_keys_split_at_the_first_at_and_the_last_hash(text: str, key: WindowKey) -> None:
    assert parse_window_key(text) == key


@pytest.mark.parametrize("text", ["codex", "claude:work", "", "a:b:c@http://h#1", ":x@h#1"])
def test_old_or_bad_keys_are_refused(text: str) -> None:
    with pytest.raises(ValueError, match="is not BACKEND"):
        parse_window_key(text)


_LABEL = st.sampled_from(["claude", "codex", "forgeflare", "work", "x-1"])


@given(
    _LABEL,
    st.one_of(st.just(""), _LABEL),
    st.text(max_size=20),
    st.sampled_from(["", "0a1b2c3d4e5f", "ff"]),
)
def test_a_key_reads_back_as_written(
    backend: str, profile: str, endpoint: str, account: str
) -> None:
    key = WindowKey(AgentSpec(backend, profile), endpoint, account)
    assert parse_window_key(key.text) == key


def test_the_account_is_a_short_hash_never_the_credential() -> None:
    assert account_hash("") == ""
    assert len(account_hash("sk-secret")) == 12
    assert "sk-secret" not in account_hash("sk-secret")
    assert account_hash("sk-secret") == account_hash("sk-secret") != account_hash("sk-other")


@pytest.mark.parametrize(
    ("backend", "env", "endpoint", "identity"),
    [
        ("forgeflare", {}, "https://api.anthropic.com", ""),
        (
            "forgeflare",
            {"ANTHROPIC_API_URL": "http://127.0.0.1:7/", "ANTHROPIC_API_KEY": "k"},
            "http://127.0.0.1:7",
            "k",
        ),
        (
            "forgeflare",
            {"ANTHROPIC_BASE_URL": "http://b:1", "ANTHROPIC_AUTH_TOKEN": "t"},
            "http://b:1",
            "t",
        ),
        # Claude Code reads ANTHROPIC_BASE_URL only.
        (
            "claude",
            {"ANTHROPIC_API_URL": "http://a:1", "ANTHROPIC_API_KEY": "k"},
            "https://api.anthropic.com",
            "k",
        ),
        (
            "claude",
            {"CLAUDE_CONFIG_DIR": "/c"},
            "https://api.anthropic.com",
            "CLAUDE_CONFIG_DIR=/c",
        ),
        (
            "codex",
            {"OPENAI_BASE_URL": "http://o:2/v1", "OPENAI_API_KEY": "ok"},
            "http://o:2/v1",
            "ok",
        ),
        ("codex", {"CODEX_HOME": "/h"}, "https://api.openai.com/v1", "CODEX_HOME=/h"),
        ("command", {"ANTHROPIC_API_KEY": "k"}, "", ""),
    ],
)
def test_an_agents_account_comes_from_its_own_variables(
    backend: str, env: dict[str, str], endpoint: str, identity: str
) -> None:
    assert agent_account(BACKENDS[backend].account, env) == (endpoint, account_hash(identity))


def test_codex_takes_its_providers_address_from_its_config(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text(
        'model_provider = "mock"\n[model_providers.mock]\nbase_url = "http://127.0.0.1:9/s/a/v1"\n'
    )
    env = {"CODEX_HOME": str(tmp_path), "OPENAI_BASE_URL": "http://other:1"}
    codex = BACKENDS["codex"]()
    url = codex.configured_url(env)
    assert url == "http://127.0.0.1:9/s/a/v1"
    assert agent_account(codex.account, env, configured_url=url)[0] == "http://127.0.0.1:9/s/a/v1"
    assert BACKENDS["claude"]().configured_url(env) == ""
    for damaged in ("model_provider = [", 'model_provider = ["x"]', "model_providers = 3"):
        (tmp_path / "config.toml").write_text(damaged)
        assert codex.configured_url(env) == ""


@pytest.mark.parametrize(
    ("kind", "seconds", "opens_in", "line"),
    [
        ("limit_wait", 7200, 7200, "waiting for the usage window until 19:27 (2h 00m)"),
        ("limit_wait", 7199.5, 7200, "waiting for the usage window until 19:27 (2h 00m)"),
        (
            "limit_wait",
            40,
            7140,
            "window opens 19:27 (1h 59m); waiting 40s, the runtime left",
        ),
        ("outage", 30, 30, "waiting for the API (outage) until 19:27 (30s)"),
    ],
)
def test_the_wait_line_says_the_window_and_the_wait(
    kind: str, seconds: float, opens_in: float, line: str
) -> None:
    assert wait_line(kind, seconds, "19:27", opens_in) == line
