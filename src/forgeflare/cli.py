"""The ``forgeflare`` console script.

Claude Code runs ``forgeflare stop-hook`` on every Stop of every session, so a bare
``stop-hook`` goes straight to the stop-hook's own entry before typer (or any other part) is
imported; every other command goes through the typer app in :mod:`forgeflare._app`. The
``forgeflare-stop-hook`` console script is :func:`stop_hook_main`. Commands that start project
code first move secrets out of the process's initial environment
(:mod:`forgeflare.security._keychannel`).
"""

from __future__ import annotations

import errno
import sys

from forgeflare._errors import ForgeflareError

# Annotations only: the bare ``stop-hook`` path imports neither typing nor collections.abc
# (mypy treats any name TYPE_CHECKING as true; at run time it is False).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from pathlib import Path
    from typing import Any

    from forgeflare.security import BoxSettings

__all__ = ["console_main", "main", "stop_hook_console_main", "stop_hook_main"]


# A path the file system refuses as such, whichever command touched it first: a user's
# argument, not a bug, so one line (any other OSError stays a traceback worth reporting).
_BAD_PATH_ERRNOS = frozenset({errno.ENAMETOOLONG, errno.ELOOP})


def _bad_path(exc: OSError) -> ForgeflareError | None:
    """``exc`` as a usage error when it says a path is unusable (too long, a symlink loop)."""
    if exc.errno not in _BAD_PATH_ERRNOS:
        return None
    name = str(exc.filename) if exc.filename is not None else "a path"
    if len(name) > 80:
        name = name[:60] + f"... ({len(name)} characters)"
    error = ForgeflareError(f"{name}: {exc.strerror or exc}")
    error.exit_code = 2
    return error


def _only_forgeflare_error(group: BaseExceptionGroup[BaseException]) -> ForgeflareError | None:
    """The one ForgeflareError a trio nursery wrapped, if that is all the group holds."""
    leaves: list[BaseException] = []

    def walk(exc: BaseException) -> None:
        if isinstance(exc, BaseExceptionGroup):
            for inner in exc.exceptions:
                walk(inner)
        else:
            leaves.append(exc)

    walk(group)
    if len(leaves) == 1 and isinstance(leaves[0], ForgeflareError):
        return leaves[0]
    if len(leaves) == 1 and isinstance(leaves[0], OSError):
        return _bad_path(leaves[0])
    return None


def _gate_box_settings(project: Path, env: Mapping[str, str]) -> BoxSettings:
    """A project's ``[security]`` for a stop-hook gate: the configuration is the supervisor's,
    above the stop-hook, and loads only when a claim's gate runs."""
    from forgeflare.supervisor import box_settings

    return box_settings(project, env)


def _say(error: ForgeflareError) -> None:
    """One ``forgeflare: error:`` line per problem (a fleet file may have several)."""
    from forgeflare._termtext import for_terminal  # a path or record text may carry escapes

    for line in str(error).splitlines() or [""]:
        print(f"forgeflare: error: {for_terminal(line)}", file=sys.stderr)


def console_main() -> None:
    """The ``forgeflare`` console script and ``python -m forgeflare``: :func:`main`, then an
    exit without the interpreter's teardown (:func:`_exit_now`). A program or test that calls
    :func:`main` keeps its interpreter."""
    _without_teardown(main)


def stop_hook_console_main() -> None:
    """The ``forgeflare-stop-hook`` console script: :func:`stop_hook_main`, ended as
    :func:`console_main` ends."""
    _without_teardown(stop_hook_main)


def _without_teardown(entry: Callable[[], None]) -> None:
    try:
        entry()
    except SystemExit as done:
        _exit_now(done)
        raise


def _exit_now(done: SystemExit) -> None:
    """End this process with ``done``'s status without tearing the interpreter down.

    Python's own exit frees every module and object one by one: about 6% of the CPU of a
    short forgeflare process, and a loop starts many. The work that matters at exit still
    runs: the ``atexit`` handlers (logging's flush among them) and the flush of stdout and
    stderr. With another thread still running, or anything left to say about a flush, the
    ordinary exit runs instead (the caller re-raises).
    """
    import os

    code = done.code
    if code is not None and not isinstance(code, int):
        return
    threading = sys.modules.get("threading")  # not loaded: no other thread
    if threading is not None and any(
        t.is_alive() and not t.daemon
        for t in threading.enumerate()
        if t is not threading.main_thread()
    ):
        return
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):  # a closed pipe: Python's exit says so, with its status
        return
    import atexit

    atexit._run_exitfuncs()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        pass  # what an atexit handler printed to a closed pipe: gone, as with Python's exit
    os._exit(code or 0)


