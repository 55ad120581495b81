"""Linux-only tests skip elsewhere with a reason; Linux-only features degrade with one line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from forgeflare._errors import ConfigError
from forgeflare.security import check_sandbox
from platform_support import alive, linux_only_skip_reason, live_group_members


@pytest.mark.parametrize(
    ("platform", "reason", "expected"),
    [
        ("linux", "bubblewrap", None),
        ("linux2", None, None),
        ("darwin", "bubblewrap", "Linux only (darwin): bubblewrap"),
        ("darwin", None, "Linux only (darwin): needs Linux"),
        ("win32", "x", "Linux only (win32): x"),
    ],
)
def test_linux_only_skip_reason(platform: str, reason: str | None, expected: str | None) -> None:
    assert linux_only_skip_reason(platform, reason) == expected


def test_sandbox_off_linux_refuses_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "platform", "darwin")
    with pytest.raises(ConfigError, match="bubblewrap runs on Linux only") as info:
        check_sandbox(tmp_path)
    assert "\n" not in str(info.value)


def test_process_checks_see_a_live_group_and_its_end() -> None:
    child = subprocess.Popen(["sleep", "60"], process_group=0)
    try:
        assert alive(child.pid)
        assert live_group_members(child.pid) == [child.pid]
        assert live_group_members(os.getpgid(0)) != []  # this very process's group
    finally:
        child.kill()
        child.wait()
    assert not alive(child.pid)
    assert live_group_members(child.pid) == []


def test_a_zombie_is_not_alive() -> None:
    child = subprocess.Popen(["true"])
    # Waits until the child has exited but leaves it a zombie (not reaped).
    os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)
    assert not alive(child.pid)
    child.wait()
