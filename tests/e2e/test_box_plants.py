"""Nothing written in the box runs later on the host: a hostile agent's plants, then the user's
ordinary commands.

The agent (the real ``forgeflare run`` under a real ``forgeflare loop``, scripted by the mock
API) plants what the user's next command would run: a ``pre-commit`` hook, ``core.fsmonitor``,
``core.pager``, a ``!`` alias, ``~/.cargo/env`` (sourced by a login shell through rustup's
usual ``~/.profile`` line) and ``~/.cargo/bin/git`` (first on ``PATH``). Then the user runs
``git commit``, ``git status``, ``git st`` and a login shell on the host: no marker may
appear. A loop whose agent has no box (a ``command`` backend) plants on the host itself: the
loop's check of git's internals finishes it ``hook_abort`` (13), naming what changed.

Run as root and, through ``setpriv``, as ``nobody``, in a scratch folder under ``/var/tmp``.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

import nobody_support
from agent_support import text_response, tool_response, tool_results
from mockapi_support import MockAPI
from nobody_support import (
    SETPRIV,
    as_user,
    forgeflare_argv,
    forgeflare_env,
    shared_scratch,
)
from project_support import run_text
from supervisor_agents.project import Project

BWRAP = shutil.which("bwrap")

pytestmark = [
    pytest.mark.linux_only("bubblewrap and setpriv are Linux"),
    pytest.mark.skipif(BWRAP is None, reason="needs bubblewrap (Debian: bubblewrap)"),
    pytest.mark.skipif(os.geteuid() != 0, reason="runs as root and as nobody: needs root"),
    pytest.mark.skipif(SETPRIV is None, reason="needs util-linux setpriv to run as nobody"),
]


class Scratch(nobody_support.Scratch):
    """The shared scratch with a marks folder and a rustup-style ``~/.cargo`` on the PATH."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.marks = root / "marks"
        for path in (self.home / ".cargo" / "bin", self.marks):
            path.mkdir(parents=True)
        # rustup's usual line: every login shell sources ~/.cargo/env.
        (self.home / ".profile").write_text('. "$HOME/.cargo/env"\n')
        (self.home / ".cargo" / "env").write_text('export PATH="$HOME/.cargo/bin:$PATH"\n')
        git = ["git", "-C", str(self.project)]
        subprocess.run([*git, "init", "-q"], check=True)
        for key, value in (("user.name", "U"), ("user.email", "u@example.invalid")):
            subprocess.run([*git, "config", key, value], check=True)
        (self.project / ".gitignore").write_text(".fresher/runs/\n")
        subprocess.run([*git, "add", "-A"], check=True)
        subprocess.run([*git, "commit", "-qm", "init"], check=True)


@pytest.fixture
def scratch() -> Iterator[Scratch]:
    with shared_scratch("forgeflare-plants-") as root:
        yield Scratch(root)


def _plants(marks: Path) -> list[str]:
    def mark(name: str) -> str:
        return f"touch {marks}/{name}"

    return [
        f"printf '#!/bin/sh\\n{mark('pre-commit')}\\n' > .git/hooks/pre-commit; "
        "chmod +x .git/hooks/pre-commit",
        f"git config core.fsmonitor {shlex.quote(mark('fsmonitor') + '; false')}",
        f"git config core.pager {shlex.quote(mark('pager') + '; cat')}",
        f"git config alias.st {shlex.quote('!' + mark('alias'))}",
        f"echo {shlex.quote(mark('cargo-env'))} >> ~/.cargo/env",
        f"printf '#!/bin/sh\\n{mark('cargo-git')}\\n' > ~/.cargo/bin/git; "
        "chmod +x ~/.cargo/bin/git",
        f"printf '* filter=evil\\n' >> .git/info/attributes; "
        f"git config filter.evil.clean {shlex.quote(mark('filter'))}",
        # Last: a repository of the agent's own in place of the user's.
        f"mv .git .git-old && git init -q && git config alias.st {shlex.quote('!' + mark('swap'))}",
    ]


