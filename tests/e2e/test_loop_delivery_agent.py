"""One meaning of the tag: the own agent (against ``forgeflare mock-api``) claims completion with
``<loop-done>COMPLETE</loop-done>`` like every backend, and the claim is judged on what is
delivered; the docs' fleet example (no ``plan`` key) completes in a scaffolded project.

The tag's loop runs in the test process (``Project.arun``: the agent stays a real
``forgeflare run`` child) and ``init`` through the CLI's entry point in-process; the fleet
starts its loop as a real process."""

from __future__ import annotations

import json
import re
import sys
import tomllib
from pathlib import Path

import tomli_w

from agent_support import text_response, tool_response, with_one_call
from cli_inprocess import run_cli
from mockapi_support import MockAPI
from project_support import git, run_text
from supervisor_agents.project import Project, env_for

REPO = Path(__file__).resolve().parents[2]
TAG = "<loop-done>COMPLETE</loop-done>"


def _repo(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.name", "Test")
    git(path, "config", "user.email", "test@example.invalid")
    git(path, "config", "commit.gpgsign", "false")
    return path


async def test_the_own_agent_claims_with_the_tag_and_the_loop_delivers(
    tmp_path: Path, mock_api: MockAPI
) -> None:
    project = Project(_repo(tmp_path / "proj"))
    project.write(".gitignore", ".fresher/\n.forgeflare/\n.entire/\n")
    # a box stays open: only the tag can claim completion here
    project.write("IMPLEMENTATION_PLAN.md", "- [ ] the thing\n- [ ] a later thing\n")
    git(project.dir, "add", "-A")
    git(project.dir, "commit", "-qm", "init")
    server = mock_api(
        with_one_call("Bash", {"command": "echo done > done.txt"}, f"The task is done.\n{TAG}")
    )
    done = await project.arun("--max-iterations", "3", env=env_for(server))
    assert done.code == 0, done.stdout + done.stderr
    rec = project.record()
    (row,) = rec["iterations"]
    assert row["signal"] == TAG
    assert row["claim"]["by"] == "tag"
    assert row["claim"]["accepted"] is True
    assert row["checkpoint"]["sha"] == git(project.dir, "rev-parse", "HEAD")
    assert git(project.dir, "show", "HEAD:done.txt") == "done"
    assert git(project.dir, "status", "--porcelain") == ""
    # the agent was taught the tag (in its system prompt, as a claim the loop checks)
    system = json.dumps(server.requests()[0]["body"].get("system"))
    assert TAG in system
    assert "the loop then checks the claim" in system


def _readme_fleet_example() -> str:
    text = (REPO / "docs" / "many-loops.md").read_text(encoding="utf-8")
    found = re.search(r"```toml\n# file: FLEET\.toml\n(.*?)```", text, re.DOTALL)
    assert found is not None, "the docs' FLEET.toml example (docs/many-loops.md)"
    return found.group(1)


def _unhurried_hooks(project: Path) -> None:
    """The scaffold's hooks, given two minutes each: its 3-5 s suit a normal machine, and with
    three suites at once the guard's Python start took longer, so the agent's Bash was blocked
    (guards fail closed) and the fleet had nothing to land. The hooks still run; hook
    timeouts have tests of their own."""
    path = project / ".forgeflare" / "hooks.toml"
    config = tomllib.loads(path.read_text(encoding="utf-8"))
    for hook in config["hooks"]:
        hook["timeout_ms"] = 120_000
    path.write_text(tomli_w.dumps(config), encoding="utf-8")


def test_the_readme_fleet_example_completes_in_a_scaffolded_project(
    tmp_path: Path, mock_api: MockAPI
) -> None:
    example = _readme_fleet_example()
    assert "plan =" not in example  # the point: no plan key, the tag completes it
    repo = _repo(tmp_path / "repo")
    init = run_cli(["init", str(repo)], cwd=tmp_path)
    assert init.returncode == 0, init.stderr
    _unhurried_hooks(repo)
    (repo / "Makefile").write_text("test:\n\ttest -s parser.py\n")  # the example's gate
    (repo / "FLEET.toml").write_text(example)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "scaffold")
    server = mock_api(
        {
            "conversations": [
                {
                    "match": "Implement specs/parser.md",
                    "responses": [
                        # the work, left uncommitted: the loop's checkpoint commits it
                        tool_response(("Bash", {"command": "echo 'def parse(): ...' > parser.py"})),
                        text_response(f"The parser is implemented.\n{TAG}"),
                    ],
                }
            ]
        }
    )
    env = env_for(server)
    done = run_text(
        [sys.executable, "-m", "forgeflare", "fleet", "run", "--trust-project", "FLEET.toml"],
        cwd=repo,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    state = json.loads((repo / ".forgeflare-fleet" / "night" / "fleet.json").read_text())
    (parser,) = state["loops"]
    assert parser["finish_type"] == "complete"
    assert parser["status"] == "landed"
    assert (repo / "parser.py").read_text() == "def parse(): ...\n"
    assert "forgeflare: checkpoint after iteration 1" in git(repo, "log", "--format=%s", "main")
