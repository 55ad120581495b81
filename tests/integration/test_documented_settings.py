"""The documented settings no other test set (or set too weakly): each changes what a loop does.

The loop runs in this process (``Project.arun``) with real agents (small scripts), real hook
scripts and real git; each case sets one ``FRESHER_*`` variable (the same key as in
``config.toml``) and checks its effect, so a setting the loop ignored fails here.
``tests/unit/test_documented_settings_table.py`` keeps every README row tied to such a test.
"""

from __future__ import annotations

import json
import shlex
import shutil
import socket
import sys
import tempfile
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import trio
from typer.testing import CliRunner

from agent_support import text_response, tool_response, verdict
from forgeflare import _app as cli
from mockapi_support import MockAPI
from supervisor_agents.project import Project, agent_cmd, base_env, env_for

# An agent that keeps what it was given: its arguments, environment and prompt, in
# given-<iteration>.json; with CHECK_BOX set it checks the first box of that file.
RECORDER = """
import json, os, sys
from pathlib import Path
prompt = sys.stdin.read()
n = os.environ.get("FRESHER_ITERATION", "0")
Path(f"given-{n}.json").write_text(
    json.dumps({"argv": sys.argv[1:], "env": dict(os.environ), "prompt": prompt})
)
box = os.environ.get("CHECK_BOX")
if box:
    plan = Path(box)
    plan.write_text(plan.read_text().replace("- [ ]", "- [x]", 1))
"""


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(tmp_path)


def recorder(project: Project) -> str:
    """The recording agent's command line (an executable, so it can stand in for claude)."""
    path = project.write("recorder", f"#!{sys.executable}\n{RECORDER}")
    path.chmod(0o755)
    return shlex.quote(str(path))


def given(project: Project, iteration: int = 1) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((project.dir / f"given-{iteration}.json").read_text())
    return data


def reporting(*reports: dict[str, Any]) -> str:
    """A command agent writing ``reports[iteration - 1]`` (the last one after) as its report."""
    code = (
        "import json,os,sys; sys.stdin.read(); r = json.loads(sys.argv[1]);"
        "n = int(os.environ['FRESHER_ITERATION']);"
        "json.dump(r[min(n, len(r)) - 1], open(os.environ['FORGEFLARE_REPORT'], 'w'))"
    )
    return shlex.join([sys.executable, "-c", code, json.dumps(list(reports))])


# --- [hooks] and [paths] ------------------------------------------------------------------

HOOKS = ("started", "next_iteration", "finished")


@pytest.mark.parametrize(
    ("variable", "skipped"),
    [
        (None, ()),
        ("FRESHER_HOOKS_ENABLED", HOOKS),
        ("FRESHER_HOOK_STARTED_ENABLED", ("started",)),
        ("FRESHER_HOOK_NEXT_ITERATION_ENABLED", ("next_iteration",)),
        ("FRESHER_HOOK_FINISHED_ENABLED", ("finished",)),
    ],
)
async def test_hook_switches_choose_which_hooks_run(
    project: Project, variable: str | None, skipped: tuple[str, ...]
) -> None:
    for name in HOOKS:
        project.hook(name, f'echo {name} >> "$FRESHER_PROJECT_DIR/ran"')
    env = base_env(**({variable: "false"} if variable else {}))
    done = await project.arun(
        "--agent-cmd", agent_cmd("--final=end_turn"), "--max-iterations", "1", env=env
    )
    assert done.code == 10, done.stderr
    ran_file = project.dir / "ran"
    ran = ran_file.read_text().split() if ran_file.exists() else []
    assert ran == [name for name in HOOKS if name not in skipped]


