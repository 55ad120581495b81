"""``forgeflare trust`` asks on a terminal (a real pty), answers for scripts with ``--yes``,
and refuses to guess without either; refusals from every command name the same command."""

from __future__ import annotations

import os
import pty
import select
import sys
import time
from pathlib import Path

import pytest

from agent_support import run_agent
from cli_inprocess import forgeflare_here
from project_support import cloned_repo

HOOKS_TOML = "".join(
    f'[[hooks]]\nevent = "{event}"\ncommand = ".forgeflare/hooks/guard.py"\n\n'
    for event in ("PreToolUse", "PostToolUse", "PreToolUse", "Stop")
)
FILES = {
    ".forgeflare/hooks/guard.py": "#!/usr/bin/env python3\nprint('{}')\n",
    ".forgeflare/hooks.toml": HOOKS_TOML,
    ".fresher/config.toml": '[security]\nsandbox = "off"\npass_env = ["ANTHROPIC_API_KEY"]\n',
}


@pytest.fixture
def cloned(tmp_path: Path) -> Path:
    return cloned_repo(tmp_path, "clone", FILES)


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "FORGEFLARE_TRUST"}
    env["FORGEFLARE_TRUST"] = "0"
    env["XDG_CONFIG_HOME"] = str(tmp_path / "config")
    env["NO_COLOR"] = "1"
    return env


def _on_a_terminal(
    argv: list[str], cwd: Path, env: dict[str, str], answer: bytes
) -> tuple[int, str]:
    """Run ``forgeflare ARGV`` on a pty; type ``answer`` once it asks. (exit status, output)"""
    pid, fd = pty.fork()
    if pid == 0:  # the child: the terminal is its stdin, stdout and stderr
        os.chdir(cwd)
        os.execve(sys.executable, [sys.executable, "-m", "forgeflare", *argv], env)
    out = b""
    answered = False
    deadline = time.monotonic() + 120  # a bound, not a synchronisation: the machine is loaded
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 1.0)
        if not ready:
            continue
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
        if not answered and b"[y/N]" in out:
            os.write(fd, answer)
            answered = True
    os.close(fd)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), out.decode(errors="replace").replace("\r\n", "\n")


def test_yes_on_a_terminal_trusts(cloned: Path, tmp_path: Path) -> None:
    env = _env(tmp_path)
    code, out = _on_a_terminal(["trust"], cloned, env, b"y\n")
    assert code == 0, out
    assert "turns the sandbox off" in out
    assert "passes ANTHROPIC_API_KEY to hooks" in out
    assert "    new  [security] sandbox" in out
    # four hooks.toml entries run one script: it is listed (with its first lines) once
    assert out.count(".forgeflare/hooks/guard.py  sha256") == 1
    assert "Trust these 6 item(s) (6 new or changed)? [y/N]" in out
    assert "trusted 6 item(s)" in out
    assert forgeflare_here(cloned, "trust", "--show", env=env).returncode == 0


@pytest.mark.parametrize("answer", [b"n\n", b"\n", b"\x04"])
def test_anything_but_yes_trusts_nothing(cloned: Path, tmp_path: Path, answer: bytes) -> None:
    env = _env(tmp_path)
    code, out = _on_a_terminal(["trust"], cloned, env, answer)
    assert code == 1, out
    assert "not trusted: nothing recorded" in out
    assert not (tmp_path / "config" / "forgeflare" / "trust.json").exists()


def test_no_terminal_and_no_yes_exits_2_with_the_command(cloned: Path, tmp_path: Path) -> None:
    env = _env(tmp_path)
    done = forgeflare_here(tmp_path, "trust", "--dir", "clone", env=env)
    assert done.returncode == 2
    assert "turns the sandbox off" in done.stdout  # the review is shown all the same
    assert done.stderr.strip().splitlines() == [
        "forgeflare: error: trust: no terminal to ask on; after reviewing the above, run "
        "`forgeflare trust --dir clone --yes`"
    ]
    assert not (tmp_path / "config" / "forgeflare" / "trust.json").exists()
    assert forgeflare_here(tmp_path, "trust", "--dir", "clone", "--yes", env=env).returncode == 0
    assert forgeflare_here(cloned, "trust", "--show", env=env).returncode == 0


def test_the_positional_directory_still_works_with_a_note(cloned: Path, tmp_path: Path) -> None:
    done = forgeflare_here(tmp_path, "trust", "clone", "--show", env=_env(tmp_path))
    assert done.returncode == 1
    assert "is now spelled `forgeflare trust --dir DIR`" in done.stderr


def test_refusals_name_the_same_command_everywhere(cloned: Path, tmp_path: Path) -> None:
    env = {**_env(tmp_path), "ANTHROPIC_API_KEY": "k", "ANTHROPIC_API_URL": "http://127.0.0.1:9"}
    want = "review and trust them with `forgeflare trust --dir clone`"
    loop = forgeflare_here(tmp_path, "loop", "--dir", "clone", "--agent-cmd", "true", env=env)
    run = forgeflare_here(tmp_path, "run", "--dir", "clone", "hi", env=env)
    for done in (loop, run):
        assert done.returncode == 2, done.stderr
        assert want in done.stderr, done.stderr
    here = "review and trust them with `forgeflare trust`,"
    hooks = forgeflare_here(cloned, "hooks", "test", "Stop", env=env)
    inside = run_agent(cloned, "http://127.0.0.1:9", env=env)
    for done in (hooks, inside):
        assert done.returncode == 2, done.stderr
        assert here in done.stderr, done.stderr