def main(argv: Sequence[str] | None = None) -> None:
    """Command-line entry point: library errors become one line and an exit status."""
    args = sys.argv[1:] if argv is None else list(argv)
    if argv is None:  # this process's own start (a test calling main() keeps its pytest)
        from forgeflare.platform import forbid_dumps

        forbid_dumps()  # before any secret is read: nothing it starts can read its memory
    if args == ["stop-hook"]:
        from forgeflare.stophook._entry import run_stop_hook_process

        sys.exit(run_stop_hook_process(_gate_box_settings))
    if args == ["--version"]:  # scripts and CI ask often: no typer, no secrets to move
        from forgeflare import __version__

        print(f"forgeflare {__version__}")
        sys.exit(0)
    if argv is None and args:  # the process's own command line: a test calling main() is not
        from forgeflare.security import hide_secrets

        try:
            hide_secrets(args)  # before typer is imported: a re-executed start pays for it once
        except ForgeflareError as exc:
            _say(exc)
            sys.exit(exc.exit_code)
    from forgeflare._app import app

    if not args:
        # As `forgeflare hooks` and `forgeflare fleet` do: the help on stdout, exit 2 (usage).
        import contextlib

        with contextlib.suppress(SystemExit):
            app(args=["--help"])
        sys.exit(2)
    clicks = _click_exceptions()
    try:
        # args=None keeps click's own reading of sys.argv (and its program name). Not in
        # standalone mode: a usage error is ours to word (one line), not a rich box.
        code = app(args=None if argv is None else args, standalone_mode=False)
    except clicks.usage as exc:
        if clicks.no_args is not None and isinstance(exc, clicks.no_args):
            # A group without its subcommand: typer printed its help (older ones leave it here).
            if exc.format_message().strip():
                print(exc.format_message())
            sys.exit(2)
        where = f" (see `{exc.ctx.command_path} --help`)" if exc.ctx is not None else ""
        print(f"forgeflare: error: {exc.format_message()}{where}", file=sys.stderr)
        sys.exit(2)
    except clicks.click as exc:
        print(f"forgeflare: error: {exc.format_message()}", file=sys.stderr)
        sys.exit(exc.exit_code)
    except clicks.abort:
        print("forgeflare: aborted", file=sys.stderr)
        sys.exit(1)
    except ForgeflareError as exc:
        _say(exc)
        sys.exit(exc.exit_code)
    except OSError as exc:
        error = _bad_path(exc)
        if error is None:
            raise
        print(f"forgeflare: error: {error}", file=sys.stderr)
        sys.exit(error.exit_code)
    except BaseExceptionGroup as group:
        error = _only_forgeflare_error(group)
        if error is None:
            raise
        _say(error)
        sys.exit(error.exit_code)
    except KeyboardInterrupt:
        print("forgeflare: interrupted", file=sys.stderr)
        sys.exit(130)
    sys.exit(code if isinstance(code, int) else 0)


class _ClickExceptions:
    """The click exception types :func:`main` tells apart (a plain class: no dataclasses,
    which would load ``inspect`` and ``ast`` at every Stop)."""

    __slots__ = ("abort", "click", "no_args", "usage")

    def __init__(
        self,
        *,
        click: type[Any],
        usage: type[Any],
        abort: tuple[type[BaseException], ...],
        no_args: type[Any] | None,
    ) -> None:
        self.click, self.usage, self.abort, self.no_args = click, usage, abort, no_args


def _click_exceptions() -> _ClickExceptions:
    """The exception types of the click that typer runs on (newer typers vendor their own)."""
    import typer

    module = sys.modules[typer.BadParameter.__module__]
    return _ClickExceptions(
        click=module.ClickException,
        usage=module.UsageError,
        abort=(getattr(module, "Abort", typer.Abort), typer.Abort),
        no_args=getattr(module, "NoArgsIsHelpError", None),
    )


def stop_hook_main(argv: Sequence[str] | None = None) -> None:
    """``forgeflare-stop-hook [start|status|cancel|install|--help ...]``.

    With no argument it is the hook; anything else is ``forgeflare stop-hook ...``.
    """
    args = sys.argv[1:] if argv is None else list(argv)
    if argv is None:
        from forgeflare.platform import forbid_dumps

        forbid_dumps()  # the hook holds the session's key when it asks a reviewer
    if not args:
        from forgeflare.stophook._entry import run_stop_hook_process

        sys.exit(run_stop_hook_process(_gate_box_settings))
    main(["stop-hook", *args])