async def test_hooks_dir_is_where_the_hooks_are_found(project: Project) -> None:
    project.hook("started", 'touch "$FRESHER_PROJECT_DIR/default-ran"')
    moved = project.write("ops/hooks/started", '#!/bin/sh\ntouch "$FRESHER_PROJECT_DIR/ops-ran"\n')
    moved.chmod(0o755)
    env = base_env(FRESHER_HOOKS_DIR="ops/hooks")
    done = await project.arun(
        "--agent-cmd", agent_cmd("--final=end_turn"), "--max-iterations", "1", env=env
    )
    assert done.code == 10, done.stderr
    assert (project.dir / "ops-ran").exists()
    assert not (project.dir / "default-ran").exists()


async def test_hook_timeout_is_when_a_hook_is_ended(project: Project) -> None:
    project.hook("started", "exec sleep 60")
    env = base_env(FRESHER_HOOK_TIMEOUT="0.3")
    with trio.fail_after(120):  # a bound; the words below tell 0.3 s from the default 30 s
        done = await project.arun(
            "--agent-cmd", agent_cmd("--final=end_turn"), "--max-iterations", "1", env=env
        )
    assert done.code == 10, done.stderr
    assert "Hook started timed out after 0.3s (exit 124)" in done.stdout + done.stderr
    (started,) = project.hook_events("started")
    assert (started["status"], started["exit_code"]) == ("timeout", 124)


async def test_plan_file_and_spec_dir_are_what_the_agent_is_told_and_the_loop_reads(
    project: Project,
) -> None:
    project.write("IMPLEMENTATION_PLAN.md", "- [ ] never checked: not the plan here\n")
    project.write("docs/PLAN.md", "- [ ] one\n")
    project.hook("started", 'echo "$FRESHER_SPEC_DIR" > "$FRESHER_PROJECT_DIR/spec-dir"')
    env = base_env(
        FRESHER_PLAN_FILE="docs/PLAN.md", FRESHER_SPEC_DIR="docs/specs", CHECK_BOX="docs/PLAN.md"
    )
    done = await project.arun("--agent-cmd", recorder(project), "--max-iterations", "3", env=env)
    assert done.code == 0, done.stderr  # complete: the plan it reads is docs/PLAN.md
    assert project.record()["finish_type"] == "complete"
    first = given(project)
    assert "`docs/PLAN.md`" in first["prompt"]
    assert "IMPLEMENTATION_PLAN.md" not in first["prompt"]
    assert "`docs/specs/`" in first["prompt"]
    assert first["env"]["FRESHER_SPEC_DIR"] == str(project.dir / "docs" / "specs")
    assert first["env"]["FRESHER_PLAN_FILE"] == str(project.dir / "docs" / "PLAN.md")
    assert (project.dir / "spec-dir").read_text().strip() == str(project.dir / "docs" / "specs")


async def test_log_dir_is_where_the_run_is_recorded(project: Project) -> None:
    env = base_env(FRESHER_LOG_DIR="night-logs")
    done = await project.arun(
        "--agent-cmd", agent_cmd("--final=end_turn"), "--max-iterations", "1", env=env
    )
    assert done.code == 10, done.stderr
    (run,) = (project.dir / "night-logs").glob("*/run.json")
    assert json.loads(run.read_text())["finish_type"] == "max_iterations"
    assert not (project.dir / ".fresher" / "runs").exists()


# --- [fresher] -------------------------------------------------------------------------------


@pytest.mark.parametrize(("value", "code", "rows"), [("true", 11, 1), ("false", 10, 2)])
async def test_smart_termination_ends_a_loop_that_changes_nothing(
    project: Project, value: str, code: int, rows: int
) -> None:
    project.git_init()
    env = base_env(FRESHER_SMART_TERMINATION=value)
    done = await project.arun(
        "--agent-cmd", agent_cmd("--final=end_turn"), "--max-iterations", "2", env=env
    )
    assert done.code == code, done.stderr
    assert len(project.record()["iterations"]) == rows


