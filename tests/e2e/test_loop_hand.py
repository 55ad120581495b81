"""A hand on the running loop, end to end with the real loop and a scripted agent:
``forgeflare pause`` / ``unpause`` / ``hint`` from another terminal, and ``loop --dry-run``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from agent_support import verdict
from cli_inprocess import forgeflare_here
from forgeflare.report._watch import render_line, snapshot
from mockapi_support import MockAPI
from project_support import run_text
from supervisor_agents.project import Project, base_env, env_for, wait_for
from text_support import missing

# Saves its prompt, then works until the test lets this iteration end (go.N).
AGENT = (
    'sh -c \'cat > "$FRESHER_PROJECT_DIR/prompt.$FRESHER_ITERATION"; '
    'while [ ! -e "$FRESHER_PROJECT_DIR/go.$FRESHER_ITERATION" ]; do sleep 0.02; done\''
)
HINT = "use the v2 API"


def _cli(project: Project, *args: str) -> subprocess.CompletedProcess[str]:
    return run_text(
        [sys.executable, "-m", "forgeflare", *args, "--dir", str(project.dir)],
        env=base_env(),
        timeout=60,
    )


def _paused(project: Project) -> bool:
    events = [json.loads(line) for line in (project.run_dirs()[0] / "events.jsonl").open()]
    return any(e["event"] == "wait_started" and e.get("kind") == "paused" for e in events)


def _env() -> dict[str, str]:
    return base_env(FRESHER_SMART_TERMINATION="false")


def test_pause_hint_unpause(tmp_path: Path) -> None:
    project = Project(tmp_path)
    loop = project.popen(
        "--agent-cmd", AGENT, "--mode", "planning", "--max-iterations", "3", env=_env()
    )
    wait_for(lambda: (project.dir / "prompt.1").exists())
    paused = _cli(project, "pause")
    assert paused.returncode == 0, paused.stderr
    assert "pauses after its current iteration" in paused.stdout
    hinted = _cli(project, "hint", HINT)
    assert hinted.returncode == 0, hinted.stderr
    for n in (1, 2, 3):
        (project.dir / f"go.{n}").touch()
    wait_for(lambda: _paused(project))
    assert not (project.dir / "prompt.2").exists()  # paused: no second iteration
    (run_dir,) = project.run_dirs()
    events = [json.loads(line) for line in (run_dir / "events.jsonl").open()]
    assert "· paused" in render_line(snapshot(run_dir, events))  # what `forgeflare watch` shows
    assert _cli(project, "unpause").stdout.strip().endswith("goes on")
    _, err = loop.communicate(timeout=120)
    assert loop.returncode == 10, err
    assert "paused after iteration 1" in err
    second = (project.dir / "prompt.2").read_text()
    assert second.startswith(f"A hint from the user for this iteration:\n\n{HINT}\n")
    assert HINT not in (project.dir / "prompt.3").read_text()  # once
    rows = project.record()["iterations"]
    assert [row.get("hint") for row in rows] == [None, HINT, None]
    assert [w["kind"] for w in project.record()["waits"]] == ["paused"]


def test_a_paused_loop_still_ends_at_its_runtime_limit_and_on_stop(tmp_path: Path) -> None:
    for finish, code, act in (("timeout", 14, None), ("stopped", 18, "stop")):
        project = Project(tmp_path / finish)
        project.dir.mkdir()
        if act is None:
            # The agent asks for the pause itself (the file `forgeflare pause` writes) and ends:
            # the loop is paused within a moment of its start, so a short limit ends the pause,
            # never the iteration (the record's waits say which); 8 s leaves the loop's own start
            # and the agent's room on a loaded machine.
            agent = (
                'sh -c \'cat > "$FRESHER_PROJECT_DIR/prompt.$FRESHER_ITERATION"; '
                'for run in "$FRESHER_PROJECT_DIR"/.fresher/runs/*/; do touch "$run/pause"; done\''
            )
            args = ("--agent-cmd", agent, "--max-runtime", "8s")
        else:
            args = ("--agent-cmd", AGENT, "--max-runtime", "10m")
        loop = project.popen(*args, "--mode", "planning", env=_env())
        if act is not None:
            wait_for(lambda p=project: (p.dir / "prompt.1").exists())  # type: ignore[misc]
            assert _cli(project, "pause").returncode == 0
            (project.dir / "go.1").touch()
            wait_for(lambda p=project: _paused(p))  # type: ignore[misc]
            assert _cli(project, act).returncode == 0
        _, err = loop.communicate(timeout=120)
        assert (loop.returncode, project.record()["finish_type"]) == (code, finish), err
        assert [w["kind"] for w in project.record()["waits"]] == ["paused"]
        assert len(project.record()["iterations"]) == 1, err
        assert not (project.dir / "prompt.2").exists()


def test_no_loop_running(tmp_path: Path) -> None:
    # In-process: the answers are the point (test_pause_hint_unpause starts the commands).
    project = Project(tmp_path)

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return forgeflare_here(project.dir, *args, "--dir", str(project.dir))

    assert "no loop is running" in cli("pause").stdout
    lost = cli("hint", HINT)
    assert lost.returncode == 1
    assert lost.stderr.strip() == (
        f"forgeflare: error: no loop is running in {project.dir}: the hint was not kept"
    )
    assert cli("hint").returncode == 2  # neither TEXT nor --file


def test_dry_run_starts_nothing(tmp_path: Path) -> None:
    project = Project(tmp_path)
    project.hook("started", 'touch "$FRESHER_PROJECT_DIR/started-ran"')
    project.write(".fresher/PROMPT.building.md", "Build the thing.\n")
    env = base_env(
        ANTHROPIC_API_KEY="sk-ant-secret-value",
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        FORGEFLARE_TRUST="0",
    )
    done = project.run("--dry-run", "--task", "Fix the login bug", env=env)
    assert done.code == 0, done.stderr
    out = done.stdout
    assert not missing(
        out,
        "dry run: nothing was started",
        "bounds: 50 iterations, runtime 10h",
        "trust: the loop would refuse: ",
        "new: .fresher/hooks/started",
        "agent command: ",
        "agent environment (its key ANTHROPIC_API_KEY through a descriptor):",
        "FRESHER_ITERATION",
        "---\nFix the login bug\n\n---\n\nBuild the thing.",
    ), out
    assert "sk-ant-secret-value" not in out
    assert not (project.dir / "started-ran").exists()
    assert project.run_dirs() == []
    assert not (tmp_path / "config" / "forgeflare" / "trust.json").exists()


def test_a_killed_iteration_and_a_dead_run_keep_their_real_duration(tmp_path: Path) -> None:
    project = Project(tmp_path)
    # 5 ticks take >= 0.8 s; the resumed run's iteration ends at once (`enough`)
    ticking = "sh -c 'while [ ! -e enough ]; do echo tick; sleep 0.2; done'"
    args = ("--agent-cmd", ticking, "--mode", "planning", "--max-iterations", "2")
    loop = project.popen(*args, env=_env())

    def ticks() -> int:
        logs = [d / "iteration-001.log" for d in project.run_dirs()]
        return sum(p.read_text().count("tick") for p in logs if p.exists())

    wait_for(lambda: ticks() >= 5)
    loop.kill()  # kill -9: the supervisor leaves an unfinished run behind
    loop.wait(timeout=30)
    listed = run_text(
        [sys.executable, "-m", "forgeflare", "runs", "--json", "--dir", str(project.dir)],
        env=base_env(),
        timeout=60,
    )
    (dead,) = json.loads(listed.stdout)
    assert dead["dead"] is True
    assert dead["duration"] > 0  # its supervisor's own count, not 0s
    (project.dir / "enough").touch()
    done = project.run("--resume", env=_env())
    assert done.code == 10, done.stderr
    killed = project.record()["iterations"][0]
    assert killed["outcome"] == "killed"
    assert killed["duration"] >= 0.8, killed  # it ran at least 5 ticks, not 0.0 s


def test_the_reviewers_requests_count_toward_the_hour(tmp_path: Path, mock_api: MockAPI) -> None:
    project = Project(tmp_path)
    project.git_init()
    project.write("IMPLEMENTATION_PLAN.md", "- [ ] one\n")
    project.write(
        ".fresher/config.toml",
        "[limits]\nmax_requests_per_hour = 1\n[finish]\nreviewer = 'claude-sonnet-4-5'\n",
    )
    work = project.write(
        "work.sh",
        "cat > /dev/null; date +%s%N >> progress.txt; "
        "sed -i 's/- \\[ \\]/- [x]/' IMPLEMENTATION_PLAN.md; git add -A && git commit -qm work",
    )
    server = mock_api(
        {"responses": [verdict(False, [], []), verdict(True, [], [])], "when_exhausted": "error"}
    )
    # An hour is 18 s here: the second review waits for the first to leave the hour. (At 3.6 s a
    # loaded machine took longer than the hour between the two reviews, and nothing waited.)
    env = {**env_for(server, FRESHER_GATE="true"), "FORGEFLARE_TIME_SCALE": "0.005"}
    done = project.run("--agent-cmd", f"sh {work}", "--max-iterations", "3", env=env, timeout=120)
    assert done.code == 0, done.stderr  # complete once the reviewer agreed: never a limit finish
    rec = project.record()
    assert "limit_wait" in [w["kind"] for w in rec["waits"]]
    assert "the hour's 1 request(s) are used (max_requests_per_hour)" in done.stderr
    assert len(server.requests()) == 2
