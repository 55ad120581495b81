"""A loop that survives the night, with the real agent against ``forgeflare mock-api``:
usage windows, outages, the budget, preflight, the default bounds and ``forgeflare stop``.

Waits are real but scaled down with ``FORGEFLARE_TIME_SCALE`` (a 70 s window waits 0.7 s).
The loops whose point is the supervisor's answer to what the agent met (a usage window, an
outage) run in the test process (``Project.arun``: the agent stays a real ``forgeflare run``
child against the mock), and refusals and the default bounds go through the CLI's entry point
in-process; the budget, a loop with hook modules, the lock, ``stop`` and a dead terminal start
the loop as a real process."""

from __future__ import annotations

import signal
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from agent_support import text_response, tick_response
from cli_inprocess import forgeflare_here, run_cli
from mockapi_support import MockAPI
from supervisor_agents.project import Project, base_env, env_for, wait_for

OPUS_IN = 5 / 1e6  # USD per input token, claude-opus-4-6 list price


def error(status: int, kind: str, **headers: str) -> dict[str, Any]:
    return {"error": {"status": status, "type": kind, "message": kind, "headers": headers}}


def started_marker(project: Project) -> Path:
    project.hook("started", 'touch "$FRESHER_PROJECT_DIR/started-ran"')
    return project.dir / "started-ran"


async def test_usage_limit_is_waited_out_not_counted(tmp_path: Path, mock_api: MockAPI) -> None:
    project = Project(tmp_path)
    server = mock_api(
        {
            "responses": [
                error(429, "rate_limit_error", **{"retry-after": "70"}),
                text_response("All done.\n<loop-done>COMPLETE</loop-done>"),
            ]
        }
    )
    project.write(".forgeflare/hooks.toml", "")
    done = await project.arun("--mode", "planning", "--max-iterations", "1", env=env_for(server))
    rec = project.record()
    rows = rec["iterations"]
    assert rows[0]["outcome"] == "rate_limited"
    assert rows[0]["decision"] == "limit_wait"
    wait = rec["waits"][0]
    assert wait["kind"] == "limit_wait"
    until = datetime.fromisoformat(wait["until"].replace("Z", "+00:00"))
    started = datetime.fromisoformat(rows[0]["started_at"].replace("Z", "+00:00"))
    assert 60 <= (until - started).total_seconds() <= 90
    # the limit did not use up the one allowed iteration: the second one ran
    assert len(rows) == 2
    assert rows[1]["outcome"] == "ok"
    assert rec["totals"]["iterations"] == 1
    assert done.code == 0, done.stderr  # the tag is a claim for the own agent too: complete
    assert "waiting for the usage window until" in done.stderr
    assert rec["streaks"].get("errors", 0) == 0


async def test_an_outage_is_waited_out_and_the_loop_completes(
    tmp_path: Path, mock_api: MockAPI
) -> None:
    project = Project(tmp_path)
    project.write("IMPLEMENTATION_PLAN.md", "- [x] done already? no:\n- [ ] one\n")
    overloaded = error(529, "overloaded_error", **{"retry-after": "0"})
    check = tick_response()
    # two iterations' worth of 529s (1 try + 4 retries each), then the API recovers
    server = mock_api({"responses": [overloaded] * 10 + [check, text_response("done")]})
    done = await project.arun(env=env_for(server, FRESHER_MAX_CONSECUTIVE_ERRORS="1"))
    assert done.code == 0, done.stderr
    rec = project.record()
    assert [w["kind"] for w in rec["waits"]] == ["outage", "outage"]
    assert [r["outcome"] for r in rec["iterations"]] == ["api_error", "api_error", "ok"]
    assert all(r["transient"] for r in rec["iterations"][:2])
    assert rec["finish_type"] == "complete"


def test_budget_finishes_the_loop_at_the_right_iteration(tmp_path: Path, mock_api: MockAPI) -> None:
    project = Project(tmp_path)
    million = {"input_tokens": 1_000_000, "output_tokens": 0}
    server = mock_api(
        {"responses": [{**text_response(f"step {i}"), "usage": million} for i in range(4)]}
    )
    done = project.run(
        "--mode",
        "planning",
        "--max-cost",
        "7",
        "--model",
        "claude-opus-4-6",
        env=env_for(server),
    )
    assert done.code == 17, done.stderr
    rec = project.record()
    assert rec["finish_type"] == "budget"
    # $5 < $7 after the first; $5 + $5 >= $7 after the second (an iteration is not refused
    # for what it might cost: the cap is checked on what was spent)
    assert len(rec["iterations"]) == 2
    for row in rec["iterations"]:
        assert row["tokens"]["input"] == 1_000_000
        assert abs(row["cost_usd"] - 1_000_000 * OPUS_IN) < 1e-9
    assert abs(rec["totals"]["cost_usd"] - 10.0) < 1e-9
    assert "budget of $7 is spent" in rec["finish_reason"]


