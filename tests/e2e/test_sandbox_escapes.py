"""The sandbox's known escapes, tried through the real agent, as root and as a normal user.

Each row is a Bash command the scripted model sends to ``forgeflare run --sandbox``, run on a
terminal (a pty that is the agent's controlling terminal, as in a user's shell). Every target
is a scratch path the test made in ``/var/tmp`` (outside the sandbox's private ``/tmp``, so
the sandbox's read-only view of it is what is tried); nothing else is touched:

1. ``TIOCSTI``: a command pushes ``touch …`` into the terminal's input, which the user's shell
   would run after the agent exits;
5. host unix sockets: one in ``$XDG_RUNTIME_DIR``, one elsewhere (listed by the kernel);
6. as root, ``mount -o remount,rw /`` and then a write to a read-only path;
and a plain write to a read-only path and to ``~``. Beside them, what must keep working: the
project, a private ``/tmp``, and a socket the user lets in by name.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import termios
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from agent_support import text_response, tool_response, tool_results
from forgeflare.security import SOCKETS_ENV, landlock_abi
from mockapi_support import MockAPI
from nobody_support import SETPRIV, forgeflare_argv, forgeflare_env, shared_scratch
from platform_support import terminal
from tool_support import run_tool

BWRAP = shutil.which("bwrap")
SETSID = shutil.which("setsid")
# The commands' own interpreter: the system's, which every user can run (a venv under /root
# is out of a normal user's reach, and its failure would hide what the row tries).
PY = shutil.which("python3", path="/usr/bin:/bin") or sys.executable

pytestmark = [
    pytest.mark.linux_only("bubblewrap, TIOCSTI and setpriv are Linux"),
    pytest.mark.skipif(
        BWRAP is None, reason="needs bubblewrap (Debian: bubblewrap, installed by .ci/run)"
    ),
    pytest.mark.skipif(SETSID is None, reason="needs util-linux setsid (--ctty)"),
]


@dataclass
class Scratch:
    root: Path
    project: Path
    home: Path
    readonly: Path
    runtime: Path
    sockets: Path

    def env(self) -> dict[str, str]:
        return {
            "HOME": str(self.home),
            "XDG_RUNTIME_DIR": str(self.runtime),
            "XDG_CONFIG_HOME": str(self.root / "config"),
            "XDG_STATE_HOME": str(self.root / "state"),
            "XDG_CACHE_HOME": str(self.home / ".cache"),
            SOCKETS_ENV: str(self.sockets / "allowed.sock"),
        }


@pytest.fixture
def scratch() -> Iterator[Scratch]:
    """Scratch folders in /var/tmp, writable by everyone (so only the sandbox can refuse)."""
    with shared_scratch("forgeflare-escapes-") as root:
        parts = {n: root / n for n in ("project", "home", "readonly", "runtime", "sockets")}
        for path in (root, *parts.values(), root / "config", root / "state"):
            path.mkdir(exist_ok=True)
            path.chmod(0o777)
        yield Scratch(root=root, **parts)


def _listen(path: Path) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(path))
    path.chmod(0o777)
    sock.listen(8)
    sock.setblocking(False)
    return sock


def _connected(sock: socket.socket) -> bool:
    try:
        conn, _ = sock.accept()
    except BlockingIOError:
        return False
    conn.close()
    return True


def _connect(path: Path) -> str:
    return f"{PY} -c \"import socket; socket.socket(socket.AF_UNIX).connect('{path}')\""


def _tiocsti(line: str) -> str:
    # The text goes hex-encoded: only an injected copy can show it whole on the terminal.
    hexed = line.encode().hex()
    code = (
        "import fcntl, os, termios; fd = os.open('/dev/tty', os.O_RDWR); "
        f"[fcntl.ioctl(fd, termios.TIOCSTI, bytes([b])) for b in bytes.fromhex('{hexed}')]"
    )
    return f'{PY} -c "{code}"'


@dataclass(frozen=True)
class Row:
    name: str
    command: str
    escaped: Callable[[Scratch], bool]
    """On the host, after the run: did the attempt get through?"""
    refused: bool = True
    """Must the command fail in the box (``False``: it may succeed where nothing stays)."""


ABSTRACT = f"forgeflare-escapes-{os.getpid()}"
# With the network on, an abstract socket (X11's, an old dbus) lives in the shared network
# namespace and no file hides it: only Landlock's scope (ABI 6, Linux 6.12) keeps it out.
SCOPES = landlock_abi() >= 6


def _connect_abstract(name: str) -> str:
    return f"{PY} -c \"import socket; socket.socket(socket.AF_UNIX).connect('\\\\0{name}')\""


def _rows(s: Scratch) -> list[Row]:
    abstract = [Row("abstract socket", _connect_abstract(ABSTRACT), lambda s: False)]
    return (abstract if SCOPES else []) + [
        Row("TIOCSTI", _tiocsti(f"touch {s.root}/tiocsti\n"), lambda s: False),
        Row("runtime-dir socket", _connect(s.runtime / "bus.sock"), lambda s: False),
        Row("other host socket", _connect(s.sockets / "stray.sock"), lambda s: False),
        Row(
            "remount / read-write",
            f"mount -o remount,rw / ; echo x > {s.readonly}/remounted",
            lambda s: (s.readonly / "remounted").exists(),
        ),
        Row(
            "write a read-only path",
            f"echo x > {s.readonly}/written",
            lambda s: (s.readonly / "written").exists(),
        ),
        # ~ is a tmpfs in the box: the write succeeds there and is dropped with it.
        Row("write to ~", "touch ~/outside", lambda s: (s.home / "outside").exists(), False),
    ]


ALLOWED = [
    "echo ok > in-project.txt",
    "echo ok > /tmp/private.txt && cat /tmp/private.txt",
]


def _run_on_a_terminal(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[int, bytes, bytes]:
    """``argv`` with a fresh pty as its controlling terminal; returns (exit, screen, typed).

    ``typed`` is what waits in the terminal's input after the run: what a shell reading it
    next would run.
    """
    with terminal() as (_, slave, screen):
        proc = subprocess.Popen(
            [SETSID or "setsid", "--ctty", *argv],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=env,
            cwd=cwd,
        )
        code = proc.wait(timeout=90)
        attrs = termios.tcgetattr(slave)
        attrs[3] &= ~termios.ICANON  # read whatever is queued, line or not
        attrs[6][termios.VMIN], attrs[6][termios.VTIME] = 0, 0
        termios.tcsetattr(slave, termios.TCSANOW, attrs)
        typed = os.read(slave, 4096)
    return code, bytes(screen), typed


@pytest.mark.parametrize("user", ["root", "nobody"])
def test_no_escape_gets_out(user: str, scratch: Scratch, mock_api: MockAPI) -> None:
    if os.geteuid() != 0:
        pytest.skip("runs as root and, through setpriv, as nobody: needs root to start")
    if user == "nobody" and SETPRIV is None:
        pytest.skip("needs util-linux setpriv to run as nobody")
    abstract_sock = socket.socket(socket.AF_UNIX)
    abstract_sock.bind("\0" + ABSTRACT)
    abstract_sock.listen(8)
    abstract_sock.setblocking(False)
    runtime_sock = _listen(scratch.runtime / "bus.sock")
    stray_sock = _listen(scratch.sockets / "stray.sock")
    allowed_sock = _listen(scratch.sockets / "allowed.sock")
    rows = _rows(scratch)
    commands = [r.command for r in rows] + ALLOWED + [_connect(scratch.sockets / "allowed.sock")]
    server = mock_api(
        {
            "responses": [
                *(tool_response(("Bash", {"command": c})) for c in commands),
                text_response("done"),
            ]
        }
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "FRESHER_"))}
    env.update(scratch.env())
    env.update(ANTHROPIC_API_URL=server.url, ANTHROPIC_API_KEY="test-key", NO_COLOR="1")
    env.update(forgeflare_env(user))
    # The network on, as in a loop: what must stay out has to without a namespace of its own.
    argv = [*forgeflare_argv(user), "run", "--sandbox-network", "go"]
    try:
        code, screen, typed = _run_on_a_terminal(argv, env, scratch.project)
        reached = {
            "runtime-dir socket": _connected(runtime_sock),
            "other host socket": _connected(stray_sock),
            "abstract socket": _connected(abstract_sock),
        }
        allowed_reached = _connected(allowed_sock)
    finally:
        for sock in (runtime_sock, stray_sock, allowed_sock, abstract_sock):
            sock.close()
    assert code == 0, screen.decode(errors="replace")[-3000:]
    requests = server.requests()
    results = [tool_results(req)[0] for req in requests[1:]]
    assert len(results) == len(commands)
    escaped = []
    for row, result in zip(rows, results, strict=False):
        unrefused = row.refused and not result["is_error"]
        if unrefused or row.escaped(scratch) or reached.get(row.name, False):
            escaped.append((row.name, result["content"]))
    marker = f"touch {scratch.root}/tiocsti".encode()
    if marker in typed or marker in screen:
        escaped.append(("TIOCSTI", typed.decode(errors="replace")))
    assert escaped == []
    # What must keep working did.
    for result in results[len(rows) :]:
        assert not result["is_error"], result["content"]
    assert (scratch.project / "in-project.txt").read_text() == "ok\n"
    assert allowed_reached


@pytest.mark.parametrize(("mode", "reachable"), [("1", False), ("network", True)])
def test_without_network_loopback_and_abstract_sockets_are_out_of_reach(
    mode: str, reachable: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``sandbox_network = false`` (``forgeflare run --sandbox``): a network namespace of its
    own, so services on localhost and abstract unix sockets (which no file hides) are gone."""
    tcp = socket.create_server(("127.0.0.1", 0))
    abstract = socket.socket(socket.AF_UNIX)
    name = f"forgeflare-test-{os.getpid()}-{mode}"
    abstract.bind("\0" + name)
    abstract.listen(1)
    port = tcp.getsockname()[1]
    code = (
        f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=5); "
        f"socket.socket(socket.AF_UNIX).connect('\\0{name}'); print('reached')"
    )
    monkeypatch.setenv("FORGEFLARE_SANDBOX", mode)
    try:
        out = run_tool("Bash", {"command": f'{PY} -c "{code}"'}, cwd=tmp_path)
    finally:
        tcp.close()
        abstract.close()
    assert ("reached" in out.content) is reachable, out.content
    assert out.is_error is not reachable
