"""Landlock's scope for abstract unix sockets, in this process or for one command.

Abstract unix sockets (X11's ``@/tmp/.X11-unix/X0``, an old dbus, a desktop helper) have no
file that a sandbox could hide, and they live in the network namespace: with the network on,
bubblewrap's box shares the host's. Landlock ABI 6 (Linux 6.12) scopes them: a process that
restricted itself (and everything it starts) cannot connect to one made outside its domain.

:func:`scope_self` restricts the calling process (``forgeflare run`` does, before its first
thread). Run as a script, this module restricts itself and ``exec``s its arguments: the loop's
gate and the reviewer's diff start bubblewrap through it (:func:`scoped_argv`), so what runs
in their box is scoped too. Standard library only: the script runs with ``python -I -S``.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import stat
import sys

__all__ = ["landlock_abi", "scope_self", "scoped_argv"]

# The same syscall numbers on every architecture (added after the tables merged).
_LANDLOCK_CREATE_RULESET = 444
_LANDLOCK_RESTRICT_SELF = 446
_LANDLOCK_CREATE_RULESET_VERSION = 1
_LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET = 1
_PR_SET_NO_NEW_PRIVS = 38


class _RulesetAttr(ctypes.Structure):
    _fields_ = (
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    )


def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


def landlock_abi() -> int:
    """The kernel's Landlock ABI version (0: none). Scopes need 6 (Linux 6.12)."""
    libc = _libc()
    if libc is None:
        return 0
    version = libc.syscall(
        _LANDLOCK_CREATE_RULESET,
        None,
        ctypes.c_size_t(0),
        ctypes.c_uint32(_LANDLOCK_CREATE_RULESET_VERSION),
    )
    return max(int(version), 0)


def _scopable() -> bool:
    """ABI 6, and a bubblewrap that is not setuid (``no_new_privs`` would stop it)."""
    if landlock_abi() < 6:
        return False
    bwrap = shutil.which("bwrap")
    try:
        return bwrap is not None and not os.stat(bwrap).st_mode & stat.S_ISUID
    except OSError:
        return False


def scope_self() -> bool:
    """Keep this process and everything it starts from connecting to abstract unix sockets
    made outside it; returns whether it took effect.

    Call it before the process starts threads: only threads made afterwards inherit it. It
    sets ``no_new_privs`` (a sandboxed command has that anyway), so it is skipped where
    bubblewrap is setuid.
    """
    libc = _libc()
    if libc is None or not _scopable():
        return False
    attr = _RulesetAttr(0, 0, _LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET)
    fd = int(
        libc.syscall(
            _LANDLOCK_CREATE_RULESET,
            ctypes.byref(attr),
            ctypes.c_size_t(ctypes.sizeof(attr)),
            ctypes.c_uint32(0),
        )
    )
    if fd < 0:
        return False
    try:
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            return False
        return int(libc.syscall(_LANDLOCK_RESTRICT_SELF, fd, ctypes.c_uint32(0))) == 0
    finally:
        os.close(fd)


def scoped_argv(argv: list[str]) -> list[str]:
    """``argv`` started through this module, scoped, where the kernel can (else as it is:
    the docs name the residual, and ``sandbox_network = false`` closes it)."""
    if not _scopable():
        return argv
    return [sys.executable, "-I", "-S", os.path.abspath(__file__), *argv]


if __name__ == "__main__":
    if not scope_self():
        sys.exit("forgeflare: cannot scope abstract unix sockets (Landlock); not started")
    os.execvp(sys.argv[1], sys.argv[1:])
