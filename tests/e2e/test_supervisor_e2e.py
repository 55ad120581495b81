"""``forgeflare loop`` with the real ``forgeflare run`` against ``forgeflare mock-api``.

The scripted loop converges in its second iteration: each iteration's agent checks one box of
IMPLEMENTATION_PLAN.md with the Edit tool and ends its turn; after the second, no box is left.
"""

from __future__ import annotations

from pathlib import Path

from agent_support import text_response, tick_response
from mockapi_support import MockAPI, MockServer
from supervisor_agents.project import Project, base_env

SECTION_3_1 = ("MODE", "MAX_ITERATIONS", "PROJECT_DIR", "LOG_DIR", "STARTED_AT")
STARTED_VARS = ("PLAN_FILE", "SPEC_DIR")
NEXT_VARS = ("ITERATION", "LAST_EXIT_CODE", "LAST_DURATION", "COMMITS_MADE")
FINISHED_VARS = ("ITERATION", "FINISH_TYPE", "TOTAL_ITERATIONS", "TOTAL_COMMITS", "DURATION")


async def test_loop_converges_in_second_iteration(tmp_path: Path, mock_api: MockAPI) -> None:
    project = Project(tmp_path)
    project.write("IMPLEMENTATION_PLAN.md", "# Plan\n- [ ] first\n- [ ] second\n")
    project.write("specs/README.md", "Spec.\n")
    project.write(".fresher/PROMPT.building.md", "Do the next task of IMPLEMENTATION_PLAN.md.\n")
    project.dump_env_hooks()
    server = mock_api(
        {
            "responses": [
                tick_response("first", text="Doing first."),
                text_response("First task done."),
                tick_response("second", text="Doing second."),
                text_response("Second task done."),
            ]
        }
    )
    env = base_env(ANTHROPIC_API_URL=server.url, ANTHROPIC_API_KEY="test")
    env.pop("ANTHROPIC_BASE_URL", None)
    # The supervisor runs in this process (its CLI and signals are tested elsewhere); each
    # iteration's agent is a real `python -m forgeflare run` talking to the mock over loopback.
    done = await project.arun("--max-iterations", "5", "--iteration-timeout", "60s", env=env)
    assert done.code == 0, done.stderr
    check_run(project, server)
    assert "Second task done." in done.stdout


def check_run(project: Project, server: MockServer) -> None:
    tmp_path = project.dir

    rec = project.record()
    assert rec["finish_type"] == "complete"
    assert [it["decision"] for it in rec["iterations"]] == ["continue", "complete"]
    assert [it["stop_reason"] for it in rec["iterations"]] == ["end_turn", "end_turn"]
    assert [it["exit_code"] for it in rec["iterations"]] == [0, 0]
    assert all(sum(it["tokens"].values()) > 0 for it in rec["iterations"])
    assert "- [ ]" not in (tmp_path / "IMPLEMENTATION_PLAN.md").read_text()

    hooks = [e["hook"] for e in project.events() if e["event"] == "hook"]
    assert hooks == ["started", "next_iteration", "next_iteration", "finished"]
    assert all(e["status"] == "ok" for e in project.events() if e["event"] == "hook")

    started = project.hook_env("started")
    for var in SECTION_3_1 + STARTED_VARS:
        assert f"FRESHER_{var}" in started, var
    for n in (1, 2):
        nxt = project.hook_env("next_iteration", n)
        for var in SECTION_3_1 + NEXT_VARS:
            assert f"FRESHER_{var}" in nxt, (n, var)
        assert nxt["FRESHER_ITERATION"] == str(n)
    finished = project.hook_env("finished", 2)
    for var in SECTION_3_1 + FINISHED_VARS:
        assert f"FRESHER_{var}" in finished, var
    assert finished["FRESHER_FINISH_TYPE"] == "complete"
    assert finished["FRESHER_TOTAL_ITERATIONS"] == "2"
    assert finished["FRESHER_MODE"] == "building"
    assert finished["FRESHER_MAX_ITERATIONS"] == "5"
    assert Path(finished["FRESHER_PROJECT_DIR"]) == tmp_path.resolve()

    # The agent got the prompt file on stdin, once per iteration, in the first request.
    requests = server.requests()
    assert len(requests) == 4
    first_user = requests[0]["body"]["messages"][0]["content"]
    text = first_user if isinstance(first_user, str) else first_user[0]["text"]
    assert "Do the next task" in text
