"""``forgeflare runs`` and ``forgeflare report`` (in the test process) on records written by real
loops."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path

import pytest
import trio

from chromium_support import CHROMIUM, NO_CHROMIUM, chromium
from cli_inprocess import forgeflare_here
from supervisor_agents.project import (
    Done,
    Project,
    agent_cmd,
    base_env,
    python_agent,
    wait_for,
)


def in_process(project: Project, *args: str, env: dict[str, str] | None = None) -> Done:
    """A loop run in this process: the same loop below the CLI without a Python start each."""
    return trio.run(partial(project.arun, *args, env=env))


@pytest.fixture(scope="module")
def night(tmp_path_factory: pytest.TempPathFactory) -> Project:
    """A project with three finished runs: complete, error, max_iterations."""
    project = Project(tmp_path_factory.mktemp("night"))
    project.write("IMPLEMENTATION_PLAN.md", "# Plan\n\n- [ ] one\n- [ ] two\n- [ ] three\n")
    project.git_init()
    complete = in_process(
        project, "--agent-cmd", agent_cmd("--check", "--commit"), "--max-iterations", "5"
    )
    assert complete.code == 0, complete.stderr
    # planning mode: the plan, now done, does not complete these runs
    error = in_process(
        project, "--agent-cmd", agent_cmd("--exit=1"), "--max-iterations", "9", "--mode", "planning"
    )
    assert error.code == 12, error.stderr
    limit = in_process(
        project, "--agent-cmd", agent_cmd("--touch"), "--max-iterations", "1", "--mode", "planning"
    )
    assert limit.code == 10, limit.stderr
    # a command agent that reports a cost: the budget finishes the run
    report = (
        "import json,os,sys; sys.stdin.read(); json.dump({'outcome': 'ok', "
        "'tokens': {'input': 10}, 'cost_usd': 0.75}, open(os.environ['FORGEFLARE_REPORT'], 'w'))"
    )
    no_smart = base_env(FRESHER_SMART_TERMINATION="false", FRESHER_MAX_COST="1")
    budget = in_process(
        project, "--agent-cmd", python_agent(report), "--mode", "planning", env=no_smart
    )
    assert budget.code == 17, budget.stderr
    # SIGTERM mid-iteration: finish manual (the loop process is the point here)
    manual = project.popen("--agent-cmd", "sh -c 'echo started; sleep 30'", "--mode", "planning")
    wait_for(lambda: sum((d / "iteration-001.log").exists() for d in project.run_dirs()) == 5)
    manual.terminate()
    assert manual.wait(timeout=30) == 130
    return project


def test_runs_lists_newest_first_with_reasons(night: Project) -> None:
    done = forgeflare_here(night.dir, "runs")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    finishes = [line.split()[3] for line in lines[::2]]
    assert finishes == ["manual", "budget", "max_iterations", "error", "complete"]
    assert "stopped: the budget of $1 is spent ($1.50)" in done.stdout
    assert "stopped by hand" in done.stdout
    assert "3 error iterations in a row, the last one `agent_error`" in done.stdout
    as_json = json.loads(forgeflare_here(night.dir, "runs", "--json").stdout)
    assert [r["finish_type"] for r in as_json] == [
        "manual",
        "budget",
        "max_iterations",
        "error",
        "complete",
    ]
    assert as_json[1]["cost_usd"] == 1.5
    complete = as_json[-1]
    assert complete["iterations"] == 3
    assert complete["commits"] == 3


def test_report_text_of_a_complete_run(night: Project) -> None:
    complete_id = json.loads(forgeflare_here(night.dir, "runs", "--json").stdout)[-1]["run_id"]
    done = forgeflare_here(night.dir, "report", complete_id)
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert "complete: no open task left in the plan" in text
    assert text.count("file changed") + text.count("files changed") >= 3
    assert "[x] three" in text
    assert "Slowest iterations" in text


def test_report_html_and_errors(night: Project, tmp_path: Path) -> None:
    pytest.importorskip("plotly", reason="plotly is the optional report extra")
    out = tmp_path / "out" / "night.html"
    done = forgeflare_here(night.dir, "report", "--html", str(out))
    assert done.returncode == 0, done.stderr
    page = out.read_text()
    assert 'id="timeline"' in page
    assert "iteration-001.log" in page
    missing = forgeflare_here(night.dir, "report", "nosuchrun")
    assert missing.returncode == 2
    assert "no run 'nosuchrun'" in missing.stderr


def test_no_runs_yet(tmp_path: Path) -> None:
    assert forgeflare_here(tmp_path, "runs").stdout.strip() == "no runs yet"
    done = forgeflare_here(tmp_path, "report")
    assert done.returncode == 2
    assert "no runs in" in done.stderr


@pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)
def test_report_renders_in_headless_chromium(night: Project, tmp_path: Path) -> None:
    pytest.importorskip("plotly", reason="plotly is the optional report extra")
    out = tmp_path / "night.html"
    assert forgeflare_here(night.dir, "report", "--html", str(out)).returncode == 0
    dom = chromium(out, tmp_path / "profile", "--dump-dom")
    assert dom.returncode == 0, dom.stderr[-2000:]
    # plotly drew the plot: its SVG layers exist only once its inlined script ran
    assert "main-svg" in dom.stdout
    console = [line for line in dom.stderr.splitlines() if "CONSOLE" in line]
    assert not [line for line in console if "Uncaught" in line or "Error" in line], console
    shot = tmp_path / "shot.png"
    chromium(out, tmp_path / "profile", "--window-size=1200,1400", f"--screenshot={shot}")
    data = shot.read_bytes()
    assert data.startswith(b"\x89PNG")
    assert len(set(data[100:20000])) > 50  # not one flat colour


def test_completion_by_tag_is_reported_as_the_tag(tmp_path: Path) -> None:
    """A run the agent's completion tag ended, with a box still open in the plan: every view
    says what completed it, and init's finished hook does not claim every task is done."""
    project = Project(tmp_path)
    project.write("IMPLEMENTATION_PLAN.md", "- [x] one\n- [ ] two\n")
    finished = Path(__file__).parents[2] / "src/forgeflare/templates/files/dot-fresher/hooks"
    project.write(".fresher/hooks/finished", (finished / "finished").read_text()).chmod(0o755)
    report = (
        "import json,os,sys; sys.stdin.read(); json.dump({'outcome': 'ok', "
        "'signal': '<loop-done>COMPLETE</loop-done>'}, open(os.environ['FORGEFLARE_REPORT'], 'w'))"
    )
    done = in_process(project, "--agent-cmd", python_agent(report))
    assert done.code == 0, done.stderr
    said = "complete: the agent said <loop-done>COMPLETE</loop-done> in iteration 1"
    assert project.record()["finish_reason"] == said
    assert said in forgeflare_here(project.dir, "runs").stdout
    assert said in forgeflare_here(project.dir, "report").stdout
    hooks_log = (project.run_dirs()[0] / "hooks.log").read_text()
    assert "All tasks completed" not in hooks_log
    assert f"Complete ({said})" in hooks_log


