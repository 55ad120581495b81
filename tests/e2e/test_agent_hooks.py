"""The hook layer inside the real agent process: real hook scripts, real mock API."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil
import pytest
import tomli_w

from agent_support import (
    read_json,
    run_agent,
    run_agent_here,
    start_agent_in_bash,
    text_response,
    tool_response,
    tool_results,
    with_one_call,
)
from mockapi_support import MockAPI, MockServer


def answer_when(pattern: str, answer: str, otherwise: str) -> str:
    """A hook script that prints ``answer`` when its input holds ``pattern``, else ``otherwise``."""
    return (
        f'#!/usr/bin/env bash\ninput=$(cat)\ncase "$input" in\n'
        f"  *'{pattern}'*) echo '{answer}' ;;\n  *) echo '{otherwise}' ;;\nesac\n"
    )


GUARD = answer_when(
    "rm -rf", '{"action": "block", "reason": "destructive command detected"}', '{"action": "allow"}'
)
OBSERVE = """#!/usr/bin/env bash
cat >> observed.jsonl
echo >> observed.jsonl
"""
SIGNAL_ON_TESTS = answer_when(
    "run-tests",
    '{"action": "signal", "signal": "tests_pass", "reason": "clean run"}',
    '{"action": "continue"}',
)
POST_LOG = """#!/usr/bin/env bash
cat >> post.jsonl
echo >> post.jsonl
echo '{"action": "continue"}'
"""


def project(tmp_path: Path, hooks: str | list[dict[str, object]], scripts: dict[str, str]) -> Path:
    """``scripts`` in ``hooks/`` (executable) and ``.forgeflare/hooks.toml``: ``hooks`` as its
    text, or its ``[[hooks]]`` entries."""
    hooks_dir = tmp_path / "hooks"
    hooks_dir.mkdir()
    for name, body in scripts.items():
        path = hooks_dir / name
        path.write_text(body)
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
    (tmp_path / ".forgeflare").mkdir()
    text = hooks if isinstance(hooks, str) else tomli_w.dumps({"hooks": hooks})
    (tmp_path / ".forgeflare" / "hooks.toml").write_text(text)
    return tmp_path


def observed(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def final_of(tmp_path: Path) -> dict[str, Any]:
    data: dict[str, Any] = read_json(tmp_path / ".forgeflare" / "convergence.json")
    return data


def test_guard_blocks_rm_rf_and_observe_sees_both_outcomes(
    tmp_path: Path, mock_api: MockAPI
) -> None:
    project(
        tmp_path,
        [
            {"event": "PreToolUse", "match_tool": "Bash", "command": "hooks/guard.sh"},
            {"event": "PreToolUse", "phase": "observe", "command": "hooks/observe.sh"},
        ],
        {"guard.sh": GUARD, "observe.sh": OBSERVE},
    )
    server = mock_api(
        {
            "responses": [
                tool_response(("Bash", {"command": "rm -rf build"})),
                tool_response(("Bash", {"command": "echo safe"})),
                text_response("adapted"),
            ]
        }
    )
    proc = run_agent_here(tmp_path, server.url)
    assert proc.returncode == 0, proc.stderr
    requests = server.requests()
    (blocked,) = tool_results(requests[1])
    assert blocked["is_error"] is True
    assert blocked["content"] == "blocked by hooks/guard.sh: destructive command detected"
    (allowed,) = tool_results(requests[2])
    assert "safe" in allowed["content"]
    first, second = observed(tmp_path / "observed.jsonl")
    assert first["phase"] == "observe"
    assert first["blocked"] is True
    assert first["blocked_by"] == "hooks/guard.sh"
    assert first["block_reason"] == "destructive command detected"
    assert first["tool"] == "Bash"
    assert first["input"] == {"command": "rm -rf build"}
    assert first["tool_iterations"] == 0
    assert second["blocked"] is False
    assert "blocked_by" not in second
    assert "block_reason" not in second
    assert second["tool_iterations"] == 1
    # every invocation is in the session's audit log
    [session] = list((tmp_path / ".entire" / "metadata").iterdir())
    audit = observed(session / "hooks.jsonl")
    assert [a["outcome"] for a in audit if a.get("phase") == "guard"] == ["block", "allow"]


@pytest.mark.parametrize(
    ("script", "timeout_ms", "expected"),
    [
        (
            "#!/usr/bin/env bash\nsleep 30\n",
            300,
            "hook failed: hooks/g.sh timed out after 300ms (tool blocked by default)",
        ),
        (
            "#!/usr/bin/env bash\nexit 7\n",
            5000,
            "hook failed: hooks/g.sh exited with code 7 (tool blocked by default)",
        ),
        (
            "#!/usr/bin/env bash\necho not json\n",
            5000,
            "hook failed: hooks/g.sh returned invalid JSON (tool blocked by default)",
        ),
    ],
    ids=["timeout", "crash", "invalid-json"],
)
def test_failing_guards_block_with_distinct_messages(
    tmp_path: Path, mock_api: MockAPI, script: str, timeout_ms: int, expected: str
) -> None:
    project(
        tmp_path,
        [{"event": "PreToolUse", "command": "hooks/g.sh", "timeout_ms": timeout_ms}],
        {"g.sh": script},
    )
    server = mock_api(with_one_call("Bash", {"command": "ls"}, "ok"))
    proc = run_agent_here(tmp_path, server.url)
    assert proc.returncode == 0, proc.stderr
    (result,) = tool_results(server.requests()[1])
    assert result["is_error"] is True
    assert result["content"] == expected


def test_post_tool_use_signal_ends_after_batch(tmp_path: Path, mock_api: MockAPI) -> None:
    project(
        tmp_path,
        [{"event": "PostToolUse", "command": "hooks/signal.sh"}],
        {"signal.sh": SIGNAL_ON_TESTS},
    )
    server = mock_api(
        {
            "responses": [
                tool_response(
                    ("Bash", {"command": "echo run-tests"}), ("Bash", {"command": "echo after"})
                ),
                text_response("never requested"),
            ]
        }
    )
    proc = run_agent_here(tmp_path, server.url)
    assert proc.returncode == 0, proc.stderr
    assert len(server.requests()) == 1  # no request after the signal
    state = final_of(tmp_path)
    assert state["final"]["reason"] == "convergence_signal"
    assert state["final"]["tool_iterations"] == 1
    assert state["observations"] == [
        {"signal": "tests_pass", "reason": "clean run", "tool_iterations": 0}
    ]


def test_three_blocks_in_a_batch_end_with_consecutive_limit(
    tmp_path: Path, mock_api: MockAPI
) -> None:
    project(tmp_path, [{"event": "PreToolUse", "command": "hooks/guard.sh"}], {"guard.sh": GUARD})
    server = mock_api(
        {
            "responses": [
                tool_response(*[("Bash", {"command": f"rm -rf /tmp/x{i}"}) for i in range(4)]),
                text_response("never"),
            ]
        }
    )
    proc = run_agent(tmp_path, server.url)
    assert proc.returncode == 6
    assert len(server.requests()) == 1  # no tool_results were sent
    final = final_of(tmp_path)["final"]
    assert final["reason"] == "block_limit_consecutive"
    assert final["tool_iterations"] == 0


def test_ten_alternating_blocks_end_with_total_limit(tmp_path: Path, mock_api: MockAPI) -> None:
    project(
        tmp_path,
        [{"event": "PreToolUse", "match_tool": "Bash", "command": "hooks/guard.sh"}],
        {"guard.sh": GUARD},
    )
    batch = tool_response(("Bash", {"command": "rm -rf /tmp/nope"}), ("Bash", {"command": "true"}))
    server = mock_api({"responses": [batch] * 10 + [text_response("never")]})
    proc = run_agent_here(tmp_path, server.url)
    assert proc.returncode == 6, proc.stderr
    assert len(server.requests()) == 10
    final = final_of(tmp_path)["final"]
    assert final["reason"] == "block_limit_total"
    assert final["tool_iterations"] == 9


def test_parallel_batch_slots_and_no_post_for_blocked(tmp_path: Path, mock_api: MockAPI) -> None:
    (tmp_path / "a.txt").write_text("alpha\n")
    (tmp_path / "b.txt").write_text("beta\n")
    project(
        tmp_path,
        [
            {"event": "PreToolUse", "match_tool": "Read", "command": "hooks/guard_secret.sh"},
            {"event": "PostToolUse", "command": "hooks/post.sh"},
        ],
        {
            "guard_secret.sh": GUARD.replace("rm -rf", "secret"),
            "post.sh": POST_LOG,
        },
    )
    server = mock_api(
        {
            "responses": [
                tool_response(
                    ("Read", {"file_path": "a.txt"}),
                    ("Read", {"file_path": "secret.txt"}),
                    ("Read", {"file_path": "b.txt"}),
                ),
                text_response("ok"),
            ]
        }
    )
    proc = run_agent_here(tmp_path, server.url)
    assert proc.returncode == 0, proc.stderr
    a, secret, b = tool_results(server.requests()[1])
    assert [r["tool_use_id"] for r in (a, secret, b)] == ["toolu_0", "toolu_1", "toolu_2"]
    assert "alpha" in a["content"]
    assert secret["is_error"] is True
    assert secret["content"].startswith("blocked by hooks/guard_secret.sh")
    assert "beta" in b["content"]
    posted = observed(tmp_path / "post.jsonl")
    assert sorted(p["input"]["file_path"] for p in posted) == ["a.txt", "b.txt"]
    assert all(p["event"] == "PostToolUse" and p["is_error"] is False for p in posted)


def test_malformed_hooks_toml_stops_before_first_api_call(
    tmp_path: Path, mock_api: MockAPI
) -> None:
    project(tmp_path, '[[hooks]]\nevent = "PreTool"\ncommand = "x"\n', {})
    server = mock_api({"responses": [text_response("never")]})
    proc = run_agent_here(tmp_path, server.url)
    assert proc.returncode != 0
    assert server.requests() == []
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "hooks.toml" in lines[0]
    assert "PreTool" in lines[0]


def test_no_hooks_toml_no_audit_and_final_written(tmp_path: Path, mock_api: MockAPI) -> None:
    server = mock_api(with_one_call("Bash", {"command": "true"}, "ok"))
    proc = run_agent_here(tmp_path, server.url)
    assert proc.returncode == 0, proc.stderr
    [session] = list((tmp_path / ".entire" / "metadata").iterdir())
    assert not (session / "hooks.jsonl").exists()
    assert final_of(tmp_path)["final"]["reason"] == "end_turn"


def test_stop_hook_receives_reason_and_totals(tmp_path: Path, mock_api: MockAPI) -> None:
    project(
        tmp_path,
        [{"event": "Stop", "command": "hooks/stop.sh"}],
        {"stop.sh": '#!/usr/bin/env bash\ncat > stop.json\necho \'{"action": "signal"}\'\n'},
    )
    server = mock_api(with_one_call("Bash", {"command": "true"}, "ok"))
    proc = run_agent_here(tmp_path, server.url)
    assert proc.returncode == 0, proc.stderr
    stop = read_json(tmp_path / "stop.json")
    assert stop["event"] == "Stop"
    assert stop["reason"] == "end_turn"
    assert stop["tool_iterations"] == 1
    assert stop["total_tokens"] == 2 * 100 + 20 + 10
    assert stop["cwd"] == str(tmp_path.resolve())


PY_HOOKS = """
from forgeflare.hooks import HookOutcome, hook

