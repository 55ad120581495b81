"""The file tools stay in the project; Bash can be sandboxed with bubblewrap."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_support import run_agent, run_agent_here, text_response, tool_results, with_one_call
from forgeflare.agent.tools import ALLOW_PATHS_ENV
from mockapi_support import MockAPI
from tool_support import run_tool


@pytest.fixture
def layout(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    project = tmp_path / "project"
    outside = tmp_path / "outside"
    project.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text("outside\n")
    (project / "inside.txt").write_text("inside\n")
    (project / "link").symlink_to(outside)
    (project / "link.txt").symlink_to(outside / "secret.txt")
    yield project, outside
    os.environ.pop(ALLOW_PATHS_ENV, None)


ESCAPES = [
    ("Read", {"file_path": "../outside/secret.txt"}),
    ("Read", {"file_path": "{outside}/secret.txt"}),
    ("Read", {"file_path": "link.txt"}),
    ("Read", {"file_path": "link/secret.txt"}),
    ("Read", {"file_path": "~/.bashrc"}),
    ("Read", {"file_path": "/etc/hostname"}),
    ("Glob", {"pattern": "*", "path": "../outside"}),
    ("Glob", {"pattern": "../outside/*"}),
    ("Glob", {"pattern": "{outside}/*"}),
    ("Grep", {"pattern": "outside", "path": "../outside"}),
    ("Grep", {"pattern": "outside", "path": "link"}),
    ("Edit", {"file_path": "../outside/new.txt", "old_str": "", "new_str": "x"}),
    ("Edit", {"file_path": "link/new.txt", "old_str": "", "new_str": "x"}),
]


@pytest.mark.parametrize(("tool", "args"), ESCAPES)
def test_every_escape_is_refused(
    layout: tuple[Path, Path], tool: str, args: dict[str, str]
) -> None:
    project, outside = layout
    data = {k: v.format(outside=outside) for k, v in args.items()}
    out = run_tool(tool, data, cwd=project)
    if tool == "Glob" and not out.is_error:
        assert "secret.txt" not in out.content  # matched nothing outside
    else:
        assert out.is_error, out.content
        assert "outside the project" in out.content
        assert "--allow-path" in out.content
    assert not (outside / "new.txt").exists()


def test_inside_works_and_allow_path_opens_a_directory(layout: tuple[Path, Path]) -> None:
    project, outside = layout
    assert run_tool("Read", {"file_path": "inside.txt"}, cwd=project).content == "inside\n"
    os.environ[ALLOW_PATHS_ENV] = str(outside)
    out = run_tool("Read", {"file_path": "link.txt"}, cwd=project)
    assert out.content == "outside\n"


def test_agent_refuses_outside_reads(tmp_path: Path, mock_api: MockAPI) -> None:
    project = tmp_path / "p"
    project.mkdir()
    (tmp_path / "secret.txt").write_text("s3cret\n")
    server = mock_api(with_one_call("Read", {"file_path": "../secret.txt"}, "ok"))
    done = run_agent_here(project, server.url)
    assert done.returncode == 0, done.stderr
    (result,) = tool_results(server.requests()[1])
    assert result["is_error"]
    assert "s3cret" not in str(result["content"])
    allowed = mock_api(with_one_call("Read", {"file_path": "../secret.txt"}, "ok"))
    done = run_agent_here(project, allowed.url, "go", "--allow-path", str(tmp_path))
    (result,) = tool_results(allowed.requests()[1])
    assert "s3cret" in str(result["content"])


BWRAP = shutil.which("bwrap")


def _write_outside(
    tmp_path: Path, mock_api: MockAPI, *args: str, run: Callable[..., Any] = run_agent
) -> tuple[Path, Any]:
    project = tmp_path / "p"
    project.mkdir(exist_ok=True)
    target = tmp_path / "escaped.txt"
    command = f"echo escaped > {target}; echo inside > inside.txt"
    server = mock_api(with_one_call("Bash", {"command": command}, "ok"))
    done = run(project, server.url, "go", *args)
    return target, done


@pytest.mark.linux_only("bubblewrap is Linux software")
@pytest.mark.skipif(
    BWRAP is None, reason="needs bubblewrap (Debian: bubblewrap, installed by .ci/run)"
)
def test_sandbox_blocks_writes_outside_the_project(tmp_path: Path, mock_api: MockAPI) -> None:
    target, done = _write_outside(tmp_path, mock_api, "--sandbox")
    assert done.returncode == 0, done.stderr
    assert not target.exists()
    assert (tmp_path / "p" / "inside.txt").read_text() == "inside\n"
    # The control without the sandbox: the agent's process is not what it is about.
    target, done = _write_outside(tmp_path, mock_api, run=run_agent_here)
    assert target.read_text() == "escaped\n"


@pytest.mark.linux_only("elsewhere --sandbox refuses with 'bubblewrap runs on Linux only'")
def test_sandbox_without_bubblewrap_refuses(tmp_path: Path, mock_api: MockAPI) -> None:
    server = mock_api({"responses": [text_response("ok")]})
    env = {"PATH": "/nonexistent"}
    done = run_agent_here(tmp_path, server.url, "go", "--sandbox", env=env)
    assert done.returncode == 2
    assert "bubblewrap (bwrap) is not installed" in done.stderr
    assert server.requests() == []
