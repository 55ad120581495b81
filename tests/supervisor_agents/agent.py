"""A stand-in agent for supervisor tests: behaviour chosen per iteration by flags.

Usage: agent.py [--ACTION[=N,...]]... where N are iteration numbers (FRESHER_ITERATION) the
action applies to; without =N it applies to every iteration.

  --final=REASON[@N,...]  write .forgeflare/convergence.json with final.reason = REASON
  --exit=CODE[@N,...]     exit with CODE
  --crash[@N,...]         die by SIGKILL of itself
  --hang[@N,...]          sleep for ever (in a child process too, so the group matters)
  --check[@N,...]         check the first unchecked box of IMPLEMENTATION_PLAN.md
  --commit[@N,...]        create a file and commit it
  --touch[@N,...]         create a file (no commit)
  --pidfile=PATH          write the pids of this agent and its child
  --env=PATH              dump the environment (JSON) to PATH-<iteration>
  --garble[@N,...]        write a convergence.json holding a byte that is not UTF-8
  --escape=SECONDS[@N,..] leave `env -i setsid sleep SECONDS` running (no marker, own session)
It always deletes a stale convergence.json first and prints a [tool] and a [usage] line.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path


def applies(spec: str, iteration: int) -> tuple[bool, str]:
    value, _, when = spec.partition("@")
    if not when:
        return True, value
    return str(iteration) in when.split(","), value


def main() -> int:
    iteration = int(os.environ.get("FRESHER_ITERATION", "0"))
    prompt = sys.stdin.read()
    conv = Path(".forgeflare/convergence.json")
    conv.unlink(missing_ok=True)
    print(f"agent iteration {iteration}, prompt of {len(prompt)} chars", flush=True)
    print("[tool] Read: IMPLEMENTATION_PLAN.md", file=sys.stderr, flush=True)
    print(f"[usage] in=10 out=5 total={15 * iteration}", file=sys.stderr, flush=True)
    final: str | None = None
    code = 0
    for arg in sys.argv[1:]:
        body = arg.removeprefix("--")
        if "=" in body:
            name, rest = body.split("=", 1)
        else:
            name, _, when = body.partition("@")
            rest = f"x@{when}" if when else "x"
        ok, value = applies(rest, iteration)
        if not ok:
            continue
        if name == "final":
            final = value
        elif name == "exit":
            code = int(value)
        elif name == "crash":
            os.kill(os.getpid(), signal.SIGKILL)
        elif name == "hang":
            child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
            pidfile = os.environ.get("AGENT_PIDFILE")
            if pidfile:
                Path(pidfile).write_text(f"{os.getpid()} {child.pid}\n")
            time.sleep(600)
        elif name == "check":
            plan = Path("IMPLEMENTATION_PLAN.md")
            plan.write_text(plan.read_text().replace("- [ ]", "- [x]", 1))
        elif name == "commit":
            Path(f"work-{iteration}.txt").write_text("work\n")
            subprocess.run(["git", "add", "-A", "."], check=True)
            subprocess.run(["git", "commit", "-qm", f"iteration {iteration}"], check=True)
        elif name == "touch":
            Path(f"touched-{iteration}.txt").write_text("x\n")
        elif name == "escape":
            subprocess.Popen(
                ["env", "-i", "setsid", "sleep", value],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        elif name == "garble":
            conv.parent.mkdir(exist_ok=True)
            conv.write_bytes(b'{"observations": [], "final": {"reason": "end_turn\xff"}}')
        elif name == "env":
            Path(f"{value}-{iteration}").write_text(json.dumps(dict(os.environ)))
    if final is not None:
        conv.parent.mkdir(exist_ok=True)
        state = {"observations": [], "final": {"reason": final, "total_tokens": 100}}
        conv.write_text(json.dumps(state))
    return code


if __name__ == "__main__":
    sys.exit(main())