stops = 0


@hook("PreToolUse", match="Bash")
def no_push(input):
    if "git push" in input.get("command", ""):
        return HookOutcome("deny", reason="pushing is for humans")
    if input.get("command") == "make":
        return HookOutcome("allow", updated_input={"command": "echo made"})
    return None


@hook("Stop")
def one_more_round(reason):
    global stops
    stops += 1
    if stops == 1:
        return HookOutcome("continue", reason="check the tests once more")
    return None
"""


def run_with_hooks(
    tmp_path: Path,
    mock_api: MockAPI,
    hooks: str,
    responses: list[dict[str, Any]],
    run: Callable[..., subprocess.CompletedProcess[str]] = run_agent_here,
) -> tuple[subprocess.CompletedProcess[str], MockServer]:
    """``forgeflare run`` with ``hooks`` as ``--hooks-module loophooks``, against ``responses``:
    in the test process unless ``run`` is :func:`run_agent` (a hook that blocks a thread or
    raises ``KeyboardInterrupt`` needs a process of its own)."""
    (tmp_path / "loophooks.py").write_text(hooks)
    server = mock_api({"responses": responses})
    return run(tmp_path, server.url, "task", "--hooks-module", "loophooks"), server


# The module keeps the old HookOutcome on purpose (it still works); run in this process, its
# DeprecationWarning would land in the suite's summary instead of the agent's stderr.
@pytest.mark.filterwarnings("ignore:HookOutcome is deprecated:DeprecationWarning")
def test_python_hooks_module_deny_update_and_stop_continue(
    tmp_path: Path, mock_api: MockAPI
) -> None:
    proc, server = run_with_hooks(
        tmp_path,
        mock_api,
        PY_HOOKS,
        [
            tool_response(("Bash", {"command": "git push origin main"})),
            tool_response(("Bash", {"command": "make"})),
            text_response("done"),
            text_response("checked again"),
        ],
    )
    assert proc.returncode == 0, proc.stderr
    requests = server.requests()
    assert len(requests) == 4
    (denied,) = tool_results(requests[1])
    assert denied["is_error"] is True
    assert "pushing is for humans" in denied["content"]
    (made,) = tool_results(requests[2])
    assert "made" in made["content"]
    last_user = requests[3]["body"]["messages"][-1]
    assert last_user["role"] == "user"
    assert "check the tests once more" in json.dumps(last_user["content"])
    assert final_of(tmp_path)["final"]["reason"] == "end_turn"


def test_unknown_hooks_module_is_one_line(tmp_path: Path, mock_api: MockAPI) -> None:
    server = mock_api({"responses": [text_response("never")]})
    proc = run_agent_here(tmp_path, server.url, "task", "--hooks-module", "no_such_module_here")
    assert proc.returncode == 2
    assert server.requests() == []
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "no_such_module_here" in lines[0]


EVENTS_HOOKS = """
import json, time
from forgeflare.hooks import hook


