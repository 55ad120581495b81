"""Running one shell hook process: ``bash -c COMMAND``, JSON in, JSON out.

The process gets its own session (so its own process group). The timeout covers spawn,
write and read; when it expires the whole group is SIGKILLed at once, so a hook that ignores
SIGTERM cannot overstay it. When the hook exits on its own, whatever it left in its group is
killed too, and reading stops once the hook has exited and its pipe is drained: a background
grandchild holding stdout open (``sleep 600 &``) does not keep the agent waiting for EOF.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import trio

from forgeflare._process import kill_group
from forgeflare.hooks._protocol import ProcessOutcome

__all__ = ["MAX_STDOUT_BYTES", "run_hook_process"]

MAX_STDOUT_BYTES = 1 << 20
"""A hook printing more than 1 MiB is broken; its output is not buffered beyond this."""

_CHUNK = 65536


def _drain(fd: int, out: bytearray) -> bool:
    """Read what is already in the pipe without waiting. False if it went over the cap."""
    while True:
        try:
            chunk = os.read(fd, _CHUNK)
        except OSError:  # BlockingIOError: the pipe is empty for now
            return True
        if not chunk:
            return True
        out += chunk
        if len(out) > MAX_STDOUT_BYTES:
            return False


def _write_now(fd: int, payload: bytes) -> int:
    """Write what the pipe takes without waiting; how many bytes are done."""
    try:
        return os.write(fd, payload)
    except BlockingIOError:
        return 0
    except OSError:  # EPIPE: the hook exited without reading its input, which is allowed
        return len(payload)


async def _exchange(proc: trio.Process, payload: bytes) -> tuple[bytes, bool]:
    """Write ``payload``, read stdout until the hook exits; returns (stdout, too_large)."""
    stdin, stdout = proc.stdin, proc.stdout
    assert isinstance(stdin, trio.lowlevel.FdStream)
    assert isinstance(stdout, trio.lowlevel.FdStream)
    out = bytearray()
    too_large = False
    # Most payloads fit the pipe buffer: write them at once, no task needed.
    rest = payload[_write_now(stdin.fileno(), payload) :] if payload else b""

    async def write() -> None:
        try:
            await stdin.send_all(rest)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass  # the hook exited without reading its input: allowed
        finally:
            await stdin.aclose()

    async def read() -> None:
        nonlocal too_large
        while True:
            chunk = await stdout.receive_some(_CHUNK)
            if not chunk:
                return
            out.extend(chunk)
            if len(out) > MAX_STDOUT_BYTES:
                too_large = True
                kill_group(proc.pid)  # it would block on a full pipe otherwise
                return

    async with trio.open_nursery() as nursery:
        if rest:
            nursery.start_soon(write)
        else:
            await stdin.aclose()
        nursery.start_soon(read)
        await proc.wait()
        # The hook has exited; everything it wrote is in the pipe already. Kill what it
        # left behind and stop waiting for EOF, which a grandchild could withhold forever.
        kill_group(proc.pid)
        nursery.cancel_scope.cancel()
    if not too_large:
        too_large = not _drain(stdout.fileno(), out)
    return bytes(out), too_large


async def run_hook_process(
    command: str, payload: bytes, *, cwd: Path, timeout_ms: int
) -> ProcessOutcome:
    """Run ``bash -c command`` with ``payload`` on stdin; never raises for a hook's failure.

    stderr is inherited, so a hook's diagnostics reach the agent's stderr. Cancellation from
    outside is honoured after the process group is killed and the hook reaped.
    """
    proc: trio.Process | None = None
    outcome: ProcessOutcome | None = None
    try:
        with trio.move_on_after(timeout_ms / 1000):
            try:
                proc = await trio.lowlevel.open_process(
                    ["bash", "-c", command],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    cwd=cwd,
                    start_new_session=True,
                )
            except OSError as exc:
                return ProcessOutcome("spawn_error", detail=f"could not start bash: {exc}")
            stdout, too_large = await _exchange(proc, payload)
            if too_large:
                outcome = ProcessOutcome(
                    "too_large", detail=f"stdout exceeded {MAX_STDOUT_BYTES} bytes"
                )
            else:
                outcome = ProcessOutcome("exited", returncode=proc.returncode, stdout=stdout)
        if outcome is None:
            outcome = ProcessOutcome("timeout")
        return outcome
    finally:
        if proc is not None:
            with trio.CancelScope(shield=True):
                if proc.returncode is None:  # timed out or cancelled: the hook is still there
                    kill_group(proc.pid)
                    await proc.wait()
                for stream in (proc.stdin, proc.stdout):
                    if stream is not None:
                        await stream.aclose()