def test_preflight_refuses_before_any_hook(tmp_path: Path, mock_api: MockAPI) -> None:
    project = Project(tmp_path)
    marker = started_marker(project)
    no_key = base_env()
    for key in ("ANTHROPIC_API_KEY", "ANTHROPIC_API_URL", "ANTHROPIC_BASE_URL"):
        no_key.pop(key, None)
    cases = [
        ((), no_key, "ANTHROPIC_API_KEY is not set"),
        (("--agent-cmd", "no-such-agent --flag"), base_env(), "'no-such-agent'"),
        (("--agent-cmd", 'foo "bar'), base_env(), "not a command line"),
    ]
    for args, env, needle in cases:
        # in-process: the refusal is the point; the hooks.toml case below starts the process
        done = run_cli(["loop", "--dir", project.dir, *args], cwd=project.dir, env=env)
        assert done.returncode == 2, (args, done.stderr)
        assert needle in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr
        assert not marker.exists()
        assert project.run_dirs() == []
    server = mock_api({"responses": []})
    project.write(".forgeflare/hooks.toml", "[[hooks]]\nevent = 'Nope'\ncommand = 'x'\n")
    done = project.run(env=env_for(server))
    assert done.code == 2
    assert "unknown event" in done.stderr
    assert not marker.exists()


def test_a_second_loop_in_the_project_refuses(tmp_path: Path) -> None:
    project = Project(tmp_path)
    agent = "sh -c 'while [ ! -e \"$FRESHER_PROJECT_DIR/go\" ]; do sleep 0.02; done'"
    first = project.popen("--agent-cmd", agent, "--max-iterations", "1")
    wait_for(lambda: any((d / "iteration-001.log").exists() for d in project.run_dirs()))
    # in-process: the refusal is the point (the lock is held by the first loop's process);
    # its agent `true`: were it not refused, it ends (exit 10) instead of waiting for `go`
    second = forgeflare_here(
        project.dir,
        "loop",
        "--dir",
        str(project.dir),
        "--agent-cmd",
        "true",
        "--max-iterations",
        "1",
    )
    assert second.returncode == 2
    assert f"another forgeflare loop is running in {project.dir}" in second.stderr
    assert f"pid {first.pid}" in second.stderr
    (project.dir / "go").touch()
    assert first.wait(timeout=30) == 10


def test_forgeflare_stop_ends_after_the_current_iteration(tmp_path: Path) -> None:
    project = Project(tmp_path)
    project.hook("finished", 'echo "$FRESHER_FINISH_TYPE" > "$FRESHER_PROJECT_DIR/finish"')
    agent = "sh -c 'while [ ! -e \"$FRESHER_PROJECT_DIR/go\" ]; do sleep 0.02; done'"
    loop = project.popen("--agent-cmd", agent, "--max-iterations", "5")
    wait_for(lambda: any((d / "iteration-001.log").exists() for d in project.run_dirs()))
    # in-process: the request and its answer are the point (test_loop_hand starts `stop`)
    asked = forgeflare_here(project.dir, "stop", "--dir", str(project.dir))
    assert asked.returncode == 0
    assert f"pid {loop.pid}" in asked.stdout
    (project.dir / "go").touch()
    assert loop.wait(timeout=30) == 18
    assert (project.dir / "finish").read_text().strip() == "stopped"
    assert len(project.record()["iterations"]) == 1


def test_unbounded_run_stops_at_the_default_bounds(tmp_path: Path) -> None:
    project = Project(tmp_path)  # no git, no plan, no bounds given
    # in-process: the CLI's bounds and the loop's count are the point
    done = forgeflare_here(project.dir, "loop", "--dir", str(project.dir), "--agent-cmd", "true")
    assert done.returncode == 10, done.stderr
    rec = project.record()
    assert len(rec["iterations"]) == 50
    assert "bounds: 50 iterations, runtime 10h 00m, no cost cap" in done.stderr
    assert "no_changes cannot stop an idle loop" in done.stderr


# The mock's outage: longer than one agent iteration (1 try + 4 retries) plus the loop's first
# back-off (30 s, scaled by FORGEFLARE_TIME_SCALE to 0.3 s), so the loop waits it out.
OUTAGE_MS = 5000


