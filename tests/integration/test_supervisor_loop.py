"""``forgeflare loop`` as a real process, with stand-in agents and real hook scripts."""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import signal
import sys
from pathlib import Path

import pytest
import trio
from typer.testing import CliRunner

from cli_inprocess import forgeflare_here
from forgeflare import _app as cli
from forgeflare._errors import ConfigError
from forgeflare.supervisor.agents import StopControl
from platform_support import private_mounts_skip_reason as _private_mounts
from platform_support import run_in_private_mounts, sleep_token
from platform_support import sleeping as _sleeping
from project_support import run_text
from supervisor_agents.project import (
    Done,
    Project,
    agent_cmd,
    alive,
    base_env,
    wait_for,
)


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(tmp_path)


PLAN = "# Plan\n- [ ] first\n- [ ] second\n"


async def test_plan_completion_and_hook_environment(project: Project) -> None:
    project.write("IMPLEMENTATION_PLAN.md", PLAN)
    project.dump_env_hooks()
    done = await project.arun("--agent-cmd", agent_cmd("--final=end_turn", "--check"))
    assert done.code == 0, done.stderr
    rec = project.record()
    assert rec["finish_type"] == "complete"
    assert [it["decision"] for it in rec["iterations"]] == ["continue", "complete"]
    assert rec["totals"]["iterations"] == 2
    assert [e["hook"] for e in project.events() if e["event"] == "hook"] == [
        "started",
        "next_iteration",
        "next_iteration",
        "finished",
    ]
    started = project.hook_env("started")
    for var in (
        "MODE",
        "MAX_ITERATIONS",
        "PROJECT_DIR",
        "LOG_DIR",
        "STARTED_AT",
        "PLAN_FILE",
        "SPEC_DIR",
    ):
        assert f"FRESHER_{var}" in started, var
    assert started["FRESHER_MODE"] == "building"
    assert Path(started["FRESHER_LOG_DIR"]) == project.run_dirs()[0]
    nxt = project.hook_env("next_iteration", 2)
    assert nxt["FRESHER_ITERATION"] == "2"
    assert nxt["FRESHER_LAST_EXIT_CODE"] == "0"
    assert "FRESHER_LAST_DURATION" in nxt
    assert nxt["FRESHER_COMMITS_MADE"] == "0"
    fin = project.hook_env("finished", 2)
    assert fin["FRESHER_FINISH_TYPE"] == "complete"
    assert fin["FRESHER_TOTAL_ITERATIONS"] == "2"
    assert fin["FRESHER_TOTAL_COMMITS"] == "0"
    assert "FRESHER_DURATION" in fin
    # logs: agent output is in the iteration log and on the terminal
    log = (project.run_dirs()[0] / "iteration-001.log").read_text()
    assert "agent iteration 1" in log
    assert "[usage]" in log
    assert "agent iteration 2" in done.stdout
    assert "not a git repository" in done.stderr


async def test_crash_is_an_error_iteration_then_error(project: Project) -> None:
    env = base_env(FRESHER_MAX_CONSECUTIVE_ERRORS="2")
    done = await project.arun("--agent-cmd", agent_cmd("--crash"), env=env)
    assert done.code == 12, done.stderr
    rec = project.record()
    assert rec["finish_type"] == "error"
    assert [it["exit_code"] for it in rec["iterations"]] == [137, 137]


async def test_consecutive_errors(project: Project) -> None:
    done = await project.arun("--agent-cmd", agent_cmd("--exit=1"))
    assert done.code == 12
    rec = project.record()
    assert len(rec["iterations"]) == 3
    assert rec["streaks"]["errors"] == 3


async def test_errors_reset_by_a_good_iteration(project: Project) -> None:
    done = await project.arun(
        "--agent-cmd", agent_cmd("--exit=3@1,2,4", "--final=end_turn@3,5"), "--max-iterations", "5"
    )
    assert done.code == 10, done.stderr
    assert project.record()["finish_type"] == "max_iterations"


