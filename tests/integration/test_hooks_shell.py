"""Hook processes: stray children, SIGTERM-ignoring hooks, huge output, unread input."""

from __future__ import annotations

import json
from pathlib import Path

import trio

from forgeflare.hooks import (
    MAX_STDOUT_BYTES,
    Allow,
    Block,
    HookConfig,
    HookDispatcher,
    run_hook_process,
)
from platform_support import live_group_members

ALLOW = """echo '{"action":"allow"}'"""


def _group_members(pgid: int) -> list[int]:
    """Live (non-zombie) processes in process group ``pgid``."""
    return live_group_members(pgid)


async def _assert_group_gone(pgid: int) -> None:
    # SIGKILL is delivered asynchronously; poll (bounded, generously: the machine may be
    # loaded) until the kernel has done it.
    with trio.fail_after(120):
        while _group_members(pgid):
            await trio.sleep(0.01)


def _pipeline(tmp_path: Path, command: str, timeout_ms: int = 5000) -> HookDispatcher:
    return HookDispatcher(
        project_dir=tmp_path,
        shell_hooks=[HookConfig(event="PreToolUse", command=command, timeout_ms=timeout_ms)],
        log=lambda line: None,
    )


async def test_background_child_holding_stdout_does_not_stall(tmp_path: Path) -> None:
    # The grandchild keeps stdout open for 600 s; the hook itself exits at once. Its answer
    # counts (allow, not the timeout's block), and the grandchild is killed with the group.
    # The timeout is generous (a loaded machine may take seconds to start the hook) and far
    # below the grandchild's 600 s, so a stall shows as a timeout, not as a hang.
    command = f"echo $$ > pgid; sleep 600 & echo $! > child; {ALLOW}"
    with trio.fail_after(200):  # a bound, not a timing claim
        result = await _pipeline(tmp_path, command, timeout_ms=120_000).pre_tool_use(
            tool="Bash", input={}, tool_iterations=0
        )
    assert result == Allow({})
    await _assert_group_gone(int((tmp_path / "pgid").read_text()))
    child = int((tmp_path / "child").read_text())
    assert child not in _group_members(int((tmp_path / "pgid").read_text()))


async def test_sigterm_ignoring_hook_is_killed_at_timeout(tmp_path: Path) -> None:
    command = "trap '' TERM; echo $$ > pgid; sleep 600 & wait; sleep 600"
    with trio.fail_after(120):  # a bound far below the hook's own 600 s sleeps
        result = await _pipeline(tmp_path, command, timeout_ms=300).pre_tool_use(
            tool="Bash", input={}, tool_iterations=0
        )
    assert isinstance(result, Block)
    assert result.message.endswith("timed out after 300ms (tool blocked by default)")
    await _assert_group_gone(int((tmp_path / "pgid").read_text()))


async def test_stdout_over_one_mib_is_a_failure_not_a_blow_up(tmp_path: Path) -> None:
    # `yes` never stops: the cap, not the (long) timeout, ends it.
    with trio.fail_after(120):  # below the 600 s timeout
        out = await run_hook_process("yes", b"{}", cwd=tmp_path, timeout_ms=600_000)
    assert out.kind == "too_large"
    result = await _pipeline(tmp_path, "head -c 1100000 /dev/zero").pre_tool_use(
        tool="Bash", input={}, tool_iterations=0
    )
    assert isinstance(result, Block)
    # More than the output limit is "output too large", not "invalid JSON" (issue 12).
    assert " output too large (" in result.message
    assert result.message.endswith(" (tool blocked by default)")


async def test_output_just_under_the_cap_is_read_whole(tmp_path: Path) -> None:
    pad = MAX_STDOUT_BYTES - 100
    command = (
        f"""printf '{{"action":"allow","pad":"'; head -c {pad} /dev/zero | tr '\\0' a; """
        """printf '"}'"""
    )
    out = await run_hook_process(command, b"", cwd=tmp_path, timeout_ms=10_000)
    assert out.kind == "exited"
    assert json.loads(out.stdout)["action"] == "allow"


async def test_hook_that_does_not_read_stdin(tmp_path: Path) -> None:
    big = {"content": "x" * 2_000_000}  # far more than a pipe buffer
    result = await _pipeline(tmp_path, ALLOW).pre_tool_use(
        tool="Edit", input=big, tool_iterations=0
    )
    assert result == Allow(big)


async def test_hook_that_reads_large_stdin_and_writes_early(tmp_path: Path) -> None:
    # Writes its answer before reading: the runner reads and writes concurrently.
    command = f"{ALLOW}; wc -c > size"
    big = {"content": "y" * 500_000}
    result = await _pipeline(tmp_path, command).pre_tool_use(
        tool="Edit", input=big, tool_iterations=0
    )
    assert result == Allow(big)
    assert int((tmp_path / "size").read_text()) > 500_000


async def test_runs_in_project_dir_with_bash(tmp_path: Path) -> None:
    out = await run_hook_process(
        'echo "{\\"cwd\\": \\"$PWD\\", \\"shell\\": \\"${BASH_VERSION:+bash}\\"}"',
        b"",
        cwd=tmp_path,
        timeout_ms=5000,
    )
    assert json.loads(out.stdout) == {"cwd": str(tmp_path), "shell": "bash"}


async def test_cancellation_kills_the_hook(tmp_path: Path) -> None:
    with trio.move_on_after(0.3):
        await run_hook_process("echo $$ > pgid; sleep 30", b"", cwd=tmp_path, timeout_ms=60_000)
    await _assert_group_gone(int((tmp_path / "pgid").read_text()))