# --- [agent] ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("settings", "words"),
    [
        ({"FRESHER_AGENT_EXTRA_ARGS": "--flag 'two words'"}, ["--flag", "two words"]),
        ({"FRESHER_AGENT_BACKEND": "claude"}, ["-p", "--output-format", "stream-json"]),
        ({"FRESHER_AGENT_BACKEND": "claude"}, ["--permission-mode", "bypassPermissions"]),
        (
            {"FRESHER_AGENT_BACKEND": "claude", "FRESHER_MODEL": "claude-haiku-4-5"},
            ["--model", "claude-haiku-4-5"],
        ),
        (
            {"FRESHER_AGENT_BACKEND": "claude", "FRESHER_AGENT_PERMISSION_MODE": "acceptEdits"},
            ["--permission-mode", "acceptEdits"],
        ),
        (
            {"FRESHER_AGENT_BACKEND": "claude", "FRESHER_AGENT_EXTRA_ARGS": "--add-dir ../lib"},
            ["--add-dir", "../lib"],
        ),
    ],
)
async def test_agent_arguments_follow_the_agent_settings(
    project: Project, settings: dict[str, str], words: list[str]
) -> None:
    # IS_SANDBOX=1: as root, preflight refuses Claude Code's bypassPermissions without it.
    env = base_env(FRESHER_AGENT_COMMAND=recorder(project), IS_SANDBOX="1", **settings)
    await project.arun("--max-iterations", "1", env=env)  # a silent claude is an error row
    argv = given(project)["argv"]  # the command ran (with backend claude: as claude)
    at = argv.index(words[0])
    assert argv[at : at + len(words)] == words, argv
    if "FRESHER_AGENT_PERMISSION_MODE" in settings:
        assert "bypassPermissions" not in argv
    if "FRESHER_AGENT_BACKEND" not in settings:
        assert "-p" not in argv  # the command backend adds nothing of its own


async def test_kill_grace_is_how_long_a_term_ignoring_agent_is_given(project: Project) -> None:
    stubborn = project.write(
        "stubborn.py",
        "import signal, sys, time\nsys.stdin.read()\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\ntime.sleep(60)\n",
    )
    env = base_env(FRESHER_AGENT_KILL_GRACE="0.2", FRESHER_MAX_CONSECUTIVE_ERRORS="1")
    done = await project.arun(
        "--agent-cmd",
        shlex.join([sys.executable, str(stubborn)]),
        "--iteration-timeout",
        "0.2",
        env=env,
    )
    assert done.code == 12, done.stderr
    (row,) = project.record()["iterations"]
    assert row["exit_code"] == 124  # timed out
    assert row["duration"] < 5  # TERM at 0.2 s, KILL 0.2 s later (the default grace: 10 s)


@pytest.mark.parametrize(("after", "profile"), [("30s", "alt"), ("20m", "")])
async def test_fallback_after_decides_between_waiting_and_falling_back(
    project: Project, tmp_path: Path, after: str, profile: str
) -> None:
    """The primary's window resets in 10 min: a fallback only when that is further away than
    ``fallback_after`` (else the loop waits for the primary; times scaled to 1/2000)."""
    resets = (datetime.now(UTC) + timedelta(minutes=10)).isoformat()
    primary = reporting({"outcome": "rate_limited", "resets_at": resets}, {"outcome": "ok"})
    project.write(
        ".fresher/config.toml",
        f"[agent]\ncommand = {json.dumps(primary)}\nfallback = ['command:alt']\n"
        f"[agent.profiles.alt]\ncommand = {json.dumps(reporting({'outcome': 'ok'}))}\n",
    )
    env = base_env(
        FRESHER_AGENT_FALLBACK_AFTER=after,
        FORGEFLARE_TIME_SCALE="0.0005",
        XDG_STATE_HOME=str(tmp_path / "state"),
    )
    done = await project.arun("--max-iterations", "1", env=env)  # a rate limit is not counted
    assert done.code == 10, done.stderr
    rows = [(it["profile"], it["outcome"]) for it in project.record()["iterations"]]
    assert rows == [("", "rate_limited"), (profile, "ok")]


# --- [limits] --------------------------------------------------------------------------------


