"""A failure retrying cannot fix ends the night at once (or moves it to the fallback).

The stand-in agents are shell scripts, the loop is the real ``forgeflare loop``: one that
prints ``Not logged in`` and exits 1 ends the loop in one iteration with exit 12 (``error``)
and its line, not three error iterations with pauses between them; one whose unknown error
comes twice in a row ends after the second; with a fallback set, the fallback goes on.
The first loop is a real process; the others run in the test process (``Project.arun``: the
agents stay real children), their point being the loop's decision.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

from mockapi_support import MockAPI
from supervisor_agents.project import Project, base_env, env_for

NOT_LOGGED_IN = "Not logged in · Please run /login"


def stand_in(project: Project, name: str, body: str) -> str:
    """An agent command: a shell script that reads its prompt and does ``body``."""
    script = project.write(f"agents/{name}.sh", f"cat > /dev/null\n{body}\n")
    return shlex.join(["sh", str(script)])


def rows(project: Project) -> list[dict[str, Any]]:
    return project.record()["iterations"]  # type: ignore[no-any-return]


def new_project(tmp_path: Path, config: str = "") -> Project:
    project = Project(tmp_path / "p")
    project.write(".fresher/config.toml", "[fresher]\nmax_iterations = 5\n" + config)
    return project


def test_not_logged_in_ends_the_loop_in_one_iteration_with_its_line(tmp_path: Path) -> None:
    project = new_project(tmp_path)
    agent = stand_in(project, "agent", f"echo '{NOT_LOGGED_IN}'\nexit 1")
    # The real pause after an error (30 s by default) stays: the loop must not reach it.
    env = base_env()
    env.pop("FRESHER_ERROR_PAUSE")
    done = project.run("--agent-cmd", agent, env=env, timeout=120)
    assert done.code == 12, done.stdout + done.stderr
    (row,) = rows(project)
    assert (row["outcome"], row["detail"]) == ("agent_error", NOT_LOGGED_IN)
    record = project.record()
    assert record["finish_type"] == "error"
    assert NOT_LOGGED_IN in record["finish_reason"]
    assert NOT_LOGGED_IN in done.stdout + done.stderr
    assert "pausing" not in done.stdout + done.stderr


async def test_the_same_error_twice_ends_the_loop(tmp_path: Path, mock_api: MockAPI) -> None:
    """The own agent's error (its ``final`` detail) is error text: the second time, the loop
    ends, without the third iteration the error streak would wait for."""
    bad = {"error": {"status": 400, "type": "invalid_request_error", "message": "tools: bad"}}
    server = mock_api({"responses": [bad, bad, bad, bad]})
    project = new_project(tmp_path)
    done = await project.arun(env=env_for(server))
    assert done.code == 12, done.stdout + done.stderr
    assert [r["outcome"] for r in rows(project)] == ["api_error", "api_error"]
    assert "tools: bad" in project.record()["finish_reason"]


async def test_a_command_agents_last_line_twice_is_not_error_text(tmp_path: Path) -> None:
    """A ``command`` agent's last line of output may be anything (a progress line): only the
    table decides for it, and the error streak ends this loop after three."""
    project = new_project(tmp_path)
    agent = stand_in(project, "agent", "echo 'config: unknown key at line 3'\nexit 1")
    done = await project.arun("--agent-cmd", agent, env=base_env())
    assert done.code == 12, done.stdout + done.stderr
    assert len(rows(project)) == 3


async def test_with_a_fallback_the_night_goes_on_with_it(tmp_path: Path) -> None:
    project = new_project(tmp_path)
    ok = stand_in(project, "ok", "echo working")
    config = (
        '[agent]\nfallback = ["command:spare"]\n'
        f"[agent.profiles.spare]\ncommand = {json.dumps(ok)}\n"
    )
    project.write(".fresher/config.toml", "[fresher]\nmax_iterations = 2\n" + config)
    agent = stand_in(project, "agent", f"echo '{NOT_LOGGED_IN}'\nexit 1")
    done = await project.arun("--agent-cmd", agent, env=base_env())
    assert done.code == 10, done.stdout + done.stderr  # max_iterations, on the fallback
    got = [(r["outcome"], r.get("profile") or "") for r in rows(project)]
    assert got[0] == ("agent_error", "")
    assert got[1:] == [("ok", "spare")] * (len(got) - 1)
