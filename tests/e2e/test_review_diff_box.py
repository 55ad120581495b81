"""The reviewer's diff is collected in the box: a hostile repository's diff programs never run
on the host.

The repository (a copied tree: its ``.git/config`` came with it) plants every program a diff
can run: ``core.fsmonitor``, ``diff.external``, a diff driver's ``command`` and ``textconv``,
a filter driver's ``clean`` and ``smudge``, and one more filter driver named with an
``=`` (``-c filter.a=b.clean=`` would switch off ``filter.a``, not it). Each writes a marker in
a folder outside the box. Plain git on a copy springs them (so the trap is real); a
``forgeflare loop`` with ``[finish] reviewer`` and a stop-hook frame with ``--reviewer`` then
collect the diff the reviewer is shown: 0 markers, and the reviewer saw the work.

Run as root and, through ``setpriv``, as ``nobody``, in a scratch folder under ``/var/tmp``
(outside the box's private ``/tmp``, read-only inside it).
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import nobody_support
from agent_support import text_response, tick_response, tool_response, verdict
from mockapi_support import MockAPI, MockServer
from nobody_support import (
    SETPRIV,
    claim_complete,
    forgeflare_argv,
    forgeflare_env,
    give_to,
    loop_env,
    shared_scratch,
    start_frame,
)
from project_support import git

BWRAP = shutil.which("bwrap")
MODEL = "claude-sonnet-4-5"

pytestmark = [
    pytest.mark.linux_only("bubblewrap and setpriv are Linux"),
    pytest.mark.skipif(BWRAP is None, reason="needs bubblewrap (Debian: bubblewrap)"),
    pytest.mark.skipif(SETPRIV is None, reason="needs util-linux setpriv to run as nobody"),
]


def plant(repo: Path, marks: Path) -> None:
    """A repository whose configuration runs a marker-writing program for every diff hook."""

    def mark(name: str) -> str:
        return f"touch {marks}/{name}"

    repo.mkdir(exist_ok=True)
    git(repo, "init", "-q")
    (repo / "a.txt").write_text("a\n")
    (repo / "b.txt").write_text("b\n")
    (repo / "c.txt").write_text("c\n")
    (repo / "d.txt").write_text("d\n")
    # The checkpoint leaves filtered files alone (LFS): the agent's work is in the others.
    (repo / ".gitattributes").write_text(
        "* diff=tc\nb.txt filter=evil\nc.txt filter=a=b\nd.txt diff=evil\n"
    )
    (repo / ".fresher").mkdir()
    (repo / ".fresher" / "config.toml").write_text(
        f"[limits]\nstall_after = 0\n[finish]\nreviewer = '{MODEL}'\n"
    )
    (repo / ".gitignore").write_text(".fresher/runs/\n")
    (repo / "IMPLEMENTATION_PLAN.md").write_text("- [ ] one\n")
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=T", "-c", "user.email=t@example.invalid", "commit", "-qm", "init")
    for key, value in {
        "core.fsmonitor": f"{mark('fsmonitor')}; false",
        "diff.external": f"sh -c '{mark('external')}'",
        "diff.evil.command": f"sh -c '{mark('command')}'",
        "diff.tc.textconv": f"sh -c '{mark('textconv')}; cat \"$0\"'",
        "filter.evil.clean": f"{mark('clean')}; cat",
        "filter.evil.smudge": f"{mark('smudge')}; cat",
        "filter.a=b.clean": f"{mark('equals-clean')}; cat",
        "user.name": "T",
        "user.email": "t@example.invalid",
    }.items():
        git(repo, "config", key, value)


def marks_of(marks: Path) -> list[str]:
    return sorted(p.name for p in marks.iterdir())


class Scratch(nobody_support.Scratch):
    """The shared scratch whose project is ``plant``'s repository, with a marks folder."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.marks = root / "marks"
        self.marks.mkdir()
        plant(self.project, self.marks)


@pytest.fixture
def scratch() -> Iterator[Scratch]:
    with shared_scratch("forgeflare-reviewdiff-") as root:
        yield Scratch(root)


def test_plain_git_springs_every_plant(tmp_path: Path) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    repo = tmp_path / "repo"
    plant(repo, marks)
    for name in ("a.txt", "b.txt", "c.txt", "d.txt"):
        (repo / name).write_text("changed\n")
    for args in (["status"], ["diff", "HEAD"], ["diff", "--stat", "HEAD"], ["add", "-A"]):
        subprocess.run(["git", *args], cwd=repo, capture_output=True, check=False)
    springs = {"fsmonitor", "external", "command", "clean", "smudge", "equals-clean"}
    assert springs <= set(marks_of(marks))


def _reviewed(server: MockServer) -> list[str]:
    return [
        r["body"]["messages"][0]["content"][0]["text"]
        for r in server.requests()
        if r["body"].get("tool_choice", {}).get("name") == "verdict"
    ]


@pytest.mark.parametrize("user", ["root", "nobody"])
def test_a_loops_reviewer_diff_runs_no_plant(
    user: str, scratch: Scratch, mock_api: MockAPI
) -> None:
    project = scratch.project
    edit = ("Edit", {"file_path": "a.txt", "old_str": "a", "new_str": "changed by the agent"})
    work = tool_response(edit, _tick())
    server = mock_api(
        {
            "conversations": [
                {"match": "verdict", "responses": [verdict(True, ["done"], [])]},
                {"match": "Bash", "responses": [work, text_response("done")]},
            ]
        }
    )
    give_to(scratch.root, user)
    done = subprocess.run(
        [*forgeflare_argv(user), "loop", "--max-iterations", "2"],
        cwd=project,
        env=loop_env(
            scratch.root,
            scratch.home,
            "test-key",
            ANTHROPIC_API_URL=server.url,
            **forgeflare_env(user),
        ),
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    said = done.stdout + done.stderr
    assert marks_of(scratch.marks) == [], said[-3000:]
    assert done.returncode == 0, said[-3000:]
    (shown,) = _reviewed(server)
    assert "+changed by the agent" in shown
    assert "+- [x] one" in shown


def _tick() -> tuple[str, dict[str, Any]]:
    block = tick_response()["content"][0]
    return block["name"], block["input"]


@pytest.mark.parametrize("user", ["root", "nobody"])
def test_the_stop_hooks_reviewer_diff_runs_no_plant(
    user: str, scratch: Scratch, mock_api: MockAPI
) -> None:
    project = scratch.project
    server = mock_api(
        {"conversations": [{"match": "verdict", "responses": [verdict(True, ["ok"], [])]}]}
    )
    env = loop_env(
        scratch.root,
        scratch.home,
        "test-key",
        ANTHROPIC_BASE_URL=server.url,
        **forgeflare_env(user),
    )
    give_to(scratch.root, user)
    hook = [*forgeflare_argv(user), "stop-hook"]
    started = start_frame(hook, project, env, "--reviewer", MODEL)
    assert started.returncode == 0, started.stderr
    # The session's agent (Claude Code, on the host) did its work: a change and a new file.
    (project / "a.txt").write_text("changed in the session\n")
    (project / "new.txt").write_text("a new file\n")
    give_to(scratch.root, user)
    done = claim_complete(hook, project, env)
    assert marks_of(scratch.marks) == [], done.stderr[-3000:]
    (shown,) = _reviewed(server)
    assert "+changed in the session" in shown
    assert "+a new file" in shown
