"""``forgeflare ARGS`` through the real entry point, in the test process.

A process start costs about 0.4 s of CPU (trio, httpx, pydantic, rich, typer) before any work;
a test whose point is a command's output and exit status, not the process, runs
:func:`forgeflare.cli.main` here instead and gets what ``subprocess.run(..., text=True)`` gives.
Each command keeps at least one test that starts it as a real process: what only a process
shows (the console script, ``forbid_dumps`` and the key channel's move of secrets at a process's
start, signals, a closed pipe) stays there.
"""

from __future__ import annotations

import io
import logging
import os
import signal
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from forgeflare.cli import main

__all__ = ["forgeflare_here", "run_cli"]

# As a child's pipes: stdout strict (UTF-8 locale), stderr backslashreplace (Python's default).
_ENCODING = "utf-8"


def _stream(data: bytes, *, errors: str) -> io.TextIOWrapper:
    """A text stream over bytes, with the ``.buffer`` a process's standard streams have."""
    return io.TextIOWrapper(io.BytesIO(data), encoding=_ENCODING, errors=errors, write_through=True)


def _as_text(stream: io.TextIOWrapper) -> str:
    """What ``subprocess.run(text=True)`` reads from a pipe: decoded, universal newlines."""
    stream.flush()
    raw = stream.buffer
    assert isinstance(raw, io.BytesIO)
    return io.TextIOWrapper(io.BytesIO(raw.getvalue()), encoding=_ENCODING).read()


def _signal_handlers() -> dict[signal.Signals, object]:
    handlers: dict[signal.Signals, object] = {}
    for signum in signal.valid_signals():
        if isinstance(signum, signal.Signals) and signum not in (signal.SIGKILL, signal.SIGSTOP):
            handlers[signum] = signal.getsignal(signum)
    return handlers


@contextmanager
def _restored_process_state() -> Iterator[None]:
    """Environment, cwd, standard streams, argv, sys.path, signal handlers, logging: back as
    they were."""
    env, cwd = dict(os.environ), os.getcwd()
    streams, argv, path = (sys.stdin, sys.stdout, sys.stderr), sys.argv, list(sys.path)
    handlers = _signal_handlers()
    root = logging.getLogger()
    root_handlers, root_level, disabled = (
        list(root.handlers),
        root.level,
        logging.root.manager.disable,
    )
    main_module = sys.modules["__main__"]
    main_package = getattr(main_module, "__package__", None)
    # Logging as a fresh process has it: no handler (a warning reaches stderr through logging's
    # last resort, not pytest's capture), the default level, nothing disabled.
    root.handlers[:] = []
    root.setLevel(logging.WARNING)
    logging.disable(logging.NOTSET)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(env)
        os.chdir(cwd)
        sys.stdin, sys.stdout, sys.stderr = streams
        sys.argv = argv
        sys.path[:] = path  # a --hooks-module's project folder, put first to import it
        for signum, handler in handlers.items():
            if signal.getsignal(signum) is not handler and handler is not None:
                signal.signal(signum, handler)  # type: ignore[arg-type]
        root.handlers[:] = root_handlers
        root.setLevel(root_level)
        logging.disable(disabled)
        main_module.__package__ = main_package


def run_cli(
    args: Sequence[str | Path],
    *,
    cwd: Path | str,
    env: Mapping[str, str] | None = None,
    stdin: str = "",
) -> subprocess.CompletedProcess[str]:
    """``forgeflare ARGS`` in ``cwd`` with exactly ``env`` (default: this process's), in-process.

    ``SystemExit`` becomes the return code (``None`` is 0); any other exception propagates, so
    a traceback still fails the test.
    """
    argv = [str(arg) for arg in args]
    out, err = _stream(b"", errors="strict"), _stream(b"", errors="backslashreplace")
    code: int = 0
    with _restored_process_state():
        if env is not None:
            wanted = dict(env)  # a copy first: ``env`` may be ``os.environ`` itself
            os.environ.clear()
            os.environ.update(wanted)
        os.chdir(cwd)
        sys.stdin = _stream(stdin.encode(_ENCODING), errors="strict")
        sys.stdout, sys.stderr = out, err
        # click names the program from argv[0] and __main__: as the console script does.
        sys.argv = ["forgeflare", *argv]
        sys.modules["__main__"].__package__ = None
        try:
            main(argv)
        except SystemExit as exc:
            if exc.code is None:
                code = 0
            elif isinstance(exc.code, int):
                code = exc.code
            else:  # sys.exit("message"): the message on stderr, status 1, as a process
                print(exc.code, file=err)
                code = 1
        except BaseException as exc:
            exc.add_note(f"forgeflare stderr so far: {_as_text(err)!r}")
            raise
    return subprocess.CompletedProcess(
        ["forgeflare", *argv], code, stdout=_as_text(out), stderr=_as_text(err)
    )


def forgeflare_here(
    cwd: Path, *args: str, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """:func:`run_cli` with the loop tests' environment (``base_env()``) unless ``env`` is given:
    the in-process twin of ``supervisor_agents.project.forgeflare``."""
    from supervisor_agents.project import base_env

    return run_cli(args, cwd=cwd, env=base_env() if env is None else env)