def log(*record):
    with open("events.jsonl", "a") as f:
        f.write(json.dumps([*record, time.monotonic()]) + "\\n")


@hook("StepStart")
def step_start(step):
    log("StepStart", step)


@hook("StepEnd")
def step_end(step, stop_reason):
    log("StepEnd", step, stop_reason)


@hook("PostToolUse")
def post(tool):
    log("PostToolUse", tool)


@hook("AgentFailed")
def failed(error, reason):
    log("AgentFailed", reason, type(error).__name__)
"""


def events(tmp_path: Path) -> list[list[Any]]:
    path = tmp_path / "events.jsonl"
    if not path.exists():
        return []
    return [json.loads(line)[:-1] for line in path.read_text().splitlines()]


def test_step_end_fires_after_the_steps_tools(tmp_path: Path, mock_api: MockAPI) -> None:
    proc, _ = run_with_hooks(
        tmp_path,
        mock_api,
        EVENTS_HOOKS,
        [tool_response(("Bash", {"command": "sleep 0.3"})), text_response("ok")],
    )
    assert proc.returncode == 0, proc.stderr
    assert events(tmp_path) == [
        ["StepStart", 1],
        ["PostToolUse", "Bash"],
        ["StepEnd", 1, "tool_use"],
        ["StepStart", 2],
        ["StepEnd", 2, "end_turn"],
    ]  # and no AgentFailed: end_turn is not a failure
    times = [json.loads(line)[-1] for line in (tmp_path / "events.jsonl").read_text().splitlines()]
    assert times[2] - times[0] >= 0.3  # the step's duration includes its tool


@pytest.mark.parametrize(
    ("response", "status", "failed"),
    [
        ({"error": {"status": 400, "type": "invalid_request_error", "message": "bad"}}, 3,
         ["AgentFailed", "api_error", "APIStatusError"]),
        (text_response("I can't help with that.", stop_reason="refusal"), 8,
         ["AgentFailed", "refusal", "TurnFailure"]),
    ],
)  # fmt: skip
def test_agent_failed_on_failure_exits(
    tmp_path: Path, mock_api: MockAPI, response: dict[str, Any], status: int, failed: list[str]
) -> None:
    proc, _ = run_with_hooks(tmp_path, mock_api, EVENTS_HOOKS, [response])
    assert proc.returncode == status, proc.stderr
    assert events(tmp_path)[-1] == failed
    assert [e[0] for e in events(tmp_path)].count("AgentFailed") == 1


def test_agent_failed_on_interrupt(tmp_path: Path, mock_api: MockAPI) -> None:
    (tmp_path / "loophooks.py").write_text(EVENTS_HOOKS)
    long_bash = ("Bash", {"command": "touch started && sleep 600"})
    server = mock_api({"responses": [tool_response(long_bash)]})
    proc = start_agent_in_bash(tmp_path, server.url, "--hooks-module", "loophooks")
    try:
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 143, stderr
    assert events(tmp_path)[-1][:2] == ["AgentFailed", "interrupted"], events(tmp_path)[-1]


TIMEOUT_HOOKS = """
import time
import trio
from forgeflare.hooks import Signal, hook