@pytest.mark.parametrize("limit", [1, 2])
async def test_max_skips_is_how_many_skips_in_a_row_end_the_loop(
    project: Project, limit: int
) -> None:
    project.hook("next_iteration", "exit 1")
    env = base_env(FRESHER_MAX_SKIPS=str(limit))
    done = await project.arun("--agent-cmd", agent_cmd("--final=end_turn"), env=env)
    assert done.code == 16, done.stderr
    assert len(project.record()["iterations"]) == limit


@pytest.mark.parametrize("limit", [1, 2])
async def test_stuck_after_is_how_many_block_limits_in_a_row_end_the_loop(
    project: Project, limit: int
) -> None:
    env = base_env(FRESHER_STUCK_AFTER=str(limit))
    done = await project.arun(
        "--agent-cmd", agent_cmd("--final=block_limit_total", "--exit=6"), env=env
    )
    assert done.code == 15, done.stderr
    assert project.record()["finish_type"] == "stuck"
    assert len(project.record()["iterations"]) == limit


@pytest.mark.parametrize(("pause", "said"), [("0.05s", True), ("0", False)])
async def test_error_pause_is_waited_after_an_error_iteration(
    project: Project, pause: str, said: bool
) -> None:
    env = base_env(FRESHER_ERROR_PAUSE=pause, FRESHER_MAX_CONSECUTIVE_ERRORS="2")
    done = await project.arun("--agent-cmd", agent_cmd("--exit=1"), env=env)
    assert done.code == 12, done.stderr
    assert ("error iteration (1 in a row): pausing 0.05s" in done.stderr) is said


async def test_max_outage_is_how_long_transient_failures_are_waited_out(
    project: Project,
) -> None:
    agent = reporting({"outcome": "api_error", "transient": True})
    # The outage is measured in real time, its back-off waits (30 s, 60 s, ...) scaled.
    env = base_env(FRESHER_MAX_OUTAGE="0.2s", FORGEFLARE_TIME_SCALE="0.01")
    with trio.fail_after(120):  # with the default (2 h) it would still be backing off
        done = await project.arun("--agent-cmd", agent, "--max-iterations", "0", env=env)
    assert done.code == 12, done.stderr
    rec = project.record()
    assert rec["finish_type"] == "error"
    assert "max_outage" in rec["finish_reason"]
    assert {it["outcome"] for it in rec["iterations"]} == {"api_error"}


@pytest.mark.parametrize(("on_blocked", "waits"), [("stop", []), ("wait:0.2s", ["answer_wait"])])
async def test_on_blocked_is_whether_a_question_waits_for_an_answer(
    project: Project, on_blocked: str, waits: list[str]
) -> None:
    agent = reporting({"outcome": "ok", "question": "Which database?"})
    env = base_env(FRESHER_ON_BLOCKED=on_blocked)
    done = await project.arun("--agent-cmd", agent, "--max-iterations", "2", env=env)
    rec = project.record()
    assert rec["finish_type"] == "blocked", done.stderr
    assert [w["kind"] for w in rec["waits"]] == waits  # no answer came: blocked after all


@pytest.mark.parametrize(
    ("limit", "finish", "rows"), [("2", "stalled", 2), ("0", "max_iterations", 3)]
)
async def test_stall_after_ends_a_loop_that_repeats_the_same_gate_failure(
    project: Project, limit: str, finish: str, rows: int
) -> None:
    env = base_env(
        FRESHER_STALL_AFTER=limit,
        FRESHER_GATE="echo 'FAILED tests/test_calc.py::test_divide'; exit 1",
    )
    done = await project.arun("--agent-cmd", "true", "--max-iterations", "3", env=env)
    rec = project.record()
    assert rec["finish_type"] == finish, done.stderr
    assert len(rec["iterations"]) == rows


@pytest.mark.parametrize(("cap", "code", "rows"), [("1.5", 17, 2), ("0", 10, 3)])
async def test_max_cost_ends_the_loop_once_spent(
    project: Project, cap: str, code: int, rows: int
) -> None:
    env = base_env(FRESHER_MAX_COST=cap)
    agent = reporting({"outcome": "ok", "cost_usd": 1.0})
    done = await project.arun("--agent-cmd", agent, "--max-iterations", "3", env=env)
    assert done.code == code, done.stderr
    assert len(project.record()["iterations"]) == rows