async def test_hang_past_iteration_timeout_leaves_nothing(project: Project) -> None:
    pidfile = project.dir / "pids"
    env = base_env(AGENT_PIDFILE=str(pidfile), FRESHER_AGENT_KILL_GRACE="0.5")
    # A shell, not the Python stand-in: on a loaded machine Python's start alone outlasted the
    # 1 s timeout, and the agent died before it wrote what it started.
    hang = 'sleep 600 & echo $$ $! > "$AGENT_PIDFILE"; wait'
    done = await project.arun(
        "--agent-cmd",
        f"sh -c {shlex.quote(hang)}",
        "--iteration-timeout",
        "1s",
        "--max-iterations",
        "1",
        env=env,
    )
    assert done.code == 10, done.stderr
    it = project.record()["iterations"][0]
    assert it["timed_out"]
    assert it["exit_code"] == 124
    pids = [int(p) for p in pidfile.read_text().split()]
    wait_for(lambda: not any(alive(p) for p in pids))
    assert "iteration timeout" in done.stderr


async def test_max_runtime(project: Project) -> None:
    done = await project.arun(
        "--agent-cmd",
        agent_cmd("--hang"),
        "--max-runtime",
        "1",
        "--iteration-timeout",
        "0",
        env=base_env(FRESHER_AGENT_KILL_GRACE="0.5"),
    )
    assert done.code == 14, done.stderr
    rec = project.record()
    assert rec["finish_type"] == "timeout"
    assert project.hook_events("finished") == []  # no hook files: none recorded


async def test_max_iterations(project: Project) -> None:
    project.dump_env_hooks()
    done = await project.arun("--agent-cmd", agent_cmd("--final=end_turn"), "--max-iterations", "2")
    assert done.code == 10
    assert project.hook_env("finished", 2)["FRESHER_FINISH_TYPE"] == "max_iterations"


async def test_started_abort_starts_no_agent(project: Project) -> None:
    project.hook("started", "exit 2")
    project.hook("finished", 'echo "$FRESHER_FINISH_TYPE" > "$FRESHER_PROJECT_DIR/finish"')
    done = await project.arun("--agent-cmd", agent_cmd("--env=" + str(project.dir / "agent-env")))
    assert done.code == 13, done.stderr
    assert (project.dir / "finish").read_text().strip() == "hook_abort"
    assert not list(project.dir.glob("agent-env*"))
    assert not list(project.run_dirs()[0].glob("iteration-*.log"))
    assert project.record()["finish_type"] == "hook_abort"


async def test_next_iteration_skip(project: Project) -> None:
    project.hook("next_iteration", '[ "$FRESHER_ITERATION" = 1 ] && exit 1; exit 0')
    done = await project.arun("--agent-cmd", agent_cmd("--final=end_turn"), "--max-iterations", "2")
    assert done.code == 10
    its = project.record()["iterations"]
    assert [it["skipped"] for it in its] == [True, False]
    assert project.record()["totals"]["iterations"] == 1
    assert "skipped by next_iteration" in done.stderr


async def test_skips_in_a_row_end_the_loop(project: Project) -> None:
    project.hook("next_iteration", "exit 1")
    done = await project.arun("--agent-cmd", agent_cmd("--final=end_turn"))
    assert done.code == 16
    assert len(project.record()["iterations"]) == 3


async def test_next_iteration_abort(project: Project) -> None:
    project.hook("next_iteration", '[ "$FRESHER_ITERATION" = 2 ] && exit 2; exit 0')
    project.hook("finished", 'echo "$FRESHER_FINISH_TYPE" > "$FRESHER_PROJECT_DIR/finish"')
    done = await project.arun("--agent-cmd", agent_cmd("--final=end_turn"))
    assert done.code == 13
    assert len(project.record()["iterations"]) == 1
    assert (project.dir / "finish").read_text().strip() == "hook_abort"


async def test_hook_timeout_is_124_and_the_loop_goes_on(project: Project) -> None:
    project.hook("next_iteration", '[ "$FRESHER_ITERATION" = 1 ] && exec sleep 60; exit 0')
    env = base_env(FRESHER_HOOK_TIMEOUT="0.5")
    done = await project.arun(
        "--agent-cmd", agent_cmd("--final=end_turn"), "--max-iterations", "2", env=env
    )
    assert done.code == 10, done.stderr
    first = project.hook_events("next_iteration")[0]
    assert first["status"] == "timeout"
    assert first["exit_code"] == 124
    assert "timed out after 0.5s" in done.stderr
    assert project.record()["totals"]["iterations"] == 2