@hook("PreToolUse", match="Bash", timeout=0.2)
def slow_guard(input):
    if "slow" in input["command"]:
        time.sleep(300)  # a sync hook with a timeout runs in a thread: abandoned at 0.2 s


@hook("PostToolUse", timeout=0.2)
async def slow_observer(tool):
    await trio.sleep(300)
    return Signal("never")
"""


def _guard_fails_then_runs(
    tmp_path: Path, mock_api: MockAPI, hooks: str, first: str, second: str
) -> tuple[subprocess.CompletedProcess[str], str]:
    """Bash ``echo FIRST > ran`` (its guard fails), then ``echo SECOND > ran`` (it runs): the
    agent's run and the first call's error."""
    echo = [tool_response(("Bash", {"command": f"echo {word} > ran"})) for word in (first, second)]
    proc, server = run_with_hooks(
        tmp_path, mock_api, hooks, [*echo, text_response("done")], run=run_agent
    )
    assert proc.returncode == 0, proc.stderr
    (blocked,) = tool_results(server.requests()[1])
    assert blocked["is_error"] is True
    (ran,) = tool_results(server.requests()[2])
    assert ran["is_error"] is False
    assert (tmp_path / "ran").read_text() == f"{second}\n"
    return proc, str(blocked["content"])


def test_python_hook_timeout_fails_closed_for_guards_open_elsewhere(
    tmp_path: Path, mock_api: MockAPI
) -> None:
    started = time.monotonic()
    proc, blocked = _guard_fails_then_runs(tmp_path, mock_api, TIMEOUT_HOOKS, "slow", "fast")
    # Nothing waited for the hooks' 300 s (the bound is generous for a loaded machine).
    assert time.monotonic() - started < 120
    assert blocked == (
        "hook failed: loophooks.slow_guard timed out after 200ms (tool blocked by default)"
    )
    assert "loophooks.slow_observer timed out after 200ms (ignored)" in proc.stderr
    assert final_of(tmp_path)["final"]["reason"] == "end_turn"  # no signal from a timed-out hook


def test_built_in_bash_check_is_a_guard_without_any_hooks(
    tmp_path: Path, mock_api: MockAPI
) -> None:
    server = mock_api(with_one_call("Bash", {"command": "rm -rf /"}, "ok"))
    proc = run_agent_here(tmp_path, server.url)
    assert proc.returncode == 0, proc.stderr
    (denied,) = tool_results(server.requests()[1])
    assert denied["is_error"] is True
    assert denied["content"].startswith("blocked by forgeflare:bash-check: ")
    [session] = list((tmp_path / ".entire" / "metadata").iterdir())
    audit = [json.loads(line) for line in (session / "hooks.jsonl").read_text().splitlines()]
    assert [(r["hook"], r["kind"], r["outcome"]) for r in audit] == [
        ("forgeflare:bash-check", "builtin", "block")
    ]


def test_match_naming_no_tool_stops_start_up(tmp_path: Path, mock_api: MockAPI) -> None:
    project(tmp_path, '[[hooks]]\nevent = "PreToolUse"\nmatch_tool = "bash"\ncommand = "x"\n', {})
    server = mock_api({"responses": [text_response("never")]})
    proc = run_agent_here(tmp_path, server.url)
    assert proc.returncode == 2
    assert server.requests() == []
    assert "match_tool 'bash' names no tool; did you mean Bash?" in proc.stderr
    (tmp_path / ".forgeflare" / "hooks.toml").unlink()
    (tmp_path / "typohooks.py").write_text(
        "from forgeflare.hooks import hook\n\n"
        "@hook('PreToolUse', match='Bsh')\ndef guard():\n    return None\n"
    )
    proc = run_agent_here(tmp_path, server.url, "task", "--hooks-module", "typohooks")
    assert proc.returncode == 2
    assert "match 'Bsh' names no tool; did you mean Bash?" in proc.stderr


def test_lone_surrogates_from_a_guard_and_the_api_never_crash_the_run(
    tmp_path: Path, mock_api: MockAPI
) -> None:
    # Valid JSON may spell a lone surrogate; it used to crash the audit write (from a guard's
    # reason), the display (from a text delta) and the mock server (from its script).
    project(
        tmp_path,
        '[[hooks]]\nevent = "PreToolUse"\ncommand = "hooks/g.sh"\n',
        {"g.sh": "#!/usr/bin/env bash\ncat >/dev/null\n"
                 "echo '{\"action\": \"block\", \"reason\": \"no \\ud800 here\"}'\n"},
    )  # fmt: skip
    server = mock_api(
        {
            "responses": [
                tool_response(("Bash", {"command": "ls"}), text="half \ud800 a pair"),
                text_response("done \udfff"),
            ]
        }
    )
    proc = run_agent(tmp_path, server.url)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "half \ufffd a pair" in proc.stdout
    (result,) = tool_results(server.requests()[1])
    assert result["content"].endswith("no \ufffd here")
    (audit,) = tmp_path.glob(".entire/metadata/*/hooks.jsonl")
    assert [json.loads(x)["reason"] for x in audit.read_text().splitlines()] == ["no \ufffd here"]
    assert final_of(tmp_path)["final"]["reason"] == "end_turn"


EXITING_HOOKS = """
import subprocess
import sys
from forgeflare.hooks import hook