# --- [finish] --------------------------------------------------------------------------------


async def test_reviewer_max_diff_is_how_much_of_the_diff_the_reviewer_sees(
    tmp_path: Path, mock_api: MockAPI
) -> None:
    server = mock_api(
        {"responses": [verdict(True, [], []), verdict(True, [], [])], "when_exhausted": "error"}
    )
    shown = {}
    for limit in ("1000", None):
        project = Project(tmp_path / f"p-{limit}")
        project.dir.mkdir()
        project.git_init()
        project.write("IMPLEMENTATION_PLAN.md", "- [ ] one\n")
        project.write(".fresher/config.toml", "[finish]\nreviewer = 'claude-sonnet-4-5'\n")
        big = "".join(f"line {i}\n" for i in range(1000))
        script = project.write(
            "work.sh",
            f"cat > /dev/null; printf '{big}' > big.txt; "
            "sed -i 's/- \\[ \\]/- [x]/' IMPLEMENTATION_PLAN.md; "
            "git add -A && git commit -qm work",
        )
        extra = {"FRESHER_FINISH_REVIEWER_MAX_DIFF": limit} if limit else {}
        done = await project.arun(
            "--agent-cmd",
            f"sh {script}",
            "--max-iterations",
            "1",
            env=env_for(server, FRESHER_GATE="true", **extra),
        )
        assert done.code == 0, done.stderr
        (run_dir,) = project.run_dirs()
        saved = json.loads((run_dir / "review-001.json").read_text())
        shown[limit] = saved["request"]["messages"][0]["content"][0]["text"]
    assert "the diff is cut at 1000 of" in shown["1000"]
    assert "line 999" not in shown["1000"]
    assert "line 999" in shown[None]
    assert "the diff is cut" not in shown[None]


# --- [notify] --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("on", "events"),
    [("finish", ["finish"]), ("error_streak", ["error_streak"]), ("blocked", [])],
)
async def test_notify_on_chooses_the_events_notified(
    project: Project, on: str, events: list[str]
) -> None:
    env = base_env(
        FRESHER_NOTIFY_COMMAND="cat >> notified.jsonl; echo >> notified.jsonl",
        FRESHER_NOTIFY_ON=on,
    )
    done = await project.arun("--agent-cmd", agent_cmd("--exit=1"), env=env)
    assert done.code == 12, done.stderr
    out = project.dir / "notified.jsonl"
    lines = out.read_text().split("\n") if out.exists() else []
    assert [json.loads(line)["event"] for line in lines if line.strip()] == events


# --- [security] ------------------------------------------------------------------------------


@pytest.fixture
def host_socket() -> Iterator[Path]:
    """A listening unix socket on a short path (socket paths have a ~100 byte limit)."""
    folder = Path(tempfile.mkdtemp(prefix="ff-sock-")).resolve()
    path = folder / "s.sock"
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(path))
    yield path
    sock.close()
    shutil.rmtree(folder, ignore_errors=True)


def test_pass_env_lets_a_named_secret_through_to_the_agent(project: Project) -> None:
    # The command line folds [security] pass_env into the loop's options: run it (in-process).
    env = base_env(MY_TOKEN="t0k", OTHER_TOKEN="t1k", FRESHER_SECURITY_PASS_ENV="MY_TOKEN")
    args = ["--agent-cmd", recorder(project), "--max-iterations", "1"]
    done = CliRunner().invoke(cli.app, ["loop", "--dir", str(project.dir), *args], env=env)
    assert done.exit_code == 10, done.output
    seen = given(project)["env"]
    assert seen.get("MY_TOKEN") == "t0k"
    assert "OTHER_TOKEN" not in seen  # secret-looking, not named: kept from the agent


