"""Budget is a cap: a real loop of the own agent against ``forgeflare mock-api`` never spends
past ``--max-cost`` (it used to end at ``$5.00 of $3``), and says its overshoot bound.

The own agent's loops run ``forgeflare loop`` through the real entry point in the test process
(``forgeflare_here``; the agent stays a real ``forgeflare run`` child): the cap is the point.
The CLI agent's loop starts ``forgeflare loop`` as a real process."""

from __future__ import annotations

from typing import Any

from agent_support import tool_response
from cli_inprocess import forgeflare_here
from mockapi_support import MockServer
from supervisor_agents.project import Project, env_for

OPUS = "claude-opus-4-6"


def test_the_own_agent_never_passes_max_cost(tmp_path: Any, mock_api: Any) -> None:
    project = Project(tmp_path)
    project.git_init()
    # Honest usage: the input counted from the request, 16,000 output tokens ($0.40 at opus
    # prices) inside the agent's max_tokens (16,384). The spend check after a response would
    # send the request that passes $3; the worst case before it does not.
    work = {**tool_response(("Glob", {"pattern": "*"})), "usage": {"output_tokens": 16_000}}
    server: MockServer = mock_api({"responses": [work] * 40})
    done = forgeflare_here(
        project.dir, "loop", "--mode", "planning", "--max-cost", "3", "--model", OPUS,
        env=env_for(server),
    )  # fmt: skip
    assert done.returncode == 17, done.stderr
    rec = project.record()
    assert rec["finish_type"] == "budget"
    spent = rec["totals"]["cost_usd"]
    assert 2.4 < spent <= 3.0, spent
    assert len(server.requests()) == 7  # the 8th could have cost up to $0.41 more
    out = done.stdout + done.stderr
    assert "could cost up to $0.4" in out
    assert "past the cap: $0" in rec["finish_reason"], rec["finish_reason"]


def test_a_reviewer_over_the_budget_is_not_asked_and_the_loop_finishes_budget(
    tmp_path: Any, mock_api: Any
) -> None:
    from test_loop_evidence import reviewer_script, verdict_response

    project = Project(tmp_path)
    project.write("IMPLEMENTATION_PLAN.md", "- [ ] one\n")
    project.write(
        ".fresher/config.toml",
        "[limits]\ngate = 'true'\n[finish]\nreviewer = 'claude-opus-4-1'\n",
    )
    accepted = verdict_response({"complete": True, "reasons": ["done"], "missing": []})
    server: MockServer = mock_api(reviewer_script([accepted]))
    # The agent's requests fit in $0.10 (haiku: $0.08 of output at worst); the reviewer's
    # 2,048 output tokens at opus-4-1 prices ($0.15) do not: it is never asked.
    done = forgeflare_here(
        project.dir, "loop", "--max-cost", "0.1", "--model", "claude-haiku-4-5",
        env=env_for(server),
    )  # fmt: skip
    assert done.returncode == 17, done.stderr
    rec = project.record()
    assert rec["finish_type"] == "budget"
    assert rec["totals"]["cost_usd"] <= 0.1
    (row,) = rec["iterations"]
    assert row["review"]["error"].startswith("not asked, over budget: the next request could")
    assert not [r for r in server.requests() if r["body"].get("tool_choice")]
    assert rec["finish_reason"].startswith("stopped: the reviewer was not asked, over budget")


FAKE_CLAUDE = r"""
import json, sys, time
open(sys.argv[1], "w").write(json.dumps(sys.argv[2:]))
sys.stdin.read()
def say(event):
    print(json.dumps(event), flush=True)
say({"type": "system", "subtype": "init", "session_id": "s1", "model": "claude-opus-4-6"})
for n in range(20):
    # $0.505 a message at opus-4-6 prices: 1,000 input and 20,000 output tokens
    usage = {"input_tokens": 1000, "output_tokens": 20000}
    content = [{"type": "tool_use", "id": f"t{n}", "name": "Bash", "input": {"command": "ls"}}]
    say({"type": "assistant", "message": {"id": f"m{n}", "usage": usage, "content": content}})
time.sleep(600)  # a CLI that goes on spending until it is ended
"""


def test_a_cli_agent_is_ended_when_its_streamed_cost_passes_the_cap(tmp_path: Any) -> None:
    import shlex
    import sys

    from supervisor_agents.project import base_env

    project = Project(tmp_path)
    project.git_init()
    fake = tmp_path / "fake_claude.py"
    fake.write_text(FAKE_CLAUDE)
    seen = tmp_path / "argv.json"
    command = shlex.join([sys.executable, str(fake), str(seen)])
    env = base_env(ANTHROPIC_API_KEY="test-key", IS_SANDBOX="1")  # as root, as Claude Code needs
    done = project.run(
        "--backend", "claude", "--agent-cmd", command, "--max-cost", "3", "--mode", "planning",
        env=env,
    )  # fmt: skip
    assert done.code == 17, done.stderr
    import json

    argv = json.loads(seen.read_text())
    assert argv[argv.index("--max-budget-usd") + 1] == "3.000000"
    rec = project.record()
    assert rec["finish_type"] == "budget"
    (row,) = rec["iterations"]
    assert row["outcome"] == "budget"
    # Ended after the message that passed $3 (the 6th, $3.03): past the cap by less than one
    # API request, the bound the summary states for Claude Code.
    assert 3.0 < rec["totals"]["cost_usd"] <= 3.0 + 0.505, rec["totals"]
    assert "past the cap: one API request of Claude Code" in rec["finish_reason"]
    assert "passes the budget of $3" in done.stderr
