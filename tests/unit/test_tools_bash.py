"""The Bash tool: streaming, exit codes, timeout and cancellation ending the whole group."""

from __future__ import annotations

import functools
import os
import re
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import trio
from hypothesis import given, settings
from hypothesis import strategies as st

from forgeflare.agent.tools import MAX_BASH_OUTPUT, ToolOutput, cap_output, run_bash
from platform_support import alive, live_group_members
from tool_support import run_tool

# The upper bound of every wait below, reached only on failure: generous for a loaded machine,
# far below the 600 s the commands' children sleep. None of them sleeps for a fixed time.
WAIT = 60.0


def bash(command: str, cwd: Path) -> ToolOutput:
    return run_tool("Bash", {"command": command}, cwd=cwd)


def run_bash_sync(command: str, **options: Any) -> ToolOutput:
    return trio.run(functools.partial(run_bash, command, **options))


def group_gone(pgid: int) -> bool:
    """Poll (bounded) until no live process is left in group ``pgid``.

    ``os.killpg(pgid, 0)`` raising ProcessLookupError is the proof; a killed orphan stays a
    zombie until init reaps it, which some container inits do only every second or so, so a
    group whose members are all zombies counts as gone too.
    """
    end = time.monotonic() + WAIT
    while time.monotonic() < end:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        if live_group_members(pgid) == []:
            return True
        time.sleep(0.01)
    return False


class Collector:
    """An on_output callback that records chunks and signals when ``marker`` arrived."""

    def __init__(self, marker: str) -> None:
        self.chunks: list[str] = []
        self.marker = marker
        self.seen = threading.Event()

    def __call__(self, chunk: str) -> None:
        self.chunks.append(chunk)
        if self.marker in "".join(self.chunks):
            self.seen.set()

    def pgid(self) -> int:
        match = re.search(r"pgid=(\d+)", "".join(self.chunks))
        assert match is not None
        return int(match.group(1))


class Runner(threading.Thread):
    """Runs one command in its own trio run in a thread, so the test can watch it."""

    def __init__(self, command: str, cwd: Path, marker: str, **options: float) -> None:
        super().__init__(daemon=True)
        self.command, self.cwd, self.options = command, cwd, options
        self.output = Collector(marker)
        self.result: ToolOutput | None = None

    def run(self) -> None:
        self.result = run_bash_sync(
            self.command, cwd=self.cwd, on_output=self.output, **self.options
        )


def test_stdout_and_stderr_merged(tmp_path: Path) -> None:
    assert bash("echo out; echo err >&2; echo out2", tmp_path) == ToolOutput("out\nerr\nout2")


def test_runs_in_cwd_with_no_stdin(tmp_path: Path) -> None:
    assert bash("pwd", tmp_path).content == str(tmp_path)
    assert bash("cat", tmp_path) == ToolOutput("(no output)")


def test_nonzero_exit_is_an_error_with_output(tmp_path: Path) -> None:
    assert bash("echo partial; exit 3", tmp_path) == ToolOutput("partial\n[exit code 3]", True)
    assert bash("exit 1", tmp_path) == ToolOutput("[exit code 1]", True)


def test_killed_by_signal(tmp_path: Path) -> None:
    assert bash("kill -KILL $$", tmp_path) == ToolOutput("[command killed by SIGKILL]", True)


def test_denied_command_never_runs(tmp_path: Path) -> None:
    out = bash("touch ran; rm -rf /", tmp_path)
    assert out.is_error
    assert out.content.startswith("Command denied by forgeflare's safety guard: ")
    assert not (tmp_path / "ran").exists()


def test_bad_input(tmp_path: Path) -> None:
    assert run_tool("Bash", {}, cwd=tmp_path) == ToolOutput(
        "Bash: missing required field 'command'", True
    )
    assert run_tool("Bash", {"command": "  "}, cwd=tmp_path).is_error
    assert bash("true", tmp_path / "missing").is_error


def test_streams_before_the_command_ends(tmp_path: Path) -> None:
    fifo = tmp_path / "release"
    os.mkfifo(fifo)
    runner = Runner(f"echo started; read line < {fifo}; echo got $line", tmp_path, "started")
    runner.start()
    assert runner.output.seen.wait(WAIT), "no output streamed while the command ran"
    assert runner.is_alive()
    assert runner.result is None
    with open(fifo, "w") as fh:  # blocks until bash opens its end: no race
        fh.write("go\n")
    runner.join(WAIT)
    assert runner.result == ToolOutput("started\ngot go")
    assert "".join(runner.output.chunks) == "started\ngot go\n"