async def test_hook_error_logged_and_fail_behavior_abort(project: Project) -> None:
    project.hook("started", "exit 5")
    done = await project.arun("--agent-cmd", agent_cmd("--final=end_turn"), "--max-iterations", "1")
    assert done.code == 10
    assert "Hook started failed with exit code 5" in done.stderr
    env = base_env(FRESHER_HOOK_FAIL_BEHAVIOR="abort")
    done = await project.arun("--agent-cmd", agent_cmd("--final=end_turn"), env=env)
    assert done.code == 13


async def test_non_executable_hook_warned_and_custom_never_run(project: Project) -> None:
    project.hook("started", "touch started-ran", executable=False)
    project.hook("custom/notify", 'touch "$FRESHER_PROJECT_DIR/custom-ran"')
    project.hook("finished", ".fresher/hooks/custom/notify")
    done = await project.arun("--agent-cmd", agent_cmd("--final=end_turn"), "--max-iterations", "1")
    assert done.code == 10
    assert "Hook started exists but is not executable" in done.stderr
    assert not (project.dir / "started-ran").exists()
    # custom/ ran once: called by finished, not by the supervisor itself
    assert (project.dir / "custom-ran").exists()
    # a missing hook (next_iteration) leaves no event; a non-executable one does
    assert [e["hook"] for e in project.events() if e["event"] == "hook"] == [
        "started",
        "finished",
    ]
    assert project.hook_events("started")[0]["status"] == "not_executable"


async def test_hooks_disabled(project: Project) -> None:
    project.hook("started", "exit 2")
    done = await project.arun(
        "--agent-cmd",
        agent_cmd("--final=end_turn"),
        "--max-iterations",
        "1",
        env=base_env(FRESHER_HOOKS_ENABLED="false"),
    )
    assert done.code == 10


async def test_no_changes_in_git_repo(project: Project) -> None:
    project.git_init()
    done = await project.arun(
        "--agent-cmd", agent_cmd("--final=end_turn", "--commit@1", "--touch@2")
    )
    assert done.code == 11, done.stderr
    rec = project.record()
    # the file iteration 2 left uncommitted is the loop's checkpoint commit
    assert [it["commits"] for it in rec["iterations"]] == [1, 1, 0]
    assert [it["changed"] for it in rec["iterations"]] == [True, True, False]
    assert [bool(it["checkpoint"].get("sha")) for it in rec["iterations"]] == [False, True, False]
    assert rec["totals"]["commits"] == 2
    assert rec["finish_type"] == "no_changes"


async def test_stale_convergence_never_counts(project: Project) -> None:
    # An agent that never writes convergence.json (like Claude Code), with a stale file there.
    project.write(
        ".forgeflare/convergence.json",
        json.dumps({"observations": [], "final": {"reason": "convergence_signal"}}),
    )
    done = await project.arun("--agent-cmd", agent_cmd(), "--max-iterations", "2")
    assert done.code == 10, done.stderr
    assert [it["stop_reason"] for it in project.record()["iterations"]] == [None, None]


async def test_convergence_signal_completes(project: Project) -> None:
    done = await project.arun(
        "--agent-cmd", agent_cmd("--final=end_turn@1", "--final=convergence_signal@2")
    )
    assert done.code == 0
    assert [it["stop_reason"] for it in project.record()["iterations"]] == [
        "end_turn",
        "convergence_signal",
    ]


