"""Where a project's loop state lives: the user's state directory, one name per real path."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forgeflare.stophook import state_name, state_path

# A real path is what the file system holds: bytes, decoded as Python decodes file names
# (undecodable bytes become surrogate escapes; no other surrogate can occur).
paths = st.lists(
    st.binary(min_size=1, max_size=8)
    .filter(lambda raw: b"/" not in raw and b"\0" not in raw)
    .map(os.fsdecode),
    min_size=1,
    max_size=6,
)


@pytest.mark.parametrize(
    ("real", "name"),
    [
        ("/home/ada/parser", "home%2Fada%2Fparser"),
        ("/srv/a%2Fb", "srv%2Fa%252Fb"),
        ("/", "%2F"),
        ("/tmp/my.project", "tmp%2Fmy.project"),
    ],
)
def test_the_name_spells_the_path(real: str, name: str) -> None:
    assert state_name(real) == name


@given(paths, paths)
def test_two_projects_never_share_a_name(a: list[str], b: list[str]) -> None:
    first, second = "/" + "/".join(a), "/" + "/".join(b)
    assert (state_name(first) == state_name(second)) == (first == second)


def test_a_path_too_long_for_a_file_name_ends_in_its_hash() -> None:
    long = "/" + "/".join(["deep"] * 100)
    name = state_name(long)
    assert len(os.fsencode(name)) < 255
    assert name.startswith("deep%2Fdeep")
    assert "%%" in name
    assert state_name(long + "x") != name


def test_the_state_follows_the_real_path_and_xdg_state_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    assert state_path(tmp_path / "link") == state_path(real)
    assert state_path(real).parent == tmp_path / "state" / "forgeflare" / "stop-hook"
    monkeypatch.delenv("XDG_STATE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert state_path(real).parent == tmp_path / "home" / ".local/state/forgeflare/stop-hook"


def test_the_state_folder_is_the_users_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from datetime import UTC, datetime

    from forgeflare.stophook import Mode, start_loop

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    start_loop(tmp_path, mode=Mode.LOOP, max_iterations=2, prompt="p", now=datetime.now(UTC))
    assert state_path(tmp_path).stat().st_size > 0
    assert state_path(tmp_path).parent.stat().st_mode & 0o777 == 0o700
