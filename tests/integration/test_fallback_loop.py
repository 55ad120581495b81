"""Fallback agents end to end: the own agent hits a usage limit, a fallback profile goes on.

Two mock Messages APIs stand for two accounts: the primary's (``[agent]`` default) and the
``cheap`` profile's (its ``env`` points the agent at the second server, its ``model`` differs).
The loops run in the test process (the agents stay real children); the preflight refusals go
through the CLI's entry point in-process (``run_cli``).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from agent_support import text_response, tool_response
from cli_inprocess import run_cli
from mockapi_support import MockAPI
from supervisor_agents.project import Done, Project, python_agent

LIMIT = {
    "error": {
        "status": 429,
        "type": "rate_limit_error",
        "headers": {"retry-after": "7200"},  # a usage window: 2 h
    }
}
SCALE = "0.0005"  # 2 h -> 3.6 s


def _project(tmp_path: Path, fallback_url: str) -> Path:
    project = tmp_path / "p"
    (project / ".fresher").mkdir(parents=True)
    (project / "IMPLEMENTATION_PLAN.md").write_text("- [ ] task\n")
    (project / ".fresher" / "config.toml").write_text(
        "[fresher]\nsmart_termination = false\nmax_iterations = 30\n"
        "[limits]\nstall_after = 0\n"  # the fallback's idle turns are not a stall here
        '[agent]\nfallback = ["forgeflare:cheap"]\n'
        "[agent.profiles.cheap]\n"
        'model = "claude-haiku-4-5"\n'
        f'env = {{ ANTHROPIC_API_URL = "{fallback_url}" }}\n'
    )
    return project


def _env(tmp_path: Path, url: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        ANTHROPIC_API_URL=url,
        ANTHROPIC_API_KEY="test-key",
        FORGEFLARE_TIME_SCALE=SCALE,
        XDG_STATE_HOME=str(tmp_path / "state"),
    )
    return env


def _loop(project: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """``forgeflare loop`` through the real entry point (its preflight too), in this process."""
    return run_cli(["loop", "--mode", "building", *args], cwd=project, env=env)


async def _aloop(project: Path, env: dict[str, str], *args: str) -> Done:
    """:func:`_loop` with the loop in this process (its agents are still real processes)."""
    return await Project(project).arun("--mode", "building", *args, env=env)


def _record(project: Path) -> dict[str, Any]:
    (run,) = sorted((project / ".fresher" / "runs").glob("*/run.json"))
    data: dict[str, Any] = json.loads(run.read_text())
    return data


async def test_a_usage_limit_moves_the_night_to_the_fallback_and_back(
    tmp_path: Path, mock_api: MockAPI
) -> None:
    edit = {"file_path": "IMPLEMENTATION_PLAN.md", "old_str": "[ ]", "new_str": "[x]"}
    done_plan = ("Edit", edit)
    primary = mock_api(
        {"responses": [LIMIT, tool_response(done_plan), text_response("done")]},
    )
    fallback = mock_api({"responses": [], "when_exhausted": "end_turn"})
    project = _project(tmp_path, fallback.url)
    done = await _aloop(project, _env(tmp_path, primary.url))
    assert done.code == 0, done.stderr[-3000:]
    rec = _record(project)
    assert rec["finish_type"] == "complete"
    rows = [(it["backend"], it["profile"], it["outcome"]) for it in rec["iterations"]]
    assert rows[0] == ("forgeflare", "", "rate_limited")
    assert rows[-1] == ("forgeflare", "", "ok")
    middle = rows[1:-1]
    assert middle
    assert all(row == ("forgeflare", "cheap", "ok") for row in middle)
    # The fallback's own model went to the fallback's own server.
    assert {r["body"]["model"] for r in fallback.requests()} == {"claude-haiku-4-5"}
    assert len(primary.requests()) == 3
    log = (project / ".fresher" / "runs" / rec["run_id"] / "loop.log").read_text()
    assert "agent forgeflare -> forgeflare:cheap: forgeflare: usage limit" in log
    assert "agent forgeflare:cheap -> forgeflare: back to the primary" in log
    # The report shows the spend per agent.
    report = run_cli(["report"], cwd=project, env=_env(tmp_path, primary.url))
    assert report.returncode == 0, report.stderr
    assert f"  forgeflare: {len(rows)} it" not in report.stdout  # not every row is the primary's
    assert "  forgeflare: 2 it · " in report.stdout
    assert f"  forgeflare:cheap: {len(middle)} it · " in report.stdout
    # The machine's store knows the window (until it resets).
    store = json.loads((tmp_path / "state" / "forgeflare" / "windows.json").read_text())
    assert [key.partition("@")[0] for key in store["windows"]] == ["forgeflare"]


async def test_a_second_loop_starts_on_the_fallback_when_the_store_knows_the_primary_waits(
    tmp_path: Path, mock_api: MockAPI
) -> None:
    primary = mock_api({"responses": [LIMIT], "when_exhausted": "end_turn"})
    fallback = mock_api({"responses": [], "when_exhausted": "end_turn"})
    project = _project(tmp_path, fallback.url)
    env = _env(tmp_path, primary.url)
    env["FORGEFLARE_TIME_SCALE"] = "1"  # the window stays 2 h: the second loop must not wait
    first = await _aloop(project, env, "--max-iterations", "1")
    assert first.code == 10, first.stderr[-3000:]
    second_dir = tmp_path / "second"
    second_dir.mkdir()
    (second_dir / ".fresher").mkdir()
    (second_dir / ".fresher" / "config.toml").write_text(
        (project / ".fresher" / "config.toml").read_text()
    )
    asked = len(primary.requests())
    second = await _aloop(second_dir, env, "--max-iterations", "1")
    assert second.code == 10, second.stderr[-3000:]
    (row,) = _record(second_dir)["iterations"]
    assert (row["backend"], row["profile"], row["outcome"]) == ("forgeflare", "cheap", "ok")
    assert len(primary.requests()) == asked  # the primary was not asked again
    assert "agent forgeflare -> forgeflare:cheap" in second.stderr


def test_preflight_checks_each_fallback_before_the_night(tmp_path: Path) -> None:
    project = tmp_path / "p"
    (project / ".fresher").mkdir(parents=True)
    config = project / ".fresher" / "config.toml"
    env = _env(tmp_path, "http://127.0.0.1:9")
    config.write_text(
        '[agent]\nfallback = ["command:other"]\n'
        '[agent.profiles.other]\ncommand = "no-such-agent-here --go"\n'
    )
    missing = _loop(project, env, "--max-iterations", "1")
    assert missing.returncode == 2
    (line,) = [ln for ln in missing.stderr.splitlines() if "fallback" in ln]
    assert "'command:other'" in line
    assert "no-such-agent-here" in line
    config.write_text(
        '[agent]\nfallback = ["claude:work"]\n'
        f'[agent.profiles.work]\nenv = {{ CLAUDE_CONFIG_DIR = "{tmp_path / "nope"}" }}\n'
    )
    absent = _loop(project, env, "--max-iterations", "1")
    assert absent.returncode == 2
    assert "CLAUDE_CONFIG_DIR" in absent.stderr
    assert "is not a directory" in absent.stderr
    assert not (project / ".fresher" / "runs").exists()  # nothing started


def _reporting(outcome: str) -> str:
    """A command agent that reports ``outcome`` (``forgeflare schema report``)."""
    code = (
        "import json,os,sys; sys.stdin.read();"
        f"json.dump({{'outcome': '{outcome}'}}, open(os.environ['FORGEFLARE_REPORT'], 'w'))"
    )
    return python_agent(code)


async def test_a_spent_quota_falls_back_at_once_and_finishes_quota_without_one(
    tmp_path: Path,
) -> None:
    project = tmp_path / "p"
    (project / ".fresher").mkdir(parents=True)
    config = project / ".fresher" / "config.toml"
    config.write_text(
        "[fresher]\nsmart_termination = false\n"
        f"[agent]\ncommand = {json.dumps(_reporting('quota'))}\n"
        'fallback = ["command:other"]\n'
        f"[agent.profiles.other]\ncommand = {json.dumps(_reporting('ok'))}\n"
    )
    env = _env(tmp_path, "http://127.0.0.1:9")
    done = await _aloop(project, env, "--max-iterations", "3")
    assert done.code == 10, done.stderr[-3000:]
    rows = [(it["profile"], it["outcome"]) for it in _record(project)["iterations"]]
    assert rows == [("", "quota"), ("other", "ok"), ("other", "ok")]
    assert "agent command -> command:other: command: quota spent, no reset known" in done.stderr
    # Without a fallback a spent quota finishes the night at once (exit 21).
    config.write_text(f"[agent]\ncommand = {json.dumps(_reporting('quota'))}\n")
    alone = await _aloop(project, env, "--max-iterations", "3")
    assert alone.code == 21, alone.stderr[-3000:]


def _costing(cost: float) -> str:
    code = (
        "import json,os,sys; sys.stdin.read();"
        f"report = {{'outcome': 'ok', 'cost_usd': {cost}}};"
        "json.dump(report, open(os.environ['FORGEFLARE_REPORT'], 'w'))"
    )
    return python_agent(code)


async def test_a_monthly_credit_spent_by_earlier_runs_falls_back_or_waits_before_the_first_iteration(  # noqa: E501
    tmp_path: Path,
) -> None:
    project = tmp_path / "p"
    (project / ".fresher").mkdir(parents=True)
    config = project / ".fresher" / "config.toml"
    base = "[fresher]\nsmart_termination = false\n"
    base += f"[agent]\ncommand = {json.dumps(_costing(3))}\n"
    config.write_text(base)
    env = _env(tmp_path, "http://127.0.0.1:9")
    assert (await _aloop(project, env, "--max-iterations", "2")).code == 10  # $6 this month
    config.write_text(
        base.replace("[agent]", "[limits]\nmonthly_credit = 5\n[agent]")
        + 'fallback = ["command:other"]\n'
        f"[agent.profiles.other]\ncommand = {json.dumps(_costing(2))}\nmonthly_credit = 2\n"
    )
    before = set((project / ".fresher" / "runs").glob("*/run.json"))
    moved = await _aloop(project, env, "--max-iterations", "1")
    assert moved.code == 10, moved.stderr[-3000:]
    (line,) = [ln for ln in moved.stderr.splitlines() if "this month:" in ln]
    assert "command: monthly credit $5 spent ($6.00) this month: falling back until" in line
    assert "monthly credit: $0.00 of $5 left this month (command)" in moved.stderr
    # Run ids sort by the second they started: two runs of one second sort by chance.
    (new,) = set((project / ".fresher" / "runs").glob("*/run.json")) - before
    (row,) = json.loads(new.read_text())["iterations"]
    assert row["profile"] == "other"
    assert "monthly credit: $2.00 of $2 left this month (command:other)" in moved.stderr
    # The profile's own credit is spent now too: both are out, so it waits.
    before = set((project / ".fresher" / "runs").glob("*/run.json"))
    both = await _aloop(project, env, "--max-iterations", "1", "--max-runtime", "1s")
    assert "command:other: monthly credit $2 spent ($2.00) this month: skipped until" in both.stderr
    (new,) = set((project / ".fresher" / "runs").glob("*/run.json")) - before
    assert json.loads(new.read_text())["iterations"] == []
    # Without a fallback: it waits for the 1st (here cut short by max_runtime).
    config.write_text(base.replace("[agent]", "[limits]\nmonthly_credit = 5\n[agent]"))
    before = set((project / ".fresher" / "runs").glob("*/run.json"))
    waits = await _aloop(project, env, "--max-iterations", "1", "--max-runtime", "1s")
    assert waits.code != 0
    assert "waiting until" in waits.stderr
    (new,) = set((project / ".fresher" / "runs").glob("*/run.json")) - before
    assert json.loads(new.read_text())["iterations"] == []
