"""The key channel: secrets through a descriptor, adopted once, a bad one a clear error."""

from __future__ import annotations

import json
import os
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
from project_support import run_text
from secrets_support import KEYS_ENV as ENV


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


def test_a_bad_key_fd_from_the_cli_is_one_line(tmp_path: Path) -> None:
    done = run_text(
        [sys.executable, "-m", "forgeflare", "runs", "--dir", str(tmp_path)],
        env={**os.environ, KEY_FD_ENV: "nope"},
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"forgeflare: error: {KEY_FD_ENV}='nope': not a file descriptor number"
    ]
