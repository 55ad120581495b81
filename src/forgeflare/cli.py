"""The ``forgeflare`` console script.

Claude Code runs ``forgeflare stop-hook`` on every Stop of every session, so a bare
``stop-hook`` goes straight to the stop-hook's own entry before typer (or any other part) is
imported; every other command goes through the typer app in :mod:`forgeflare._app`. The
``forgeflare-stop-hook`` console script is :func:`stop_hook_main`.
"""

from __future__ import annotations

import errno
import sys
from collections.abc import Sequence

from forgeflare._errors import ForgeflareError

__all__ = ["main", "stop_hook_main"]


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


def main(argv: Sequence[str] | None = None) -> None:
    """Console-script entry point: library errors become one line and an exit status."""
    args = sys.argv[1:] if argv is None else list(argv)
    if args == ["stop-hook"]:
        from forgeflare.stophook._entry import run_stop_hook_process

        sys.exit(run_stop_hook_process())
    from forgeflare._app import app

    try:
        # args=None keeps click's own reading of sys.argv (and its program name).
        app(args=None if argv is None else args)
    except ForgeflareError as exc:
        print(f"forgeflare: error: {exc}", file=sys.stderr)
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
        print(f"forgeflare: error: {error}", file=sys.stderr)
        sys.exit(error.exit_code)
    except KeyboardInterrupt:
        print("forgeflare: interrupted", file=sys.stderr)
        sys.exit(130)


def stop_hook_main(argv: Sequence[str] | None = None) -> None:
    """``forgeflare-stop-hook [start|status|cancel|install|--help ...]``.

    With no argument it is the hook; anything else is ``forgeflare stop-hook ...``.
    """
    args = sys.argv[1:] if argv is None else list(argv)
    if not args:
        from forgeflare.stophook._entry import run_stop_hook_process

        sys.exit(run_stop_hook_process())
    main(["stop-hook", *args])
