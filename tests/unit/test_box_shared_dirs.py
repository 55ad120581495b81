"""The shared folders the box empties (``/var/tmp``, ``/srv``, ``/mnt``, ``/media``), what it
shows again inside them, and the order bwrap gets; the Landlock step around a gate's box."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from forgeflare.security._sandbox import (
    GIT_DIR_ENV,
    SHARED_DIRS,
    SandboxPlan,
    bwrap_argv,
    sandbox_plan,
)
from forgeflare.security._scopeexec import landlock_abi, scoped_argv

P = Path("/w/project")


def _tmpfs(argv: list[str]) -> list[str]:
    return [argv[i + 1] for i, a in enumerate(argv) if a == "--tmpfs"]


def test_shared_folders_are_emptied_before_the_home_and_the_stores_inside_them() -> None:
    plan = SandboxPlan(
        project=P,
        home=Path("/var/tmp/u/home"),
        hidden_dirs=(Path("/run"), Path("/var/tmp")),
        hidden_stores=(Path("/var/tmp/u/config/forgeflare"),),
        readable=(Path("/var/tmp/u/bin"),),
    )
    argv = bwrap_argv(plan, ["true"])
    assert _tmpfs(argv) == [
        "/tmp",
        "/run",
        "/var/tmp",
        "/var/tmp/u/home",
        "/var/tmp/u/config/forgeflare",
    ]
    # What is shown again comes after every folder that hides it.
    assert argv.index("/var/tmp/u/bin") > argv.index("/var/tmp/u/config/forgeflare")
    assert argv.index("/w/project") > argv.index("/var/tmp/u/bin")


@pytest.fixture
def in_var_tmp() -> Iterator[Path]:
    if not os.access("/var/tmp", os.W_OK) or not Path("/var/tmp").is_dir():
        pytest.skip("needs a writable /var/tmp")
    root = Path(tempfile.mkdtemp(prefix="forgeflare-shared-", dir="/var/tmp"))
    try:
        yield root.resolve()
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.mark.linux_only("the shared folders are Linux's")
def test_the_plan_empties_the_shared_folders_and_shows_path_dirs_in_them_again(
    in_var_tmp: Path,
) -> None:
    tools = in_var_tmp / "tools" / "bin"
    project = in_var_tmp / "project"
    for path in (tools, project):
        path.mkdir(parents=True)
    env = {"HOME": "", "PATH": f"{tools}:/usr/bin:/var/tmp", GIT_DIR_ENV: ""}
    plan = sandbox_plan(project, network=True, env=env)
    shared = [Path(d) for d in SHARED_DIRS if Path(d).is_dir() and not Path(d).is_symlink()]
    assert Path("/var/tmp") in shared
    assert set(shared) <= set(plan.hidden_dirs)
    assert tools in plan.readable  # a PATH folder in a hidden one is shown again, read-only
    assert Path("/usr/bin") not in plan.readable  # never hidden: nothing to show again
    assert Path("/var/tmp") not in plan.readable  # a hidden folder itself stays hidden


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
