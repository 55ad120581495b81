"""A hard link in the project to a file outside it does not let the file tools out.

Confinement resolves symlinks, but a hard link is the outside file under a second name: Read,
Grep and Edit refuse a project file with more than one link, unless the user allowed its
directory with ``--allow-path``. Through the real agent against the mock API.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from agent_support import run_agent, text_response, tool_response, tool_results
from forgeflare.agent.tools import link_refused
from mockapi_support import MockAPI, MockServer

SECRET = "outside-secret-4711"

CALLS = [
    ("Read", {"file_path": "notes.txt"}),
    ("Grep", {"pattern": "secret-4711"}),
    ("Grep", {"pattern": "secret-4711", "path": "notes.txt"}),
    ("Edit", {"file_path": "notes.txt", "old_str": SECRET, "new_str": "changed"}),
]


def linked_project(tmp_path: Path) -> tuple[Path, Path]:
    project = tmp_path / "project"
    outside = tmp_path / "outside"
    project.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text(f"{SECRET}\n")
    try:
        os.link(outside / "secret.txt", project / "notes.txt")
    except OSError as exc:
        pytest.skip(f"no hard links here: {exc}")
    (project / "plain.txt").write_text("nothing\n")
    return project, outside


def results(server: MockServer) -> list[dict[str, Any]]:
    (request,) = [r for r in server.requests() if tool_results(r)]
    return tool_results(request)


def test_read_grep_edit_refuse_a_hard_link(tmp_path: Path, mock_api: MockAPI) -> None:
    project, outside = linked_project(tmp_path)
    server = mock_api({"responses": [tool_response(*CALLS), text_response("done")]})
    done = run_agent(project, server.url)
    assert done.returncode == 0, done.stderr
    read, grep_all, grep_one, edit = results(server)
    for result in (read, grep_one, edit):
        assert result["is_error"] is True
        assert "hard links" in str(result["content"])
    assert grep_all.get("is_error") is not True
    assert SECRET not in str(grep_all["content"])  # the tree search skips it
    assert (outside / "secret.txt").read_text() == f"{SECRET}\n"


def test_an_allowed_directory_lets_it_through(tmp_path: Path, mock_api: MockAPI) -> None:
    project, _ = linked_project(tmp_path)
    server = mock_api({"responses": [tool_response(*CALLS[:2]), text_response("done")]})
    done = run_agent(project, server.url, "go", "--allow-path", str(project))
    assert done.returncode == 0, done.stderr
    read, grep_all = results(server)
    assert SECRET in str(read["content"])
    assert SECRET in str(grep_all["content"])


@pytest.mark.parametrize(
    ("project_only", "extra", "refused"),
    [(True, 0, False), (True, 1, True), (True, 5, True), (False, 1, False), (False, 0, False)],
)
def test_the_rule(project_only: bool, extra: int, refused: bool) -> None:
    assert link_refused(project_only, extra) is refused
