"""The Landlock scoping step around a gate's box: used only where the kernel scopes, and it
runs its command."""

from __future__ import annotations

import subprocess
import sys

import pytest

from forgeflare.security._scopeexec import landlock_abi, scoped_argv


def test_a_command_starts_scoped_only_where_the_kernel_scopes() -> None:
    argv = scoped_argv(["bwrap", "--", "true"])
    if landlock_abi() < 6:
        assert argv == ["bwrap", "--", "true"]
        return
    assert argv[:3] == [sys.executable, "-I", "-S"]
    assert argv[3].endswith("_scopeexec.py")
    assert argv[4:] == ["bwrap", "--", "true"]


@pytest.mark.linux_only("Landlock is Linux")
def test_the_scoping_step_runs_its_command() -> None:
    argv = scoped_argv(["sh", "-c", "echo ran"])
    if argv[0] == "sh":
        pytest.skip("no Landlock ABI 6 here (Linux 6.12+), or a setuid bubblewrap")
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    assert (done.returncode, done.stdout) == (0, "ran\n"), done.stderr
