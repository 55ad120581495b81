"""No process can read the key: what the agent's work runs tries every way into memory.

A probe (a real Python script, as a test file the agent wrote would be) looks for the API key
in another process's ``/proc/<pid>/environ`` and ``/proc/<pid>/mem`` and tries ``ptrace``. It
runs where project code runs: a Bash command of ``forgeflare run`` (unsandboxed: its parent is
the agent), a lifecycle hook of ``forgeflare loop`` (its parent is the loop), the loop's gate
(in the box: every process it can see), and the stop-hook's gate (unsandboxed: its parent is
the hook). As an ordinary uid (``nobody``, through ``setpriv``) and, in the box, as root.
Root outside the box has ``CAP_SYS_PTRACE`` and reads any memory: the docs say so.

Everything lives in a scratch folder under ``/var/tmp`` that ``nobody`` may use; the probe
reads the key from a file the agent never sees, so the key is never in a command's text.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import nobody_support
from agent_support import text_response, tool_response, tool_results, with_one_call
from mockapi_support import MockAPI
from nobody_support import (
    SETPRIV,
    claim_complete,
    forgeflare_argv,
    forgeflare_env,
    shared_scratch,
    start_frame,
)
from project_support import run_text

BWRAP = shutil.which("bwrap")
PY = shutil.which("python3", path="/usr/bin:/bin") or sys.executable
KEY = "sk-ant-test-" + "k3y" * 12

pytestmark = [
    pytest.mark.linux_only("PR_SET_DUMPABLE, /proc/<pid>/mem and setpriv are Linux"),
    pytest.mark.skipif(os.geteuid() != 0, reason="runs as root and as nobody: needs root"),
    pytest.mark.skipif(SETPRIV is None, reason="needs util-linux setpriv to run as nobody"),
]

PROBE = """
import ctypes, os, sys
key = open(sys.argv[1], "rb").read().strip()
me = os.getpid()
if len(sys.argv) > 2:
    pids = [int(a) for a in sys.argv[2:]]
else:
    pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
found = []
for pid in pids:
    if pid in (me, 0):
        continue
    try:
        with open(f"/proc/{pid}/environ", "rb") as fh:
            if key in fh.read():
                found.append(f"{pid}:environ")
    except OSError:
        pass
    try:
        with open(f"/proc/{pid}/maps") as fh:
            maps = fh.read().splitlines()
        with open(f"/proc/{pid}/mem", "rb", 0) as mem:
            for line in maps:
                span, perms = line.split()[:2]
                if not perms.startswith("r"):
                    continue
                lo, hi = (int(x, 16) for x in span.split("-"))
                try:
                    mem.seek(lo)
                    chunk = mem.read(hi - lo)
                except (OSError, OverflowError, ValueError):
                    continue
                if chunk and key in chunk:
                    found.append(f"{pid}:mem")
                    break
    except OSError:
        pass
    # Attaching is as good as reading; tried on the named parent only (in the box the
    # sandbox's own init is attachable and holds nothing).
    if len(sys.argv) > 2 and libc.ptrace(16, pid, None, None) == 0:  # PTRACE_ATTACH
        found.append(f"{pid}:ptrace")
        try:
            os.waitpid(pid, 0x40000000)  # __WALL: the tracee's stop
        except OSError:
            pass
        libc.ptrace(17, pid, None, None)  # PTRACE_DETACH