@pytest.mark.linux_only("the loop's sandbox is bubblewrap")
@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed")
async def test_sandbox_settings_reach_the_agent(
    project: Project, tmp_path: Path, host_socket: Path
) -> None:
    """What the loop decided for the own agent's tools is in the agent's environment: no
    network, another writable folder, a host socket, a folder the file tools may use."""
    (tmp_path / "cache").mkdir()
    (tmp_path / "shared").mkdir()
    project.dir = tmp_path / "p"
    project.dir.mkdir()
    done = await project.arun(
        "--agent-cmd", recorder(project), "--max-iterations", "1", env=base_env()
    )
    assert done.code == 10, done.stderr
    before = given(project)["env"]
    assert before["FORGEFLARE_SANDBOX"] == "network"
    for name in ("FORGEFLARE_SANDBOX_WRITABLE", "FORGEFLARE_SANDBOX_SOCKETS"):
        assert name not in before
    assert "FORGEFLARE_ALLOW_PATHS" not in before
    env = base_env(
        FRESHER_SECURITY_SANDBOX_NETWORK="false",
        FRESHER_SECURITY_WRITABLE=str(tmp_path / "cache"),
        FRESHER_SECURITY_SOCKETS=str(host_socket),
        FRESHER_SECURITY_ALLOW_PATHS="../shared",
    )
    done = await project.arun("--agent-cmd", recorder(project), "--max-iterations", "1", env=env)
    assert done.code == 10, done.stderr
    after = given(project)["env"]
    assert after["FORGEFLARE_SANDBOX"] == "1"  # on, without the network
    assert str((tmp_path / "cache").resolve()) in after["FORGEFLARE_SANDBOX_WRITABLE"]
    assert str(host_socket) in after["FORGEFLARE_SANDBOX_SOCKETS"]
    assert after["FORGEFLARE_ALLOW_PATHS"] == str((tmp_path / "shared").resolve())
    env = base_env(FRESHER_SECURITY_SANDBOX="off")
    done = await project.arun("--agent-cmd", recorder(project), "--max-iterations", "1", env=env)
    assert done.code == 10, done.stderr
    assert given(project)["env"]["FORGEFLARE_SANDBOX"] == ""  # off (empty: an exported one too)


async def test_max_requests_per_hour_waits_and_never_finishes(
    tmp_path: Path, mock_api: MockAPI
) -> None:
    project = Project(tmp_path)
    project.write(".fresher/config.toml", "[limits]\nmax_requests_per_hour = 2\n")
    read = tool_response(("Read", {"file_path": "notes.md"}))
    server = mock_api({"responses": [read, read, text_response("done")]})
    # An hour is 3.6 s here (FORGEFLARE_TIME_SCALE): the wait is real, and short.
    env = {**env_for(server, FRESHER_SMART_TERMINATION="false"), "FORGEFLARE_TIME_SCALE": "0.001"}
    done = await project.arun("--mode", "planning", "--max-iterations", "1", env=env)
    assert done.code == 10, done.stderr  # the iteration limit, not an error or a budget
    rec = project.record()
    rows = rec["iterations"]
    assert [(r["outcome"], r["turns"]) for r in rows] == [("rate_limited", 2), ("ok", 1)]
    assert "limit_wait" in [w["kind"] for w in rec["waits"]]
    assert "the hour's 2 request(s) are used (max_requests_per_hour)" in done.stderr
    assert len(server.requests()) == 3  # never a third request in the first hour


def test_security_readable_reaches_the_gates_box(tmp_path: Path) -> None:
    """``[security] readable`` is what the gate's box shows read-only in the hidden home."""
    from forgeflare.supervisor import box_settings

    project = Project(tmp_path)
    project.write(".fresher/config.toml", '[security]\nreadable = ["~/.m2/settings.xml"]\n')
    settings = box_settings(project.dir, base_env())
    assert settings.readable == ("~/.m2/settings.xml",)
    project.write(".fresher/config.toml", "")
    assert box_settings(project.dir, base_env()).readable == ()
