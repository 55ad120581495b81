"""The hook pipeline with real hook scripts (bash and python3) in a temporary project."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import tomli_w

from forgeflare.disk import read_convergence
from forgeflare.hooks import (
    Allow,
    Block,
    Continue,
    ExitReason,
    Hook,
    HookDispatcher,
    HookOutcome,
    NoHooks,
    Signal,
    build_pipeline,
    make_hook,
)

SCRIPTS = Path(__file__).resolve().parents[1] / "hook_scripts"


@pytest.fixture(autouse=True)
def _scripts_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    # Hooks are named by their command; with the scripts on PATH the command is the bare
    # script name, as in the spec's messages ("blocked by ralph-guard.sh: ...").
    monkeypatch.setenv("PATH", f"{SCRIPTS}{os.pathsep}{os.environ['PATH']}")


class Project:
    """A temporary project with a hooks.toml, a log and an audit trail."""

    def __init__(self, root: Path, toml: str, python_hooks: tuple[Hook, ...] = ()) -> None:
        self.root = root
        (root / ".forgeflare").mkdir(exist_ok=True)
        if toml:
            (root / ".forgeflare" / "hooks.toml").write_text(textwrap.dedent(toml))
        self.logs: list[str] = []
        self.audit_path = root / "audit.jsonl"
        self.cwd = str(root.resolve())
        self.pipeline = build_pipeline(
            project_dir=root,
            python_hooks=python_hooks,
            audit_path=self.audit_path,
            log=self.logs.append,
        )

    def audit(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.audit_path.read_text().splitlines()]

    def lines(self, name: str) -> list[dict[str, Any]]:
        return [json.loads(x) for x in (self.root / name).read_text().splitlines() if x]


def hooks(*entries: dict[str, Any]) -> str:
    return tomli_w.dumps({"hooks": list(entries)})


def echo(answer: dict[str, Any]) -> str:
    """A hook command that prints ``answer``."""
    return "echo " + shlex.quote(json.dumps(answer))


GUARD = {"event": "PreToolUse", "match_tool": "Bash", "command": "ralph-guard.sh"}
OBSERVE = {"event": "PreToolUse", "phase": "observe", "command": "record-stdin.sh observed.jsonl"}


async def test_guard_blocks_with_reason_and_observer_sees_block(tmp_path: Path) -> None:
    p = Project(tmp_path, hooks(GUARD, OBSERVE))
    result = await p.pipeline.pre_tool_use(
        tool="Bash", input={"command": "rm -rf /"}, tool_iterations=3
    )
    assert result == Block(
        message="blocked by ralph-guard.sh: destructive command detected",
        blocked_by="ralph-guard.sh",
        reason="destructive command detected",
    )
    [seen] = p.lines("observed.jsonl")
    assert seen == {
        "event": "PreToolUse",
        "phase": "observe",
        "tool": "Bash",
        "input": {"command": "rm -rf /"},
        "blocked": True,
        "blocked_by": "ralph-guard.sh",
        "block_reason": "destructive command detected",
        "tool_iterations": 3,
        "cwd": p.cwd,
    }


async def test_guard_allows_and_observer_sees_no_block(tmp_path: Path) -> None:
    p = Project(tmp_path, hooks(GUARD, OBSERVE))
    result = await p.pipeline.pre_tool_use(
        tool="Bash", input={"command": "cargo test"}, tool_iterations=1
    )
    assert result == Allow({"command": "cargo test"})
    [seen] = p.lines("observed.jsonl")
    assert seen["blocked"] is False
    assert "blocked_by" not in seen
    assert "block_reason" not in seen


@pytest.mark.parametrize(
    ("command", "timeout", "message"),
    [
        ("sleep 5", 200, "hook failed: sleep 5 timed out after 200ms (tool blocked by default)"),
        ("exit 3", 5000, "hook failed: exit 3 exited with code 3 (tool blocked by default)"),
        ("echo not-json", 5000,
         "hook failed: echo not-json returned invalid JSON (tool blocked by default)"),
    ],
)  # fmt: skip
async def test_guard_failures_block_with_distinct_messages(
    tmp_path: Path, command: str, timeout: int, message: str
) -> None:
    p = Project(
        tmp_path,
        hooks({"event": "PreToolUse", "command": command, "timeout_ms": timeout}, OBSERVE),
    )
    result = await p.pipeline.pre_tool_use(tool="Read", input={}, tool_iterations=0)
    assert isinstance(result, Block)
    assert result.message == message
    assert result.blocked_by == command
    [seen] = p.lines("observed.jsonl")  # observers still run after a failed guard
    assert seen["blocked"] is True
    assert seen["block_reason"] == message
    assert any(message in line for line in p.logs)


async def test_first_block_short_circuits_later_guards(tmp_path: Path) -> None:
    second = {"event": "PreToolUse", "command": "touch second-ran; " + echo({"action": "allow"})}
    p = Project(tmp_path, hooks(GUARD, second))
    assert isinstance(
        await p.pipeline.pre_tool_use(
            tool="Bash", input={"command": "rm -rf x"}, tool_iterations=0
        ),
        Block,
    )
    assert not (tmp_path / "second-ran").exists()
    assert isinstance(
        await p.pipeline.pre_tool_use(tool="Bash", input={"command": "ls"}, tool_iterations=0),
        Allow,
    )
    assert (tmp_path / "second-ran").exists()


async def test_observe_failure_has_no_effect(tmp_path: Path) -> None:
    p = Project(
        tmp_path, hooks(GUARD, {"event": "PreToolUse", "phase": "observe", "command": "exit 9"})
    )
    result = await p.pipeline.pre_tool_use(tool="Bash", input={"command": "ls"}, tool_iterations=0)
    assert result == Allow({"command": "ls"})
    assert any("exit 9 exited with code 9" in line and "ignored" in line for line in p.logs)


async def test_match_tool_is_exact(tmp_path: Path) -> None:
    block_all = {
        "event": "PreToolUse",
        "match_tool": "Bash",
        "command": echo({"action": "block", "reason": "no"}),
    }
    p = Project(tmp_path, hooks(block_all, OBSERVE))
    assert isinstance(
        await p.pipeline.pre_tool_use(tool="Bash", input={}, tool_iterations=0), Block
    )
    # No matching guard: Allow, and the observer sees blocked false without block fields.
    assert await p.pipeline.pre_tool_use(tool="BashScript", input={}, tool_iterations=0) == Allow(
        {}
    )
    assert p.lines("observed.jsonl")[1]["blocked"] is False
    assert "blocked_by" not in p.lines("observed.jsonl")[1]


async def test_phase_none_is_guard_for_pre_tool_use_only(tmp_path: Path) -> None:
    # A PreToolUse hook without phase blocks (guard); a PostToolUse hook with a phase is
    # still a PostToolUse hook, and never runs for PreToolUse.
    pre = {"event": "PreToolUse", "command": echo({"action": "block", "reason": "r"})}
    post = {"event": "PostToolUse", "phase": "guard", "command": "record-stdin.sh post.jsonl"}
    p = Project(tmp_path, hooks(pre, post))
    assert isinstance(
        await p.pipeline.pre_tool_use(tool="Read", input={}, tool_iterations=0), Block
    )
    assert not (tmp_path / "post.jsonl").exists()
    res = await p.pipeline.post_tool_use(
        tool="Read", input={}, result="ok", is_error=False, tool_iterations=0
    )
    assert res == Continue()  # "{}" is not a valid PostToolUse answer: logged, fail-open
    assert p.lines("post.jsonl")[0]["event"] == "PostToolUse"


def _post(signal: str) -> dict[str, Any]:
    return {"event": "PostToolUse", "command": f"convergence-check.py {signal}"}


async def test_post_signal_recorded_in_convergence(tmp_path: Path) -> None:
    p = Project(tmp_path, hooks(_post("clean_test")))
    res = await p.pipeline.post_tool_use(
        tool="Bash",
        input={"command": "cargo test"},
        result="test result: ok. 42 passed; 0 failed",
        is_error=False,
        tool_iterations=12,
    )
    assert res == Signal(signal="clean_test", reason="clean test run")
    state = read_convergence(tmp_path / ".forgeflare" / "convergence.json")
    assert state is not None
    assert [(o.signal, o.reason, o.tool_iterations) for o in state.observations] == [
        ("clean_test", "clean test run", 12)
    ]
    assert state.final is None
    res = await p.pipeline.post_tool_use(
        tool="Bash", input={}, result="1 failed", is_error=False, tool_iterations=13
    )
    assert res == Continue()


async def test_several_signals_all_recorded_first_wins_one_write(tmp_path: Path) -> None:
    # The middle hook looks at convergence.json while it runs: with one write after all
    # hooks, the first hook's observation is not there yet.
    peek = {
        "event": "PostToolUse",
        "command": "test -e .forgeflare/convergence.json && touch saw-file; "
        + echo({"action": "continue"}),
    }
    p = Project(tmp_path, hooks(_post("tests_pass"), peek, _post("lint_clean")))
    res = await p.pipeline.post_tool_use(
        tool="Bash", input={}, result="0 failed", is_error=False, tool_iterations=4
    )
    assert res == Signal(signal="tests_pass", reason="clean test run")
    assert not (tmp_path / "saw-file").exists()
    state = read_convergence(tmp_path / ".forgeflare" / "convergence.json")
    assert state is not None
    assert [o.signal for o in state.observations] == ["tests_pass", "lint_clean"]
    assert {o.tool_iterations for o in state.observations} == {4}


async def test_post_failures_continue_and_are_logged(tmp_path: Path) -> None:
    p = Project(
        tmp_path,
        hooks(
            {"event": "PostToolUse", "command": "exit 4"},
            {"event": "PostToolUse", "command": "sleep 5", "timeout_ms": 150},
            {"event": "PostToolUse", "command": "echo nope"},
        ),
    )
    res = await p.pipeline.post_tool_use(
        tool="Bash", input={}, result="", is_error=True, tool_iterations=0
    )
    assert res == Continue()
    text = "\n".join(p.logs)
    assert "exit 4 exited with code 4" in text
    assert "sleep 5 timed out after 150ms" in text
    assert "echo nope returned invalid JSON" in text
    assert not (tmp_path / ".forgeflare" / "convergence.json").exists()


async def test_convergence_write_failure_is_a_warning(tmp_path: Path) -> None:
    p = Project(tmp_path, hooks(_post("x")))
    # A directory where the file should be: the rename fails.
    (tmp_path / ".forgeflare" / "convergence.json").mkdir()
    res = await p.pipeline.post_tool_use(
        tool="Bash", input={}, result="0 failed", is_error=False, tool_iterations=0
    )
    assert res == Signal(signal="x", reason="clean test run")
    assert any(line.startswith("warning: could not record") for line in p.logs)


async def test_post_result_truncated_for_hook(tmp_path: Path) -> None:
    p = Project(tmp_path, hooks({"event": "PostToolUse", "command": "record-stdin.sh post.jsonl"}))
    result = "a" + "é" * 3000 + "z"
    await p.pipeline.post_tool_use(
        tool="Read", input={}, result=result, is_error=False, tool_iterations=0
    )
    [seen] = p.lines("post.jsonl")
    assert seen["result"] == (
        "a"
        + "é" * 1279
        + "\n... (truncated for hook, full result: 6002 bytes)\n"
        + "é" * 1280
        + "z"
    )


async def test_stop_hooks_observe_only(tmp_path: Path) -> None:
    p = Project(
        tmp_path,
        hooks(
            {"event": "Stop", "command": "record-stdin.sh stop.jsonl"},
            {"event": "Stop", "command": echo({"action": "signal"})},
            {"event": "Stop", "command": "exit 2"},
        ),
    )
    prompt = await p.pipeline.stop(
        reason=ExitReason.BLOCK_LIMIT_TOTAL, tool_iterations=7, total_tokens=45000
    )
    assert prompt is None
    assert p.lines("stop.jsonl") == [
        {
            "event": "Stop",
            "reason": "block_limit_total",
            "tool_iterations": 7,
            "total_tokens": 45000,
            "cwd": p.cwd,
        }
    ]
    text = "\n".join(p.logs)
    assert "unrecognised Stop action 'signal', treated as continue" in text
    assert "exit 2 exited with code 2" in text


def test_no_hooks_file_means_no_hook_work_and_stderr_is_forwarded(tmp_path: Path) -> None:
    # Count process creations with an audit hook in a fresh interpreter (audit hooks cannot
    # be removed, so not in this one): none without hooks.toml, some with one. The child's
    # stderr also shows that a hook's stderr is inherited (forwarded).
    code = textwrap.dedent(
        """
        import sys, trio
        from pathlib import Path
        spawns = []
        sys.addaudithook(
            lambda ev, args: spawns.append(ev)
            if ev in ("subprocess.Popen", "os.posix_spawn", "os.fork", "os.exec") else None
        )
        from forgeflare.hooks import build_pipeline, ExitReason, NoHooks
        async def main(p):
            await p.execution_start(prompt="hi")
            await p.step_start(step=1)
            await p.pre_tool_use(tool="Bash", input={"command": "ls"}, tool_iterations=0)
            await p.post_tool_use(tool="Bash", input={}, result="", is_error=False,
                                  tool_iterations=0)
            await p.step_end(step=1, stop_reason="end_turn")
            await p.stop(reason=ExitReason.END_TURN, tool_iterations=0, total_tokens=0)
        for project in sys.argv[1:]:
            del spawns[:]
            p = build_pipeline(project_dir=Path(project), log=lambda m: print(m, file=sys.stderr))
            trio.run(main, p)
            print(type(p).__name__, len(spawns))
        """
    )
    configured = tmp_path / "configured"
    (configured / ".forgeflare").mkdir(parents=True)
    (configured / ".forgeflare" / "hooks.toml").write_text(
        hooks(GUARD, {"event": "Stop", "command": "echo diagnostics-from-hook >&2; echo {}"})
    )
    bare = tmp_path / "bare"
    bare.mkdir()
    out = subprocess.run(
        [sys.executable, "-c", code, str(bare), str(configured)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    first, second = out.stdout.splitlines()
    assert first == "NoHooks 0"
    assert list(bare.iterdir()) == []  # no file either
    name, count = second.split()
    assert name == "HookDispatcher"
    assert int(count) == 2  # the guard and the Stop hook
    assert "diagnostics-from-hook" in out.stderr


def test_build_pipeline_no_hooks(tmp_path: Path) -> None:
    assert isinstance(build_pipeline(project_dir=tmp_path, log=print), NoHooks)
    (tmp_path / "empty.toml").write_text("")
    assert isinstance(
        build_pipeline(project_dir=tmp_path, hooks_file=tmp_path / "empty.toml", log=print),
        NoHooks,
    )
    py = make_hook(lambda step: None, "StepStart")
    assert isinstance(
        build_pipeline(project_dir=tmp_path, python_hooks=[py], log=print), HookDispatcher
    )


# -- Python hooks on the same pipeline ------------------------------------------------------


async def test_python_deny_blocks_after_shell_guards(tmp_path: Path) -> None:
    calls: list[str] = []

    def deny_push(input: dict[str, Any]) -> Block | None:
        calls.append(input["command"])
        if "push" in input["command"]:
            return Block("no pushes")
        return None

    py = make_hook(deny_push, "PreToolUse", match="Bash", name="deny_push")
    p = Project(tmp_path, hooks(GUARD, OBSERVE), (py,))
    result = await p.pipeline.pre_tool_use(
        tool="Bash", input={"command": "git push"}, tool_iterations=0
    )
    assert result == Block(message="blocked by deny_push: no pushes", blocked_by="deny_push",
                           reason="no pushes")  # fmt: skip
    assert p.lines("observed.jsonl")[0]["blocked_by"] == "deny_push"
    # A shell guard's block wins before Python hooks are asked.
    await p.pipeline.pre_tool_use(tool="Bash", input={"command": "rm -rf /"}, tool_iterations=0)
    assert calls == ["git push"]


async def test_python_allow_with_update_chains(tmp_path: Path) -> None:
    async def add_flag(input: dict[str, Any]) -> Allow:
        return Allow(updated_input={**input, "command": input["command"] + " -q"})

    def add_timeout(input: dict[str, Any]) -> Allow:
        return Allow(updated_input={**input, "timeout": 10})

    chain = (
        make_hook(add_flag, "PreToolUse", name="add_flag"),
        make_hook(add_timeout, "PreToolUse", name="add_timeout"),
    )
    p = Project(tmp_path, hooks(OBSERVE), chain)
    result = await p.pipeline.pre_tool_use(
        tool="Bash", input={"command": "pytest"}, tool_iterations=0
    )
    assert result == Allow({"command": "pytest -q", "timeout": 10})
    assert p.lines("observed.jsonl")[0]["input"] == {"command": "pytest -q", "timeout": 10}
    first, second, _observe = p.audit()
    assert first["input"] == {"command": "pytest"}  # the original stays in the audit trail
    assert first["updated_input"] == {"command": "pytest -q"}
    assert second["input"] == {"command": "pytest -q"}


async def test_python_hook_exception_in_guard_fails_closed(tmp_path: Path) -> None:
    def broken(tool: str) -> None:
        raise RuntimeError("boom")

    def wrong_type(tool: str) -> str:
        return "allow"

    p = Project(tmp_path, "", (make_hook(broken, "PreToolUse", name="broken"),))
    result = await p.pipeline.pre_tool_use(tool="Read", input={}, tool_iterations=0)
    assert isinstance(result, Block)
    assert result.message == (
        "hook failed: broken raised RuntimeError: boom (tool blocked by default)"
    )
    p = Project(tmp_path, "", (make_hook(wrong_type, "PreToolUse", name="wrong"),))
    result = await p.pipeline.pre_tool_use(tool="Read", input={}, tool_iterations=0)
    assert isinstance(result, Block)
    assert "returned str, expected Allow, Block or None" in result.message


async def test_python_post_signal(tmp_path: Path) -> None:
    seen: list[tuple[Signal, ...]] = []

    def named(result: str) -> Signal:
        return Signal("tests_pass")

    def looks(signals: tuple[Signal, ...]) -> None:
        seen.append(signals)

    p = Project(
        tmp_path,
        hooks(_post("shell_first")),
        (make_hook(named, "PostToolUse"), make_hook(looks, "PostToolUse")),
    )
    res = await p.pipeline.post_tool_use(
        tool="Bash", input={}, result="0 failed", is_error=False, tool_iterations=2
    )
    assert res == Signal(signal="shell_first", reason="clean test run")  # shell hooks first
    assert seen == [(res, Signal("tests_pass"))]  # later hooks see the signals so far
    state = read_convergence(tmp_path / ".forgeflare" / "convergence.json")
    assert state is not None
    assert [o.signal for o in state.observations] == ["shell_first", "tests_pass"]


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
async def test_deprecated_hook_outcome_post_stop_is_a_signal(tmp_path: Path) -> None:
    def named(result: str) -> HookOutcome:
        return HookOutcome("stop", reason="tests_pass")

    def unnamed(tool: str) -> HookOutcome:
        return HookOutcome("stop")

    p = Project(
        tmp_path,
        hooks(_post("shell_first")),
        (make_hook(named, "PostToolUse"), make_hook(unnamed, "PostToolUse", name="unnamed")),
    )
    res = await p.pipeline.post_tool_use(
        tool="Bash", input={}, result="0 failed", is_error=False, tool_iterations=2
    )
    assert res == Signal(signal="shell_first", reason="clean test run")  # shell hooks first
    state = read_convergence(tmp_path / ".forgeflare" / "convergence.json")
    assert state is not None
    assert [o.signal for o in state.observations] == ["shell_first", "tests_pass", "unnamed"]


async def test_python_stop_continue_returns_prompt(tmp_path: Path) -> None:
    seen: list[Any] = []

    def observe(reason: str, total_tokens: int) -> None:
        seen.append((reason, total_tokens))

    def keep_going(reason: str) -> Continue | None:
        if reason == "end_turn":
            return Continue(prompt="The plan has unchecked items; continue.")
        return None

    def never_reached() -> Continue:
        return Continue("second")

    p = Project(
        tmp_path,
        "",
        (
            make_hook(observe, "Stop"),
            make_hook(keep_going, "Stop"),
            make_hook(never_reached, "Stop"),
        ),
    )
    prompt = await p.pipeline.stop(reason=ExitReason.END_TURN, tool_iterations=1, total_tokens=9)
    assert prompt == "The plan has unchecked items; continue."
    assert seen == [("end_turn", 9)]
    assert await p.pipeline.stop(
        reason=ExitReason.API_ERROR, tool_iterations=1, total_tokens=9
    ) == "second"  # fmt: skip


async def test_python_observe_events_never_fatal(tmp_path: Path) -> None:
    seen: list[Any] = []

    def boom(prompt: str) -> None:
        raise ValueError("bad hook")

    async def step(step: int, stop_reason: str) -> None:
        seen.append((step, stop_reason))

    def failed(error: BaseException) -> None:
        seen.append(repr(error))

    p = Project(
        tmp_path,
        "",
        (
            make_hook(boom, "ExecutionStart", name="boom"),
            make_hook(step, "StepEnd"),
            make_hook(failed, "AgentFailed"),
        ),
    )
    await p.pipeline.execution_start(prompt="go")
    await p.pipeline.step_start(step=1)
    await p.pipeline.step_end(step=1, stop_reason="tool_use")
    await p.pipeline.agent_failed(error=KeyError("k"), reason="internal_error")
    assert seen == [(1, "tool_use"), "KeyError('k')"]
    assert any("boom raised ValueError: bad hook" in line for line in p.logs)


async def test_audit_trail(tmp_path: Path) -> None:
    p = Project(
        tmp_path, hooks(GUARD, OBSERVE, _post("done"), {"event": "Stop", "command": "exit 1"})
    )
    await p.pipeline.pre_tool_use(tool="Bash", input={"command": "rm -rf /"}, tool_iterations=1)
    await p.pipeline.post_tool_use(
        tool="Bash", input={}, result="0 failed", is_error=False, tool_iterations=1
    )
    await p.pipeline.stop(reason=ExitReason.END_TURN, tool_iterations=1, total_tokens=5)
    records = p.audit()
    assert [(r["event"], r["phase"], r["hook"], r["outcome"]) for r in records] == [
        ("PreToolUse", "guard", "ralph-guard.sh", "block"),
        ("PreToolUse", "observe", "record-stdin.sh observed.jsonl", "continue"),
        ("PostToolUse", None, "convergence-check.py done", "signal"),
        ("Stop", None, "exit 1", "crash"),
    ]
    for r in records:
        assert {"event", "phase", "hook", "tool", "duration_ms", "outcome"} <= set(r)
        assert r["duration_ms"] >= 0
    assert records[0]["tool"] == "Bash"
    assert records[3]["tool"] is None
    assert records[3]["exit_code"] == 1


async def test_first_signal_creates_the_forgeflare_directory(tmp_path: Path) -> None:
    project = tmp_path / "fresh"
    project.mkdir()
    done = make_hook(lambda: Signal("done", "done"), "PostToolUse", name="done")
    pipeline = build_pipeline(project_dir=project, python_hooks=[done], log=print)
    assert not (project / ".forgeflare").exists()
    res = await pipeline.post_tool_use(
        tool="Read", input={}, result="", is_error=False, tool_iterations=1
    )
    assert res == Signal(signal="done", reason="done")
    state = read_convergence(project / ".forgeflare" / "convergence.json")
    assert state is not None
    assert [o.signal for o in state.observations] == ["done"]


def test_run_pipeline_without_hooks_checks_bash_with_no_process_and_no_file(
    tmp_path: Path,
) -> None:
    # `forgeflare run`'s collection with nothing configured: only the built-ins, in-process.
    code = textwrap.dedent(
        """
        import sys, trio
        from pathlib import Path
        spawns = []
        sys.addaudithook(
            lambda ev, args: spawns.append(ev)
            if ev in ("subprocess.Popen", "os.posix_spawn", "os.fork", "os.exec") else None
        )
        from forgeflare.agent import builtin_hooks
        from forgeflare.hooks import build_pipeline, collect_agent_hooks
        project = Path(sys.argv[1])
        hooks = collect_agent_hooks(project_dir=project, builtins=builtin_hooks())
        p = build_pipeline(project_dir=project, hooks=hooks, audit_path=project / "a.jsonl",
                           log=print)
        async def main():
            ok = await p.pre_tool_use(tool="Bash", input={"command": "ls"}, tool_iterations=0)
            await p.post_tool_use(tool="Bash", input={}, result="", is_error=False,
                                  tool_iterations=0)
            bad = await p.pre_tool_use(tool="Bash", input={"command": "rm -rf /"},
                                       tool_iterations=0)
            print(type(ok).__name__, type(bad).__name__, bad.blocked_by, len(spawns))
        trio.run(main)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert out.stdout.split() == ["Allow", "Block", "forgeflare:bash-check", "0"]
    # Only the block is audited: a built-in with no opinion leaves no record.
    [record] = [json.loads(line) for line in (tmp_path / "a.jsonl").read_text().splitlines()]
    assert (record["hook"], record["kind"], record["outcome"]) == (
        "forgeflare:bash-check",
        "builtin",
        "block",
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.jsonl"]