print("KEYS", len(found), " ".join(found), "of", len(pids), "processes")
"""


class Scratch(nobody_support.Scratch):
    """The shared scratch with the probe and the key file."""

    key = KEY

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.probe = root / "probe.py"
        self.keyfile = root / "key"
        self.probe.write_text(PROBE)
        self.keyfile.write_text(KEY)

    def probe_cmd(self, *pids: str) -> str:
        return " ".join([PY, str(self.probe), str(self.keyfile), *pids])

    def env(self, **extra: str) -> dict[str, str]:
        # The box hides /var/tmp: the probe and the key file are shown by name.
        shown = f"{self.probe}:{self.keyfile}"
        return super().env(FORGEFLARE_SANDBOX_READABLE=shown, **extra)


@pytest.fixture
def scratch() -> Iterator[Scratch]:
    with shared_scratch("forgeflare-keymem-") as root:
        yield Scratch(root)


def _keys(text: str) -> int:
    lines = [line for line in text.splitlines() if line.startswith("KEYS ")]
    assert lines, text[-2000:]
    return sum(int(line.split()[1]) for line in lines)


def _checked(text: str) -> int:
    """How many processes the probe looked at (so a probe that saw nothing is not a pass)."""
    lines = [line for line in text.splitlines() if line.startswith("KEYS ")]
    return sum(int(line.split()[-2]) for line in lines)


@pytest.mark.parametrize(("user", "boxed"), [("nobody", False), ("root", True)])
def test_a_bash_command_cannot_read_the_agents_key(
    user: str, boxed: bool, scratch: Scratch, mock_api: MockAPI
) -> None:
    if boxed and BWRAP is None:
        pytest.skip("needs bubblewrap for the boxed row")
    # Unboxed, the parent ($PPID) is the agent; in the box, every process it can see.
    command = scratch.probe_cmd() if boxed else scratch.probe_cmd("$PPID")
    server = mock_api(with_one_call("Bash", {"command": command}))
    scratch.give_to(user)
    flags = ["--sandbox-network"] if boxed else []
    done = run_text(
        [*forgeflare_argv(user), "run", *flags, "probe"],
        cwd=scratch.project,
        env=scratch.env(ANTHROPIC_API_URL=server.url, **forgeflare_env(user)),
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result = tool_results(server.requests()[1])[0]
    out = str(result["content"])
    assert _checked(out) >= 1, out
    assert _keys(out) == 0, out


@pytest.mark.parametrize("user", ["nobody", "root"])
def test_a_hook_and_the_gate_cannot_read_the_loops_key(
    user: str, scratch: Scratch, mock_api: MockAPI
) -> None:
    if BWRAP is None:
        pytest.skip("needs bubblewrap: the gate runs in the box")
    project = scratch.project
    hooks = project / ".fresher" / "hooks"
    hooks.mkdir(parents=True)
    started = hooks / "started"
    started.write_text(f"#!/bin/sh\n{scratch.probe_cmd('$PPID')} > {project}/hook-probe.txt\n")
    started.chmod(0o755)
    # The gate (run before the first iteration to measure progress) sees its whole box.
    gate = f"{scratch.probe_cmd()} > gate-probe.txt"
    config = f'[limits]\ngate = "{gate}"\n\n[agent]\nbackend = "forgeflare"\n'
    config += f'[security]\nreadable = ["{scratch.probe}", "{scratch.keyfile}"]\n'
    (project / ".fresher" / "config.toml").write_text(config)
    server = mock_api({"responses": [text_response("done")], "when_exhausted": "end_turn"})
    scratch.give_to(user)
    done = run_text(
        [*forgeflare_argv(user), "loop", "--max-iterations", "1"],
        cwd=project,
        env=scratch.env(ANTHROPIC_API_URL=server.url, **forgeflare_env(user)),
        timeout=180,
    )
    said = done.stdout + done.stderr
    assert "gate: runs in the sandbox" in said, said[-3000:]
    assert "cannot start the agent" not in said, said[-3000:]
    if user == "nobody":  # root outside the box reads any memory (CAP_SYS_PTRACE): documented
        hook_out = (project / "hook-probe.txt").read_text()
        assert _checked(hook_out) == 1, hook_out
        assert _keys(hook_out) == 0, hook_out
    gate_out = (project / "gate-probe.txt").read_text()
    assert _checked(gate_out) >= 1, gate_out
    assert _keys(gate_out) == 0, gate_out


def test_the_stop_hooks_gate_cannot_read_the_hooks_key(scratch: Scratch) -> None:
    """The hard case: the sandbox turned off, the gate's parent is the hook, whose first
    environment (from Claude Code) holds the key."""
    project = scratch.project
    (project / ".fresher").mkdir()
    (project / ".fresher" / "config.toml").write_text('[security]\nsandbox = "off"\n')
    gate = f"{scratch.probe_cmd('$PPID')} > {project}/gate-probe.txt"
    scratch.give_to("nobody")
    env = scratch.env(**forgeflare_env("nobody"))
    hook = [*forgeflare_argv("nobody"), "stop-hook"]
    started = start_frame(hook, project, env, "--gate", gate)
    assert started.returncode == 0, started.stderr
    done = claim_complete(hook, project, env)
    out = (project / "gate-probe.txt").read_text()
    assert _checked(out) == 1, (out, done.stderr)
    assert _keys(out) == 0, out


def test_the_fleets_landing_gate_cannot_read_the_fleets_key(
    scratch: Scratch, mock_api: MockAPI
) -> None:
    """The fleet holds the key for its loops; its landing gate (unsandboxed: the project
    turned the sandbox off) is its child."""
    repo = scratch.project

    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    git("config", "user.name", "T")
    git("config", "user.email", "t@example.invalid")
    (repo / ".gitignore").write_text(".fresher/runs/\n.forgeflare-fleet/\n")
    (repo / ".fresher").mkdir()
    (repo / ".fresher" / "config.toml").write_text('[security]\nsandbox = "off"\n')
    (repo / "PLAN-one.md").write_text("- [ ] one\n")
    out = scratch.root / "gate-probe.txt"
    gate = f"{scratch.probe_cmd('$PPID')} > {out}"
    (repo / "fleet.toml").write_text(
        f'[fleet]\nname = "night"\ngate = {json.dumps(gate)}\n\n[[loop]]\nrepo = "."\n'
        'name = "one"\nprompt = "Task one: do it."\nplan = "PLAN-one.md"\nmax_iterations = 2\n'
    )
    git("add", "-A")
    git("commit", "-qm", "init")
    command = (
        "echo one > one.txt && sed -i 's/- \\[ \\]/- [x]/' PLAN-one.md"
        " && git add one.txt PLAN-one.md && git commit -qm one"
    )
    server = mock_api(
        {
            "conversations": [
                {
                    "match": "Task one:",
                    "responses": [
                        tool_response(("Bash", {"command": command})),
                        text_response("Done."),
                    ],
                }
            ]
        }
    )
    scratch.give_to("nobody")
    done = run_text(
        [*forgeflare_argv("nobody"), "fleet", "run", str(repo / "fleet.toml")],
        cwd=repo,
        env=scratch.env(ANTHROPIC_API_URL=server.url, **forgeflare_env("nobody")),
        timeout=240,
    )
    text = out.read_text() if out.exists() else ""
    assert _checked(text) == 1, (text, done.stdout[-2000:], done.stderr[-2000:])
    assert _keys(text) == 0, text


FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
ONE = ("--max-iterations", "1")
STANDIN = """
import os, subprocess, sys
kind, probe, keyfile, out, stream = sys.argv[1:6]
sys.stdin.read()
with open(out, "w") as fh:
    if kind == "claude":  # the key reaches Claude Code through its apiKeyHelper only
        key = open(keyfile, "rb").read().strip()
        held = key in open("/proc/self/environ", "rb").read()
        fh.write(f"KEYS {int(held)} self:environ of 1 processes\\n")
        fh.flush()
    # the loop that started the CLI
    subprocess.run([sys.executable, probe, keyfile, str(os.getppid())], stdout=fh, check=False)
