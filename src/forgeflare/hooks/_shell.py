"""Running one shell hook process: ``bash -c COMMAND``, JSON in, JSON out.

Through :func:`forgeflare.platform._process.run_child`: the hook runs in its own process
group; at the timeout the whole group is SIGKILLed at once (grace 0), so a hook that ignores
SIGTERM cannot
overstay it. When the hook exits on its own, whatever it left in its group is killed too, and
reading stops once the hook has exited and its pipe is drained: a background grandchild
holding stdout open (``sleep 600 &``) does not keep the agent waiting for EOF. A hook printing
more than :data:`MAX_STDOUT_BYTES` is killed at once: it would block on a full pipe otherwise.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

import trio

from forgeflare.hooks._protocol import ProcessOutcome
from forgeflare.platform import run_child

__all__ = ["MAX_STDOUT_BYTES", "run_hook_process"]

# Every descendant of one hook call carries this variable: one that left the group (a new session)
# is ended with the hook, like the agent's (it would hold the agent's stderr open otherwise).
_MARKER_ENV = "FORGEFLARE_HOOK_CALL"

MAX_STDOUT_BYTES = 1 << 20
"""A hook printing more than 1 MiB is broken; its output is not buffered beyond this."""


async def run_hook_process(
    command: str, payload: bytes, *, cwd: Path, timeout_ms: int
) -> ProcessOutcome:
    """Run ``bash -c command`` with ``payload`` on stdin; never raises for a hook's failure.

    stderr is inherited, so a hook's diagnostics reach the agent's stderr. Cancellation from
    outside is honoured after the process group is killed and the hook reaped.
    """
    out = bytearray()
    too_large = trio.Event()

    def collect(chunk: bytes) -> None:
        if too_large.is_set():
            return
        out.extend(chunk)
        if len(out) > MAX_STDOUT_BYTES:
            too_large.set()  # the kill event: the group is SIGKILLed at once

    token = secrets.token_hex(8)
    try:
        result = await run_child(
            ["bash", "-c", command],
            cwd=cwd,
            # A Python hook importing a module beside it must not write __pycache__ there: the
            # hook's trust covers its directory, so that write would refuse its next call.
            env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1", _MARKER_ENV: token},
            marker=(_MARKER_ENV, token),
            stdin=payload,
            on_output=collect,
            stderr=None,
            timeout=timeout_ms / 1000,
            grace=0,
            kill=too_large,
            drain=0,
        )
    except OSError as exc:
        return ProcessOutcome("spawn_error", detail=f"could not start bash: {exc}")
    if too_large.is_set():
        return ProcessOutcome("too_large", detail=f"stdout exceeded {MAX_STDOUT_BYTES} bytes")
    if result.timed_out:
        return ProcessOutcome("timeout")
    return ProcessOutcome("exited", returncode=result.returncode, stdout=bytes(out))