@hook("PreToolUse", match="Bash", timeout=5)
def exiting_guard(input):
    if "first" in input["command"]:
        sys.exit(3)

@hook("PostToolUse", timeout=5)
async def interrupting_observer(tool):
    raise KeyboardInterrupt

@hook("Stop")
def exiting_stop(reason):
    raise SystemExit("bye")
"""


def test_a_python_hook_that_exits_or_interrupts_is_a_hook_failure(
    tmp_path: Path, mock_api: MockAPI
) -> None:
    # SystemExit and KeyboardInterrupt from a hook used to end the agent with an exception
    # group and no final; they are failures with the documented meaning, like any exception.
    proc, blocked = _guard_fails_then_runs(tmp_path, mock_api, EXITING_HOOKS, "first", "second")
    assert "Traceback" not in proc.stderr
    assert "loophooks.exiting_guard raised SystemExit" in blocked
    assert "loophooks.interrupting_observer raised KeyboardInterrupt" in proc.stderr
    assert "loophooks.exiting_stop raised SystemExit: bye" in proc.stderr
    assert final_of(tmp_path)["final"]["reason"] == "end_turn"


def test_a_shell_hooks_setsid_child_is_ended_with_the_hook(
    tmp_path: Path, mock_api: MockAPI
) -> None:
    # It held the hook's stderr, which is the agent's: the agent's stderr stayed open 206 s.
    token = f"{os.getpid() % 1000 + 500}.5"
    project(
        tmp_path,
        '[[hooks]]\nevent = "PreToolUse"\nphase = "observe"\ncommand = "hooks/o.sh"\n',
        {"o.sh": f"#!/usr/bin/env bash\ncat >/dev/null\nsetsid sleep {token} &\necho '{{}}'\n"},
    )
    server = mock_api(with_one_call("Bash", {"command": "true"}, "ok"))
    proc = run_agent(tmp_path, server.url, timeout=60)  # held open by the sleep: 60 s, fails
    assert proc.returncode == 0, proc.stderr
    left = [
        p for p in psutil.process_iter(["cmdline", "status"])
        if p.info["cmdline"] == ["sleep", token] and p.info["status"] != "zombie"
    ]  # fmt: skip
    for p in left:
        p.kill()
    assert left == []