sys.stdout.write(open(stream).read())
"""


@pytest.mark.parametrize(
    ("backend", "stream"),
    [("claude", "claude/2.1.197/ok.jsonl"), ("codex", "codex/0.169.0/model.jsonl")],
)
def test_a_cli_backends_tools_cannot_read_the_loops_key(
    backend: str, stream: str, scratch: Scratch
) -> None:
    """Claude Code and Codex as the loop's agent (stand-ins replaying recorded streams): what
    their tools run, as an ordinary uid, cannot read the key from the loop that started them,
    nor (Claude Code) from the CLI's first environment. Codex gets its key in its environment:
    the docs say so."""
    project = scratch.project
    standin = scratch.root / "standin.py"
    standin.write_text(STANDIN)
    copied = scratch.root / "stream.jsonl"
    copied.write_text((FIXTURES / stream).read_text())
    out = scratch.root / "cli-probe.txt"
    parts = [PY, standin, backend, scratch.probe, scratch.keyfile, out, copied]
    command = " ".join(str(part) for part in parts)
    scratch.give_to("nobody")
    env = scratch.env(OPENAI_API_KEY=KEY, **forgeflare_env("nobody"))
    done = run_text(
        [*forgeflare_argv("nobody"), "loop", "--backend", backend, "--agent-cmd", command, *ONE],
        cwd=project,
        env=env,
        timeout=180,
    )
    text = out.read_text() if out.exists() else ""
    assert _checked(text) == (2 if backend == "claude" else 1), (text, done.stderr[-3000:])
    assert _keys(text) == 0, text


ENVIRON_HOOK = """\
import os, pathlib
from forgeflare.hooks import hook

