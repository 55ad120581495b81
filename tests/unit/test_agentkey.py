"""Where each backend's key goes (never the agent's environment where another way reaches it),
and the one-shot key file Claude Code's helper prints once."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from forgeflare.supervisor.agents import key_file, plan_agent_key
from forgeflare.supervisor.backends import BACKENDS, HELPER_TTL_ENV, helper_settings
from secrets_support import KEYS_ENV as ENV


@pytest.mark.parametrize(
    ("backend", "fd", "helper", "exposed"),
    [
        ("forgeflare", {"ANTHROPIC_API_KEY": "ak", "ANTHROPIC_AUTH_TOKEN": "at"}, None, ()),
        ("claude", {}, "ak", ("CLAUDE_CODE_OAUTH_TOKEN",)),
        ("codex", {}, None, ("OPENAI_API_KEY",)),
        ("command", {}, None, ("ANTHROPIC_API_KEY", "OPENAI_API_KEY")),
    ],
)
def test_where_each_backends_key_goes(
    backend: str, fd: dict[str, str], helper: str | None, exposed: tuple[str, ...]
) -> None:
    plan = plan_agent_key(BACKENDS[backend](), ENV, ())
    assert (plan.through_fd, plan.helper_key, plan.exposed) == (fd, helper, exposed)
    assert "GITHUB_TOKEN" not in plan.env
    assert {k for k in plan.env if k in ENV} == {"PATH", *exposed}
    assert (HELPER_TTL_ENV in plan.env) == (helper is not None)


def test_claude_with_only_an_auth_token_gets_it_by_the_helper() -> None:
    plan = plan_agent_key(BACKENDS["claude"](), {"ANTHROPIC_AUTH_TOKEN": "at"}, ())
    assert plan.helper_key == "at"
    assert "ANTHROPIC_AUTH_TOKEN" not in plan.env


def test_a_passed_key_stays_where_the_user_put_it() -> None:
    plan = plan_agent_key(BACKENDS["forgeflare"](), ENV, ["ANTHROPIC_API_KEY"])
    assert plan.env["ANTHROPIC_API_KEY"] == "ak"
    assert plan.through_fd == {"ANTHROPIC_AUTH_TOKEN": "at"}


def test_the_helper_prints_the_key_once(tmp_path: Path) -> None:
    path = tmp_path / "it's a key"
    with key_file(path, "sk-1") as written:
        assert oct(written.stat().st_mode & 0o777) == "0o600"
        command = json.loads(helper_settings(written))["apiKeyHelper"]
        first = subprocess.run(["sh", "-c", command], capture_output=True, text=True, check=False)
        second = subprocess.run(["sh", "-c", command], capture_output=True, text=True, check=False)
    assert (first.returncode, first.stdout) == (0, "sk-1")
    assert second.returncode != 0
    assert not path.exists()


def test_a_key_file_replaces_what_lies_under_its_name(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_text("keep")
    path = tmp_path / ".key-001"
    path.symlink_to(elsewhere)
    with key_file(path, "sk-2"):
        assert not path.is_symlink()
        assert path.read_text() == "sk-2"
    assert elsewhere.read_text() == "keep"
