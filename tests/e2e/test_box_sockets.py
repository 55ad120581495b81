"""Host unix sockets the kernel does not list where they lie stay out of the box's reach.

``/proc/net/unix`` names a socket by the path it was bound with: a socket bound with a
relative path, one renamed after bind, and one bound in another network namespace (listed
only there) escape a cover made from that list. The box hides the folders users and services
share (``/var/tmp``, ``/srv``, ``/mnt``, ``/media``, like ``/tmp``, ``/run`` and ``~``), so
such a socket there is gone whatever the list says; an abstract socket (no file at all) is
scoped away by Landlock where the kernel has it (ABI 6), and by its own network namespace
with ``sandbox_network = false``.

A Python probe inside the box tries to connect to each, as the agent's Bash command (``forgeflare
run --sandbox-network``, as root and as ``nobody``) and as the loop's gate (in-process, as
root). The same probe on the host reaches them all (so the trap is real), and a socket bound
inside the project (shown by design) is reached from the box (so the probe works).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from agent_support import tool_results, with_one_call
from forgeflare.security import landlock_abi
from forgeflare.security._gaterun import BoxSettings, gate_box_blocking, run_gate_blocking
from mockapi_support import MockAPI
from nobody_support import SETPRIV, forgeflare_argv, forgeflare_env, loop_env, shared_scratch
from project_support import run_text

BWRAP = shutil.which("bwrap")
UNSHARE = shutil.which("unshare")
PY = shutil.which("python3", path="/usr/bin:/bin") or sys.executable
SCOPES = landlock_abi() >= 6

pytestmark = [
    pytest.mark.linux_only("bubblewrap, network namespaces and setpriv are Linux"),
    pytest.mark.skipif(BWRAP is None, reason="needs bubblewrap (Debian: bubblewrap)"),
    pytest.mark.skipif(os.geteuid() != 0, reason="binds in another netns, runs as nobody: root"),
    pytest.mark.skipif(UNSHARE is None, reason="needs util-linux unshare (another netns)"),
    pytest.mark.skipif(SETPRIV is None, reason="needs util-linux setpriv to run as nobody"),
]

PROBE = """
import socket, sys
for name, addr in zip(sys.argv[1::2], sys.argv[2::2]):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(5)
    try:
        s.connect("\\0" + addr[1:] if addr.startswith("@") else addr)
        print("REACHED", name)
    except OSError as exc:
        print("OUT", name, exc.errno)
    finally:
        s.close()
"""

NETNS_SERVER = """
import os, socket, sys
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
os.chmod(sys.argv[1], 0o777)
s.listen(8)
print("ready", flush=True)
sys.stdin.read()
"""


@dataclass
class Sockets:
    root: Path
    project: Path
    targets: dict[str, str]
    """What the probe tries: name -> path (``@name``: abstract)."""

    def probe(self) -> str:
        args = " ".join(f"{name} {addr}" for name, addr in self.targets.items())
        return f"{PY} {self.project / 'probe.py'} {args}"


def _listen(sock: socket.socket, path: str) -> socket.socket:
    sock.bind(path)
    sock.listen(8)
    return sock


@pytest.fixture
def sockets() -> Iterator[Sockets]:
    """Every kind of socket, listening, in a scratch folder under ``/var/tmp`` that anyone may
    enter (so only the box can keep ``nobody`` out)."""
    with shared_scratch("forgeflare-sockets-") as root:
        where = root / "sockets"
        project = root / "project"
        for path in (where, project, root / "home", root / "config", root / "state"):
            path.mkdir()
            path.chmod(0o777)
        (project / "probe.py").write_text(PROBE)  # the box shows the project only
        opened: list[socket.socket] = []
        cwd = os.getcwd()
        os.chdir(where)
        try:  # bound with a relative path: the kernel lists "rel.sock"
            opened.append(_listen(socket.socket(socket.AF_UNIX), "rel.sock"))
        finally:
            os.chdir(cwd)
        opened.append(_listen(socket.socket(socket.AF_UNIX), str(where / "before.sock")))
        os.rename(where / "before.sock", where / "renamed.sock")  # listed as before.sock
        abstract = f"forgeflare-sockets-{os.getpid()}"
        opened.append(_listen(socket.socket(socket.AF_UNIX), "\0" + abstract))
        opened.append(_listen(socket.socket(socket.AF_UNIX), str(project / "project.sock")))
        server = subprocess.Popen(
            [UNSHARE or "unshare", "--net", PY, "-c", NETNS_SERVER, str(where / "netns.sock")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert server.stdout is not None
        try:
            if server.stdout.readline().strip() != "ready":
                pytest.skip("cannot bind a socket in another network namespace here")
            for name in ("rel.sock", "renamed.sock", "project.sock"):
                path = (project if name == "project.sock" else where) / name
                path.chmod(0o777)
            yield Sockets(
                root=root,
                project=project,
                targets={
                    "relative": str(where / "rel.sock"),
                    "renamed": str(where / "renamed.sock"),
                    "other-netns": str(where / "netns.sock"),
                    "abstract": "@" + abstract,
                    "in-project": str(project / "project.sock"),
                },
            )
        finally:
            server.kill()
            server.wait()
            for sock in opened:
                sock.close()


def _reached(out: str) -> set[str]:
    assert "OUT" in out or "REACHED" in out, out
    return {line.split()[1] for line in out.splitlines() if line.startswith("REACHED ")}


def _expected() -> set[str]:
    # Without Landlock's scope (before Linux 6.12) an abstract socket is reached with the
    # network on: the docs name it, and sandbox_network = false closes it (below).
    return {"in-project"} if SCOPES else {"in-project", "abstract"}


def test_on_the_host_the_probe_reaches_every_socket(sockets: Sockets) -> None:
    out = subprocess.run(
        sockets.probe(), shell=True, capture_output=True, text=True, timeout=60, check=False
    ).stdout
    assert _reached(out) == set(sockets.targets)


@pytest.mark.parametrize("user", ["root", "nobody"])
def test_a_bash_command_reaches_none(user: str, sockets: Sockets, mock_api: MockAPI) -> None:
    server = mock_api(with_one_call("Bash", {"command": sockets.probe()}, "ok"))
    env = loop_env(
        sockets.root,
        sockets.root / "home",
        "test-key",
        ANTHROPIC_API_URL=server.url,
        **forgeflare_env(user),
    )
    done = run_text(
        [*forgeflare_argv(user), "run", "--sandbox-network", "probe"],
        cwd=sockets.project,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    out = str(tool_results(server.requests()[1])[0]["content"])
    assert _reached(out) == _expected(), out


@pytest.mark.parametrize("network", [True, False])
def test_the_gate_reaches_none(network: bool, sockets: Sockets) -> None:
    env = loop_env(sockets.root, sockets.root / "home", "test-key")
    box = gate_box_blocking(sockets.project, BoxSettings(network=network), env)
    assert box.env is not None, box.line
    done = run_gate_blocking(
        sockets.probe(), project=sockets.project, env=env, box=box, timeout=120
    )
    assert done.exit_code == 0, done.output
    # sandbox_network = false: a network namespace of its own, no abstract socket either way.
    expected = _expected() if network else {"in-project"}
    assert _reached(done.output) == expected, done.output