KEY = pathlib.Path(os.environ["KEYFILE"]).read_text().strip()


@hook("PreToolUse", match="Bash")
def held(input):
    mine = sum(KEY in value for value in os.environ.values())
    try:
        first = str(int(KEY.encode() in pathlib.Path("/proc/self/environ").read_bytes()))
    except PermissionError:  # non-dumpable: root's, even for the process itself
        first = "-"
    pathlib.Path("agent-environ.txt").write_text(f"os.environ {mine} first {first}\\n")
    return None
"""


@pytest.mark.parametrize("user", ["nobody", "root"])
def test_no_forgeflare_process_keeps_the_key_in_its_environment(
    user: str, scratch: Scratch, mock_api: MockAPI
) -> None:
    """The loop hands the key to its agent through the key channel; the agent (a hook module
    runs inside it) holds none in ``os.environ`` or its first environment (the key sits in
    its HTTP client's header only), nor does a lifecycle hook, a Bash command or the gate."""
    project = scratch.project
    (project / "keyhooks.py").write_text(ENVIRON_HOOK)
    hooks = project / ".fresher" / "hooks"
    hooks.mkdir(parents=True)
    check = f'{PY} -c "import os; print(sum(open(\\"{scratch.keyfile}\\").read().strip() in v'
    check += ' for v in os.environ.values()))"'
    (hooks / "started").write_text(f"#!/bin/sh\n{check} > {project}/hook-environ.txt\n")
    (hooks / "started").chmod(0o755)
    gate = f"{check} > gate-environ.txt"
    (project / ".fresher" / "config.toml").write_text(
        f"[agent]\nbackend = 'forgeflare'\nextra_args = '--hooks-module keyhooks'\n"
        f"[limits]\ngate = {json.dumps(gate)}\nstall_after = 0\n"
        f'[security]\nreadable = ["{scratch.keyfile}"]\n'
    )
    server = mock_api(
        {
            "responses": [
                tool_response(("Bash", {"command": f"{check} > bash-environ.txt"})),
                text_response("Done.\n<loop-done>COMPLETE</loop-done>"),
            ],
            "when_exhausted": "end_turn",
        }
    )
    scratch.give_to(user)
    env = scratch.env(ANTHROPIC_API_URL=server.url, KEYFILE=str(scratch.keyfile))
    done = run_text(
        [*forgeflare_argv(user), "loop", "--max-iterations", "1"],
        cwd=project,
        env={**env, **forgeflare_env(user)},
        timeout=180,
    )
    said = done.stdout + done.stderr
    held = project / "agent-environ.txt"
    assert held.exists(), said[-3000:]
    assert held.read_text() in ("os.environ 0 first 0\n", "os.environ 0 first -\n"), said[-3000:]
    for name in ("hook-environ.txt", "bash-environ.txt", "gate-environ.txt"):
        assert (project / name).read_text() == "0\n", (name, said[-3000:])