def test_a_rate_limited_iteration_is_counted_alike_in_summary_and_runs(tmp_path: Path) -> None:
    """A usage-window row is no iteration of the run: the summary and ``runs`` both say 1."""
    project = Project(tmp_path)
    agent = (
        "import datetime,json,os,pathlib,sys; sys.stdin.read(); n = pathlib.Path('n');"
        "first = not n.exists(); n.write_text('1');"
        "soon = datetime.datetime.now(datetime.UTC) + datetime.timedelta(seconds=2);"
        "report = {'outcome': 'rate_limited', 'resets_at': soon.strftime('%Y-%m-%dT%H:%M:%SZ')}"
        " if first else {'outcome': 'ok', 'tokens': {'input': 3}};"
        "json.dump(report, open(os.environ['FORGEFLARE_REPORT'], 'w'))"
    )
    scaled = base_env(FORGEFLARE_TIME_SCALE="0.01")
    done = in_process(
        project,
        "--agent-cmd",
        python_agent(agent),
        "--mode",
        "planning",
        "--max-iterations",
        "1",
        env=scaled,
    )
    assert done.code == 10, done.stderr
    assert "finished: max_iterations (exit 10); 1 iteration," in done.stderr
    assert "reached max_iterations (1 iteration)" in done.stderr
    (row,) = json.loads(forgeflare_here(project.dir, "runs", "--json").stdout)
    assert row["iterations"] == 1
    assert " 1 it " in forgeflare_here(project.dir, "runs").stdout