async def test_stuck_after_block_limits(project: Project) -> None:
    done = await project.arun("--agent-cmd", agent_cmd("--final=block_limit_total", "--exit=6"))
    assert done.code == 15


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signal_during_iteration(project: Project, sig: signal.Signals) -> None:
    pidfile = project.dir / "pids"
    project.hook("finished", 'echo "$FRESHER_FINISH_TYPE" > "$FRESHER_PROJECT_DIR/finish"')
    proc = project.popen(
        "--agent-cmd", agent_cmd("--hang"), env=base_env(AGENT_PIDFILE=str(pidfile))
    )
    try:
        wait_for(lambda: pidfile.exists() and len(pidfile.read_text().split()) == 2)
        proc.send_signal(sig)
        _out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    assert (project.dir / "finish").read_text().strip() == "manual"
    assert project.record()["finish_type"] == "manual"
    pids = [int(p) for p in pidfile.read_text().split()]
    wait_for(lambda: not any(alive(p) for p in pids))
    assert f"stopped by {sig.name}" in err


async def test_second_stop_request_kills_at_once(project: Project) -> None:
    # The agent survives TERM (noting it) and the grace period is long: only a second request
    # (a second Ctrl+C; watch_signals turns each signal into one) ends it quickly.
    script = project.write(
        "stubborn.py",
        "import signal, sys, time\n"
        "signal.signal(signal.SIGTERM, lambda *a: open('got-term', 'w').close())\n"
        "sys.stdin.read()\nopen('ready', 'w').close()\n"
        "while True:\n    time.sleep(1)\n",
    )
    stop = StopControl()
    result: list[Done] = []

    async def loop() -> None:
        env = base_env(FRESHER_AGENT_KILL_GRACE="60")
        cmd = f"{sys.executable} {script}"
        result.append(await project.arun("--agent-cmd", cmd, env=env, stop=stop))

    async def poll(path: Path) -> None:
        with trio.fail_after(120):
            while not await trio.Path(path).exists():
                await trio.sleep(0.02)

    with trio.fail_after(150):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(loop)
            await poll(project.dir / "ready")
            stop.request("SIGINT")
            await poll(project.dir / "got-term")
            stop.request("SIGINT")
    (done,) = result
    assert done.code == 130, done.stderr
    assert project.record()["iterations"][0]["exit_code"] == 137
    assert project.record()["finish_type"] == "manual"


async def test_resume_after_kill_9(project: Project) -> None:
    pidfile = project.dir / "pids"
    env = base_env(AGENT_PIDFILE=str(pidfile))
    proc = project.popen(
        "--agent-cmd",
        agent_cmd("--final=end_turn", "--hang@2"),
        "--max-iterations",
        "3",
        env=env,
    )
    try:
        wait_for(lambda: pidfile.exists() and len(pidfile.read_text().split()) == 2)
        proc.kill()
        proc.wait()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    orphans = [int(p) for p in pidfile.read_text().split()]
    rec = project.record()
    assert rec["finished_at"] is None
    assert len(rec["iterations"]) == 1
    assert rec["current"]["number"] == 2
    done = await project.arun(
        "--resume", "--agent-cmd", agent_cmd("--final=end_turn"), "--max-iterations", "3", env=env
    )
    assert done.code == 10, done.stderr
    wait_for(lambda: not any(alive(p) for p in orphans))
    rec = project.record()
    assert rec["resumes"] == 1
    assert [it["number"] for it in rec["iterations"]] == [1, 2, 3]
    assert rec["totals"]["iterations"] == 3
    assert rec["finish_type"] == "max_iterations"
    kinds = [e["event"] for e in project.events()]
    assert kinds.count("run_started") == 1
    assert kinds.count("run_resumed") == 1
    # resuming a finished run: nothing to resume
    done = await project.arun("--resume", "--agent-cmd", agent_cmd(), env=env)
    assert done.code == 1
    assert "no unfinished run" in done.stderr


def test_bad_setting_is_one_line(project: Project) -> None:
    result = CliRunner().invoke(
        cli.app, ["loop", "--dir", str(project.dir)], env={"FRESHER_MAX_ITERATIONS": "abc"}
    )
    assert isinstance(result.exception, ConfigError)
    assert str(result.exception) == "FRESHER_MAX_ITERATIONS=abc (environment): not an integer"
    assert result.exception.exit_code == 2


async def test_agent_that_cannot_start(project: Project) -> None:
    done = await project.arun("--agent-cmd", "/nonexistent/agent", "--max-iterations", "5")
    assert done.code == 12
    assert "cannot start the agent" in done.stderr