def test_timeout_keeps_partial_output_and_kills_the_group(tmp_path: Path) -> None:
    out = run_bash_sync("echo pgid=$$; sleep 600 & wait", cwd=tmp_path, timeout=0.3)
    assert out.is_error
    assert out.content.startswith("pgid=")
    assert "[command timed out after 0.3 s; its process group was killed" in out.content
    pgid = int(out.content.split("\n")[0].removeprefix("pgid="))
    assert group_gone(pgid)


def test_timeout_escalates_to_kill_when_term_is_ignored(tmp_path: Path) -> None:
    # An ignored signal stays ignored in children: sleep ignores TERM too.
    command = "trap '' TERM; echo pgid=$$; sleep 600 & sleep 600"
    out = run_bash_sync(command, cwd=tmp_path, timeout=0.3, kill_grace=0.2)
    assert out.is_error
    assert "timed out" in out.content
    assert group_gone(int(out.content.split("\n")[0].removeprefix("pgid=")))


def test_background_jobs_do_not_outlive_the_command(tmp_path: Path) -> None:
    start = time.monotonic()
    out = bash("echo pgid=$$; sleep 600 & echo started", tmp_path)
    assert out.content.endswith("started")
    assert not out.is_error
    assert group_gone(int(out.content.split("\n")[0].removeprefix("pgid=")))
    assert time.monotonic() - start < WAIT


async def _cancel_once_seen(command: str, cwd: Path, output: Collector, **options: Any) -> None:
    """Run ``command`` as the turn loop does, cancel it once ``output`` saw its marker."""

    async def call() -> None:
        await run_bash(command, cwd=cwd, on_output=output, **options)
        raise AssertionError("run_bash returned although cancelled")

    with trio.fail_after(WAIT):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(call)
            while not output.seen.is_set():
                await trio.sleep(0.01)
            nursery.cancel_scope.cancel()


async def test_cancellation_ends_the_group_and_notes_it(tmp_path: Path) -> None:
    output = Collector("pgid=")
    await _cancel_once_seen("echo pgid=$$; sleep 600 & sleep 600", tmp_path, output)
    assert "terminated because the agent is stopping" in "".join(output.chunks)
    assert group_gone(output.pgid())


async def test_cancellation_kills_what_ignores_term(tmp_path: Path) -> None:
    output = Collector("pgid=")
    command = "trap '' TERM; echo pgid=$$; sleep 600"
    await _cancel_once_seen(command, tmp_path, output, kill_grace=0.2)
    assert group_gone(output.pgid())


def test_a_descendant_that_left_the_group_ends_with_the_command(tmp_path: Path) -> None:
    out = bash("setsid sleep 600 & echo child=$!", tmp_path)
    pid = int(out.content.removeprefix("child="))
    assert pid_gone(pid)


def pid_gone(pid: int) -> bool:
    """Poll (bounded) until ``pid`` is gone or a zombie."""
    end = time.monotonic() + WAIT
    while time.monotonic() < end:
        if not alive(pid):
            return True
        time.sleep(0.01)
    return False


def test_output_capped_for_the_model_but_streamed_whole(tmp_path: Path) -> None:
    size = 3 * MAX_BASH_OUTPUT
    runner = Runner(f"head -c {size} /dev/zero | tr '\\0' a; echo; echo END", tmp_path, "END")
    runner.run()
    assert runner.result is not None
    content = runner.result.content
    assert len(content) < MAX_BASH_OUTPUT + 200
    assert "characters of output omitted" in content
    assert content.endswith("END")
    assert sum(len(chunk) for chunk in runner.output.chunks) == size + len("\nEND\n")


def test_undecodable_output_is_replaced(tmp_path: Path) -> None:
    assert bash("printf 'caf\\351\\n'", tmp_path) == ToolOutput("caf\ufffd")


@pytest.mark.parametrize("limit", [10, 11, 1000])
def test_cap_output_short_text_unchanged(limit: int) -> None:
    assert cap_output("x" * limit, limit) == "x" * limit


@settings(max_examples=40)
@given(text=st.text(max_size=300), limit=st.integers(min_value=2, max_value=120))
def test_cap_output_keeps_head_and_tail(text: str, limit: int) -> None:
    capped = cap_output(text, limit)
    if len(text) <= limit:
        assert capped == text
        return
    head, tail = limit // 2, limit - limit // 2
    assert capped.startswith(text[:head])
    assert capped.endswith(text[-tail:])
    omitted = len(text) - limit
    assert f"[... {omitted:,} characters of output omitted ...]" in capped


@settings(max_examples=40)
@given(chunks=st.lists(st.text(max_size=40), max_size=30), limit=st.integers(2, 100))
def test_cap_output_is_chunking_independent(chunks: list[str], limit: int) -> None:
    from forgeflare.agent.tools._bash import _HeadTail

    buffer = _HeadTail(limit)
    for chunk in chunks:
        buffer.add(chunk)
    assert buffer.render() == cap_output("".join(chunks), limit)
