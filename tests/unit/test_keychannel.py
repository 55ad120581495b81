"""The key channel: secrets through a descriptor, and where each backend's key goes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from forgeflare._errors import ConfigError
from forgeflare.security._keychannel import (
    KEY_FD_ENV,
    adopt_key_fd,
    hand_over,
    reexec_argv,
    secrets_fd,
    split_secrets,
)
from forgeflare.supervisor.agents import key_file, plan_agent_key
from forgeflare.supervisor.backends import BACKENDS, HELPER_TTL_ENV, helper_settings
from project_support import run_text

ENV = {
    "PATH": "/bin",
    "ANTHROPIC_API_KEY": "ak",
    "ANTHROPIC_AUTH_TOKEN": "at",
    "CLAUDE_CODE_OAUTH_TOKEN": "oauth",
    "OPENAI_API_KEY": "ok",
    "GITHUB_TOKEN": "gh",
}


def test_split_secrets() -> None:
    plain, secret = split_secrets({**ENV, KEY_FD_ENV: "5"})
    assert plain == {"PATH": "/bin", KEY_FD_ENV: "5"}
    assert set(secret) == set(ENV) - {"PATH"}


def test_a_descriptor_round_trip() -> None:
    env, fd = hand_over({"PATH": "/bin", "A_TOKEN": "t"}, {"A_TOKEN": "t", "B_KEY": "é"})
    assert env == {"PATH": "/bin", KEY_FD_ENV: str(fd)}
    environ = dict(env)
    assert adopt_key_fd(environ) == {"A_TOKEN": "t", "B_KEY": "é"}
    assert environ == {"PATH": "/bin", "A_TOKEN": "t", "B_KEY": "é"}
    with pytest.raises(OSError, match="Bad file descriptor"):
        os.fstat(fd)  # closed once read


def test_nothing_to_adopt() -> None:
    environ = {"PATH": "/bin"}
    assert adopt_key_fd(environ) == {}
    assert environ == {"PATH": "/bin"}


@pytest.mark.parametrize(
    ("value", "words"), [("x", "not a file descriptor"), ("987654", "cannot read")]
)
def test_a_bad_descriptor_is_one_clear_error(value: str, words: str) -> None:
    with pytest.raises(ConfigError, match=words):
        adopt_key_fd({KEY_FD_ENV: value})


def test_a_descriptor_that_is_not_an_object_of_strings() -> None:
    fd = secrets_fd({})
    os.ftruncate(fd, 0)
    os.pwrite(fd, json.dumps({"A": 1}).encode(), 0)
    with pytest.raises(ConfigError, match="JSON object of strings"):
        adopt_key_fd({KEY_FD_ENV: str(fd)})


def test_reexec_keeps_the_command_line_and_adds_p() -> None:
    assert reexec_argv("/py", ["python", "-m", "forgeflare", "loop"]) == [
        "/py",
        "-P",
        "-m",
        "forgeflare",
        "loop",
    ]
    assert reexec_argv("/py", ["/py", "/venv/bin/forgeflare", "run", "x"]) == [
        "/py",
        "-P",
        "/venv/bin/forgeflare",
        "run",
        "x",
    ]


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


def test_a_bad_key_fd_from_the_cli_is_one_line(tmp_path: Path) -> None:
    done = run_text(
        [sys.executable, "-m", "forgeflare", "runs", "--dir", str(tmp_path)],
        env={**os.environ, KEY_FD_ENV: "nope"},
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"forgeflare: error: {KEY_FD_ENV}='nope': not a file descriptor number"
    ]