async def test_agent_env_and_prompt(project: Project) -> None:
    project.write(".fresher/PROMPT.planning.md", "plan please\n")
    done = await project.arun(
        "--mode",
        "planning",
        "--agent-cmd",
        agent_cmd("--final=end_turn", f"--env={project.dir / 'agent-env'}"),
        "--max-iterations",
        "1",
    )
    assert done.code == 10
    env = json.loads((project.dir / "agent-env-1").read_text())
    assert env["FRESHER_MODE"] == "planning"
    assert env["FRESHER_ITERATION"] == "1"
    assert "prompt of 12 chars" in done.stdout
    assert os.environ.get("HOME", "") == env.get("HOME", "")


@pytest.mark.parametrize(("cmd", "mode"), [("plan", "planning"), ("build", "building")])
def test_plan_and_build_shortcuts(project: Project, cmd: str, mode: str) -> None:
    args = [cmd, "--dir", str(project.dir), "--agent-cmd", agent_cmd("--final=convergence_signal")]
    result = CliRunner().invoke(cli.app, args, env=base_env())
    assert result.exit_code == 0, result.output
    assert f"({mode} mode)" in result.output
    assert project.record()["mode"] == mode


async def test_a_shared_usage_window_is_waited_out_once(project: Project) -> None:
    """A window another loop of the account left in the machine's store (a fleet's loops
    share it so): wait for it, then run the iteration."""
    # 3 s: the window must outlast the loop's start on a loaded machine
    env = _store_window(project, seconds=3, FORGEFLARE_TIME_SCALE="0.01")
    done = await project.arun(
        "--agent-cmd", agent_cmd("--final=end_turn"), "--max-iterations", "1", env=env
    )
    assert done.code == 10, done.stderr
    rec = project.record()
    assert [w["kind"] for w in rec["waits"]] == ["limit_wait"]
    assert [it["decision"] for it in rec["iterations"]] == ["max_iterations"]


async def test_a_stop_request_during_a_shared_window_wait_stops(project: Project) -> None:
    from forgeflare.supervisor.run import request_stop

    env = _store_window(project, seconds=3600)

    async with trio.open_nursery() as nursery:
        result: list[Done] = []

        async def run() -> None:
            result.append(await project.arun("--agent-cmd", agent_cmd("--final=end_turn"), env=env))

        nursery.start_soon(run)
        while not any(e["event"] == "wait_started" for e in _events_or_empty(project)):
            await trio.sleep(0.05)
        request_stop(project.dir)
    assert result[0].code == 18, result[0].stderr
    rec = project.record()
    assert rec["finish_type"] == "stopped"
    assert rec["iterations"] == []


def _store_window(project: Project, seconds: float, **extra: str) -> dict[str, str]:
    """An environment whose own window store says the command backend waits ``seconds``."""
    from datetime import UTC, datetime, timedelta

    from forgeflare.supervisor import window_store_path
    from forgeflare.supervisor.agents import AgentSpec, Window, WindowKey, record_window

    env = base_env(XDG_STATE_HOME=str(project.dir.parent / "state"), **extra)
    now = datetime.now(UTC)
    window = Window(now + timedelta(seconds=seconds), "usage limit")
    # The command backend has no known endpoint or account: its key is `command@#`.
    record_window(window_store_path(env), WindowKey(AgentSpec("command"), "", ""), window, now)
    return env


def _events_or_empty(project: Project) -> list[dict[str, object]]:
    try:
        return project.events()
    except (OSError, IndexError, ValueError):
        return []


INIT_HOOKS = Path(__file__).parents[2] / "src/forgeflare/templates/files/dot-fresher/hooks"
CHECKS_ALL = (
    'sh -c \'cat >/dev/null; sed -i "s/- \\[ \\]/- [x]/" IMPLEMENTATION_PLAN.md; '
    'if [ "$FRESHER_ITERATION" = 2 ]; then touch fixed; fi\''
)