def _users_commands(scratch: Scratch, user: str) -> None:
    """What the user runs on the host the next morning (each may fail: only markers count)."""
    env = {
        "HOME": str(scratch.home),
        "PATH": f"{scratch.home}/.cargo/bin:/usr/local/bin:/usr/bin:/bin",
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    (scratch.project / "work.txt").write_text("more\n")
    for command in (
        "git add -A && git commit -qm more",
        "git status",
        "git log -1",
        "git st",
        "git diff HEAD~1",
    ):
        subprocess.run(
            [*as_user(user), "bash", "-c", command],
            cwd=scratch.project,
            env=env,
            capture_output=True,
            timeout=60,
            check=False,
        )
    subprocess.run(
        [*as_user(user), "bash", "-l", "-c", "git --version"],
        cwd=scratch.home,
        env=env,
        capture_output=True,
        timeout=60,
        check=False,
    )


@pytest.mark.parametrize("user", ["root", "nobody"])
def test_plants_in_the_box_never_run_on_the_host(
    user: str, scratch: Scratch, mock_api: MockAPI
) -> None:
    plants = _plants(scratch.marks)
    server = mock_api(
        {
            "responses": [
                *(tool_response(("Bash", {"command": c})) for c in plants),
                text_response("done"),
            ],
            "when_exhausted": "end_turn",
        }
    )
    scratch.give_to(user)
    done = run_text(
        [*forgeflare_argv(user), "loop", "--max-iterations", "1"],
        cwd=scratch.project,
        env=scratch.env(ANTHROPIC_API_URL=server.url, **forgeflare_env(user)),
        timeout=180,
    )
    said = done.stdout + done.stderr
    assert "sandbox: bubblewrap" in said, said[-3000:]
    results = [tool_results(r)[0] for r in server.requests()[1 : len(plants) + 1]]
    assert len(results) == len(plants), said[-3000:]
    _users_commands(scratch, user)
    assert sorted(p.name for p in scratch.marks.iterdir()) == []
    # Nothing changed that the check watches: the loop finished as it would have.
    assert done.returncode != 13, said[-3000:]
    # What must keep working did: the agent's own commit in the box.
    log = subprocess.run(
        ["git", "-c", "safe.directory=*", "-C", str(scratch.project), "log", "--format=%s"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "more" in log.stdout


@pytest.mark.parametrize(
    ("plant", "named"),
    [
        ("printf '#!/bin/sh\\ntrue\\n' > .git/hooks/pre-commit", ".git/hooks/pre-commit"),
        ("git config core.fsmonitor 'touch m; false'", "git config core.fsmonitor"),
        ("git config alias.st '!touch m'", "git config alias.st"),
        ("printf '* filter=x\\n' > .git/info/attributes", ".git/info/attributes"),
        ("git config core.hooksPath githooks", "git config core.hookspath"),
    ],
)
async def test_an_unboxed_agents_plant_finishes_the_loop_hook_abort(
    plant: str, named: str, scratch: Scratch
) -> None:
    """A ``command`` agent (as Claude Code or Codex: no forgeflare box) changes git's
    internals on the host: the loop stops with exit 13 and names what changed. The loop runs
    in the test process (its check is the point; the agent stays a real child); the boxed
    plants above start ``forgeflare loop`` as a real process."""
    agent = scratch.root / "agent.sh"
    agent.write_text(f"#!/bin/sh\n{plant}\n")
    agent.chmod(0o755)
    done = await Project(scratch.project).arun(
        "--max-iterations",
        "2",
        "--backend",
        "command",
        "--agent-cmd",
        str(agent),
        env=scratch.env(),
    )
    said = done.stdout + done.stderr
    assert done.code == 13, said[-3000:]
    assert f"git internals changed during the run: {named}" in said, said[-3000:]
