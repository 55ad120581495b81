"""What the box hides and what it shows, tried with real bubblewrap as root and as nobody.

A scratch ``$HOME`` under ``/var/tmp`` holds what a user's home holds: ``~/.bashrc`` with a
key in it, ``~/.ssh/id_rsa``, another project, a toolchain (``~/.cargo/bin``), a package
cache (``~/.cache/pip``), forgeflare's trust store outside it (``$XDG_CONFIG_HOME``); the
project lives inside that home, as most do. A command in the box reads and writes each.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from forgeflare.security._sandbox import GIT_DIR_ENV, READABLE_ENV, sandbox_argv
from nobody_support import SETPRIV, as_user, give_to, shared_scratch
from project_support import run_text

pytestmark = [
    pytest.mark.linux_only("bubblewrap is Linux"),
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap"),
]


@pytest.fixture
def home() -> Iterator[Path]:
    with shared_scratch("forgeflare-home-") as root:
        yield root


def _lay_out(root: Path) -> dict[str, Path]:
    home = root / "home"
    files = {
        "bashrc": home / ".bashrc",
        "ssh": home / ".ssh" / "id_rsa",
        "other": home / "src" / "other" / "secret.txt",
        "trust": root / "config" / "forgeflare" / "trust.json",
        "m2": home / ".m2" / "settings.xml",
        "tool": home / ".cargo" / "bin" / "tool",
    }
    for name, path in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"{name}-content\n")
    (home / ".cache" / "pip").mkdir(parents=True)
    project = home / "src" / "project"
    project.mkdir(parents=True)
    files["project"] = project
    files["home"] = home
    return files


@pytest.mark.parametrize("user", ["root", "nobody"])
def test_the_box_hides_the_home_and_stores_and_shows_what_is_named(user: str, home: Path) -> None:
    if user == "nobody" and (os.geteuid() != 0 or SETPRIV is None):
        pytest.skip("runs as nobody through setpriv: needs root and util-linux setpriv")
    files = _lay_out(home)
    env = {
        "HOME": str(files["home"]),
        "PATH": f"{files['home']}/.cargo/bin:/usr/bin:/bin",
        "XDG_CONFIG_HOME": str(home / "config"),
        READABLE_ENV: str(files["m2"]),
        GIT_DIR_ENV: "",
    }
    script = "; ".join(
        [
            *(
                f"cat {files[n]} 2>/dev/null || echo {n}-hidden"
                for n in ("bashrc", "ssh", "other", "trust", "m2", "tool")
            ),
            "echo c > ~/.cache/pip/x && echo cache-writable",
            "echo t >> ~/.cargo/bin/tool 2>/dev/null || echo tool-read-only",
            "echo p > in-project && echo project-writable",
            "echo h > ~/.bashrc && echo home-write-dropped",
        ]
    )
    argv = sandbox_argv(files["project"], ["bash", "-c", script], network=False, env=env)
    give_to(home, user)  # after the plan: it writes the generated gitconfig as the user
    done = run_text(
        [*as_user(user), *argv],
        env=env,
        timeout=60,
    )
    lines = done.stdout.split()
    assert lines == [
        "bashrc-hidden",
        "ssh-hidden",
        "other-hidden",
        "trust-hidden",
        "m2-content",
        "tool-content",
        "cache-writable",
        "tool-read-only",
        "project-writable",
        "home-write-dropped",
    ], done.stderr
    assert files["bashrc"].read_text() == "bashrc-content\n"  # the write went to the tmpfs
    assert (files["home"] / ".cache" / "pip" / "x").read_text() == "c\n"
    assert (files["project"] / "in-project").read_text() == "p\n"