async def test_a_red_gate_with_inits_next_iteration_hook_lets_the_agent_fix_it(
    project: Project,
) -> None:
    """Every box checked but the gate red: init's next_iteration hook must not skip the
    iteration that can make the gate pass (it did, for every iteration left)."""
    project.write("IMPLEMENTATION_PLAN.md", PLAN)
    hook = project.write(
        ".fresher/hooks/next_iteration", (INIT_HOOKS / "next_iteration").read_text()
    )
    hook.chmod(0o755)
    env = base_env(FRESHER_GATE="test -e fixed", FRESHER_SMART_TERMINATION="false")
    done = await project.arun("--agent-cmd", CHECKS_ALL, "--max-iterations", "6", env=env)
    assert done.code == 0, done.stdout + done.stderr
    rows = project.record()["iterations"]
    assert [(r["skipped"], r["decision"]) for r in rows] == [
        (False, "continue"),
        (False, "complete"),
    ]
    assert (
        "The last claim was refused: running the agent to act on the reasons"
        in (project.run_dirs()[0] / "hooks.log").read_text()
    )


async def test_skips_after_a_red_gate_are_overridden(project: Project) -> None:
    """A refused claim is work for the agent: a hook's skip is overridden (one line), and the
    loop that ends on repeated refusals says the gate's last reason."""
    project.write("IMPLEMENTATION_PLAN.md", PLAN)
    project.hook("next_iteration", '[ "$FRESHER_ITERATION" = 1 ] || exit 1')
    env = base_env(
        FRESHER_GATE="false", FRESHER_SMART_TERMINATION="false", FRESHER_MAX_ITERATIONS="3"
    )
    done = await project.arun("--agent-cmd", CHECKS_ALL, env=env)
    assert done.code == 10, done.stdout + done.stderr
    rec = project.record()
    assert rec["finish_type"] == "max_iterations"
    assert [r["skipped"] for r in rec["iterations"]] == [False, False, False]
    said = done.stdout + done.stderr
    assert said.count("next_iteration asked to skip, but the last claim was refused") == 2
    assert "the last claim was refused: gate exit 1" in rec["finish_reason"]


async def test_a_convergence_file_that_is_not_utf8_is_one_warning(project: Project) -> None:
    # The model can write convergence.json: one byte that is not UTF-8 used to crash the loop,
    # leave run.json unfinished and skip the finished hook.
    project.hook("finished", 'echo "$FRESHER_FINISH_TYPE" > "$FRESHER_PROJECT_DIR/finish"')
    done = await project.arun("--agent-cmd", agent_cmd("--garble"), "--max-iterations", "1")
    assert done.code == 10, done.stderr
    assert "Traceback" not in done.stderr
    assert "convergence.json: not a valid convergence state: not UTF-8 text (byte" in done.stderr
    assert project.record()["finished_at"] is not None
    assert (project.dir / "finish").read_text().strip() == "max_iterations"


def test_a_full_disk_before_the_loop_starts_is_one_line(tmp_path: Path) -> None:
    # A real full file system: a 256 KiB tmpfs in a private mount namespace, filled up.
    reason = _private_mounts()
    if reason is not None:
        pytest.skip(reason)
    disk = tmp_path / "disk"
    disk.mkdir()
    script = (
        f'mount -t tmpfs -o size=256k tmpfs "{disk}" && mkdir "{disk}/.fresher" && '
        f'(head -c 1000000 /dev/zero > "{disk}/fill" 2>/dev/null; true) && '
        f'exec "{sys.executable}" -m forgeflare loop --dir "{disk}" --agent-cmd true '
        "--max-iterations 1"
    )
    done = run_text(["unshare", "-m", "sh", "-c", script], env=base_env(), timeout=60)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        f"forgeflare: error: {disk}/.fresher/loop.lock: cannot write the loop lock: "
        "No space left on device"
    )


def test_env_i_setsid_descendants_do_not_survive_the_loop(project: Project) -> None:
    # `env -i` drops the run's marker and `setsid` leaves the group and the session: such
    # descendants of the agent and of the started hook used to outlive the loop.
    agent_token, hook_token = sleep_token(400), sleep_token(400)
    project.hook(
        "started", f"env -i setsid sleep {hook_token} </dev/null >/dev/null 2>&1 &\nexit 0"
    )
    try:
        done = project.run(
            "--agent-cmd",
            agent_cmd(f"--escape={agent_token}", "--final=end_turn"),
            "--max-iterations",
            "1",
        )
        assert done.code == 10, done.stderr
        assert _sleeping(agent_token) == []
        assert _sleeping(hook_token) == []
    finally:
        for proc in _sleeping(agent_token) + _sleeping(hook_token):
            proc.kill()


