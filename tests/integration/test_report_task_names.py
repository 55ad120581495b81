"""``forgeflare report``'s cost per task names each task: a real loop (the own agent against
``forgeflare mock-api``) checks plan boxes, the checkpoint commits them, the report reads the
plan at each iteration's start and end commits."""

from __future__ import annotations

import re
from pathlib import Path

from agent_support import text_response, tick_response
from cli_inprocess import forgeflare_here
from mockapi_support import MockAPI
from supervisor_agents.project import Project, env_for


async def test_cost_per_task_names_the_task(tmp_path: Path, mock_api: MockAPI) -> None:
    project = Project(tmp_path)
    project.write("IMPLEMENTATION_PLAN.md", "# Plan\n- [ ] add the parser\n- [ ] add the lexer\n")
    project.write(".fresher/PROMPT.building.md", "Do the next task of IMPLEMENTATION_PLAN.md.\n")
    project.git_init()
    server = mock_api(
        {
            "responses": [
                tick_response("add the parser"),
                text_response("Parser done."),
                tick_response("add the lexer"),
                text_response("Lexer done."),
            ]
        }
    )
    done = await project.arun("--max-iterations", "4", "--mode", "building", env=env_for(server))
    assert done.code == 0, done.stderr  # complete: no open box, committed by the checkpoint
    report = forgeflare_here(project.dir, "report")
    assert report.returncode == 0, report.stderr
    text = report.stdout
    section = text[text.index("Cost per task") :].split("\n\n")[0].splitlines()
    assert len(section) == 3, section
    assert re.fullmatch(r'  iteration 1: "add the parser", \$\d+\.\d+ \(1 iteration\)', section[1])
    assert re.fullmatch(r'  iteration 2: "add the lexer", \$\d+\.\d+ \(1 iteration\)', section[2])
