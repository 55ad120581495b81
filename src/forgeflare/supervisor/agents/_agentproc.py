"""Run one child (the agent or a lifecycle hook) under the loop's Ctrl+C / SIGTERM control.

A thin use of :func:`forgeflare.platform._process.run_child`: the child runs in its own
process group (so Ctrl+C on the terminal reaches only the supervisor, which decides what to
forward), its
stdin is fed from bytes, its stdout and stderr are one stream handed line by line to a
callback, and a first stop request ends it with the grace, a second at once.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

import trio

from forgeflare.platform import ChildResult, exit_status, run_child

__all__ = ["ChildResult", "StopControl", "exit_status", "supervise"]

# After the child is gone, how long its output may keep flowing from descendants that left
# its group (a new session) before we stop reading: they can hold the pipe open forever.
_DRAIN_BOUND = 2.0


class StopControl:
    """Ctrl+C / SIGTERM state shared by the loop and every child it runs.

    ``stop`` is set by the first signal (terminate children gracefully, then finish as
    ``manual``); ``kill`` by the second (kill at once).
    """

    def __init__(self) -> None:
        self.stop = trio.Event()
        self.kill = trio.Event()
        self.signal_name: str | None = None
        self._later: list[StopControl] = []
        self._scoped: list[StopControl] = []

    def request(self, name: str) -> None:
        """Record one stop request (a signal named ``name``)."""
        for view in self._later:
            view.stop.set()
            view.kill.set()
        for view in self._scoped:
            view.request(name)
        if self.stop.is_set():
            self.kill.set()
        else:
            self.signal_name = name
            self.stop.set()

    @contextlib.contextmanager
    def scoped(self) -> Iterator[StopControl]:
        """A control that gets every request made to this one, as it is made, and that can
        also be stopped alone (an agent ended for the budget, while the loop goes on)."""
        view = StopControl()
        if self.stop.is_set():
            view.stop.set()
        if self.kill.is_set():
            view.kill.set()
        self._scoped.append(view)
        try:
            yield view
        finally:
            self._scoped.remove(view)

    def escalated(self) -> StopControl:
        """A control that sees only the requests made *after* this call (the finished hook).

        After a double Ctrl+C both events here are set, yet the ``finished`` hook must still
        run to its end within its own timeout; a Ctrl+C while it runs ends it at once.
        """
        view = StopControl()
        self._later.append(view)
        return view


async def supervise(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    stdin: bytes = b"",
    timeout: float | None = None,
    grace: float = 10.0,
    stop: StopControl | None = None,
    on_line: Callable[[bytes], None] = lambda _line: None,
    on_start: Callable[[int], None] = lambda _pid: None,
    marker: tuple[str, str] | None = None,
    pass_fds: Sequence[int] = (),
) -> ChildResult:
    """Run ``argv`` to its end as described in the module docstring.

    ``timeout`` of ``None`` or 0 means no deadline. ``on_start`` gets the child's pid (its
    process group id) as soon as it runs; ``marker`` finds descendants that left the group.
    ``pass_fds`` are inherited by the child. Raises ``OSError`` when the program cannot start.
    """
    return await run_child(
        argv,
        stop=stop.stop if stop is not None else None,
        cwd=cwd,
        env=env,
        kill=stop.kill if stop is not None else None,
        stdin=stdin,
        on_output=on_line,
        on_start=lambda proc: on_start(proc.pid),
        lines=True,
        timeout=timeout,
        drain=_DRAIN_BOUND,
        grace=grace,
        marker=marker,
        pass_fds=pass_fds,
        # A supervisor killed with -9 must not leave its agent working on unsupervised.
        die_with_parent=True,
    )