def test_a_run_folder_made_read_only_is_marked_finished_beside_it(project: Project) -> None:
    # A real read-only folder (root writes through chmod): the agent remounts the run folder
    # read-only in a private mount namespace shared with its loop.
    reason = _private_mounts()
    if reason is not None:
        pytest.skip(reason)
    remount = (
        'sh -c \'d="$FRESHER_PROJECT_DIR/.fresher/runs/$FRESHER_RUN_ID"; '
        'mount --bind "$d" "$d" && mount -o remount,ro,bind "$d"\''
    )
    loop = shlex.join(
        [sys.executable, "-m", "forgeflare", "loop", "--dir", str(project.dir),
         "--agent-cmd", remount, "--max-iterations", "3"]
    )  # fmt: skip
    done = run_in_private_mounts(loop, base_env(), timeout=60)
    assert "Traceback" not in done.stderr
    assert "cannot write: Read-only file system" in done.stderr, done.stderr
    (run_dir,) = project.run_dirs()
    assert json.loads((run_dir / "run.json").read_text())["finished_at"] is None  # as it was
    # ... but every reader sees it finished: not running, not resumable.
    listed = forgeflare_here(project.dir, "runs", "--json")
    assert listed.returncode == 0, listed.stderr
    (row,) = json.loads(listed.stdout)
    assert row["finish_type"] == "error"
    resumed = forgeflare_here(project.dir, "loop", "--resume", "--agent-cmd", "true")
    assert "no unfinished run" in resumed.stderr


def test_a_resume_ends_what_escaped_the_killed_supervisor(project: Project) -> None:
    # kill -9 of the loop while its agent runs: the agent's `env -i setsid` child has neither
    # the group nor the marker, so only what the loop noted of it can find it again.
    token = sleep_token(400)
    supervisor = project.popen(
        "--agent-cmd", agent_cmd(f"--escape={token}", "--hang"), "--max-iterations", "1"
    )
    try:
        wait_for(
            lambda: (
                bool(project.run_dirs())
                and any(e["event"] == "escaped" for e in _events_or_empty(project))
            )
        )
        supervisor.kill()
        supervisor.communicate()
        assert _sleeping(token) != []  # the supervisor's death did not end it
        done = project.run("--resume")  # its agent and bounds as it started
        assert done.code == 10, done.stderr
        assert _sleeping(token) == []
    finally:
        if supervisor.poll() is None:
            supervisor.kill()
            supervisor.communicate()
        for proc in _sleeping(token):
            proc.kill()


def test_the_agent_is_ended_when_its_loop_is_killed(project: Project) -> None:
    # A loop killed with -9 used to leave its agent working on unsupervised until a resume,
    # free to leave orphans nothing could find; it now gets SIGTERM (its interrupted turn).
    pidfile = project.dir / "pids"
    proc = project.popen(
        "--agent-cmd", agent_cmd("--hang"), env=base_env(AGENT_PIDFILE=str(pidfile))
    )
    try:
        wait_for(lambda: pidfile.exists() and len(pidfile.read_text().split()) == 2)
        agent = int(pidfile.read_text().split()[0])
        proc.kill()
        proc.wait()
        wait_for(lambda: not alive(agent))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for pid in [int(p) for p in pidfile.read_text().split()] if pidfile.exists() else []:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("value", ["1", "true", "yes", "on", "YES"])
async def test_every_trusting_value_is_said_in_the_banner(project: Project, value: str) -> None:
    """The banner reads FORGEFLARE_TRUST with the same parser that trusts the project."""
    done = await project.arun(
        "--agent-cmd", "true", "--max-iterations", "1", env=base_env(FORGEFLARE_TRUST=value)
    )
    assert done.code == 10, done.stderr
    assert "trusting the project's hooks without review" in done.stderr