async def test_a_timed_outage_is_waited_out_and_the_loop_completes(
    tmp_path: Path, mock_api: MockAPI
) -> None:
    # The "10 minutes of 529", scaled: OUTAGE_MS of 529s by the wall clock, however
    # many requests the agent's retries make, then the API recovers.
    project = Project(tmp_path)
    project.write("IMPLEMENTATION_PLAN.md", "- [ ] one\n")
    outage = {**error(529, "overloaded_error", **{"retry-after": "0"}), "repeat_for_ms": OUTAGE_MS}
    server = mock_api({"responses": [outage, tick_response(), text_response("done")]})
    started = time.monotonic()
    done = await project.arun(env=env_for(server, FRESHER_MAX_CONSECUTIVE_ERRORS="1"))
    elapsed = time.monotonic() - started
    assert done.code == 0, done.stderr
    rec = project.record()
    assert rec["finish_type"] == "complete"
    *failed, last = rec["iterations"]
    # Error iterations beyond max_consecutive_errors = 1 would have ended the loop `error`.
    assert failed
    assert all(r["outcome"] == "api_error" and r["transient"] for r in failed)
    assert last["outcome"] == "ok"
    assert [w["kind"] for w in rec["waits"]] == ["outage"] * len(failed)
    assert elapsed * 1000 >= OUTAGE_MS  # it was running through the whole outage
    indexes = [r["response_index"] for r in server.requests()]
    assert indexes[: indexes.index(1)] == [0] * indexes.index(1)
    assert indexes[indexes.index(1) :] == [1, 2]


GOOD_HOOKS = """\
from forgeflare.hooks import hook


@hook("PreToolUse", match="Bash")
def observe(input):
    return None
"""


def test_preflight_loads_the_hook_modules_before_any_hook(
    tmp_path: Path, mock_api: MockAPI
) -> None:
    project = Project(tmp_path)
    marker = started_marker(project)
    # Importing a module must not run its hooks, nor leave the project's code in the loop.
    project.write("broken_hooks.py", "raise RuntimeError('boom at import')\n")
    project.write("empty_hooks.py", "X = 1\n")
    project.write("good_hooks.py", GOOD_HOOKS)
    server = mock_api({"responses": [text_response("done")]})
    cases = [
        ("--hooks-module nosuch_hooks", "hooks module 'nosuch_hooks': cannot import"),
        ("--hooks-module good_hooks --hooks-module=broken_hooks", "RuntimeError: boom at import"),
        ("--hooks-module empty_hooks", "hooks module 'empty_hooks': defines no hooks"),
    ]
    for extra_args, needle in cases:
        project.write(".fresher/config.toml", f"[agent]\nextra_args = {extra_args!r}\n")
        # in-process: the refusal is the point (the modules are still imported in a child);
        # the module that loads below starts the loop process
        done = forgeflare_here(
            project.dir, "loop", "--dir", str(project.dir), "--mode", "planning",
            "--max-iterations", "1", env=env_for(server),
        )  # fmt: skip
        assert done.returncode == 2, (extra_args, done.stderr)
        assert needle in done.stderr
        assert "every iteration would fail" in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr
        assert not marker.exists()
        assert project.run_dirs() == []
    assert server.requests() == []
    # A module that loads lets the loop start; the agent gets it.
    project.write(".fresher/config.toml", "[agent]\nextra_args = '--hooks-module good_hooks'\n")
    done = project.run("--mode", "planning", "--max-iterations", "1", env=env_for(server))
    assert done.code == 10, done.stderr
    assert marker.exists()
    assert len(server.requests()) == 1


def test_a_loop_whose_terminal_died_still_finishes_and_records(tmp_path: Path) -> None:
    """The reader of the loop's output dies (a fleet supervisor killed with -9, a dropped ssh
    session): the loop's next write fails with EPIPE, yet SIGTERM still ends it properly."""
    project = Project(tmp_path)
    project.hook("finished", 'echo "$FRESHER_FINISH_TYPE" > "$FRESHER_PROJECT_DIR/finish"')
    agent = "sh -c 'while [ ! -e \"$FRESHER_PROJECT_DIR/go\" ]; do sleep 0.02; done'"
    loop = project.popen("--agent-cmd", agent, "--max-iterations", "3")
    wait_for(lambda: any((d / "iteration-001.log").exists() for d in project.run_dirs()))
    assert loop.stdout is not None
    assert loop.stderr is not None
    loop.stdout.close()  # nobody reads the loop's output any more
    loop.stderr.close()
    loop.send_signal(signal.SIGTERM)
    assert loop.wait(timeout=30) == 130
    record = project.record()
    assert record["finish_type"] == "manual"
    assert record["finished_at"] is not None
    assert (project.dir / "finish").read_text().strip() == "manual"
    (run_dir,) = project.run_dirs()
    assert "finished: manual" in (run_dir / "loop.log").read_text()
