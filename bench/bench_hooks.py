"""Hook call cost: the pipeline's ``pre_tool_use`` with one guard against a bare spawn.

Both sides run the same command under trio, ``bash -c`` with a guard that reads its stdin and
answers ``{"action": "allow"}``:

- **bare**: ``trio.lowlevel.open_process``, write the JSON payload, close stdin, read stdout to
  EOF, wait, ``json.loads``: the floor any hook runner pays.
- **pipeline**: ``HookDispatcher.pre_tool_use`` with that one guard (config lookup, matching,
  payload building, process-group handling, output interpretation; no audit file).
- **pinned**: the same pipeline with the trust check before the call, as ``forgeflare run``
  does it (hooks.toml parsed, the guard's directory of 20 files listed and stat-checked).

Rounds alternate the two so that machine load hits both alike; the figure is the median of
the per-round ratios pipeline/bare (target <= 1.25), with medians and minimums beside it. Run::

    .venv/bin/python bench/bench_hooks.py [--rounds N]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
from functools import partial
from pathlib import Path
from typing import Any

import trio

from _paired import alternate, report
from forgeflare.hooks import Allow, HookConfig, HookDispatcher
from forgeflare.trust import TrustPin, agent_trust_items

COMMAND = """read -r -d '' _; echo '{"action":"allow"}'"""
INPUT: dict[str, Any] = {"command": "cargo test --release", "timeout": 120}


async def bare_call(cwd: Path) -> None:
    payload = json.dumps(
        {
            "event": "PreToolUse",
            "phase": "guard",
            "tool": "Bash",
            "input": INPUT,
            "tool_iterations": 3,
            "cwd": str(cwd),
        }
    ).encode()
    proc = await trio.lowlevel.open_process(
        ["bash", "-c", COMMAND], stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=cwd
    )
    assert proc.stdin is not None
    assert proc.stdout is not None
    await proc.stdin.send_all(payload)
    await proc.stdin.aclose()
    chunks = []
    while chunk := await proc.stdout.receive_some(65536):
        chunks.append(chunk)
    await proc.wait()
    await proc.stdout.aclose()
    assert json.loads(b"".join(chunks))["action"] == "allow"


async def main(rounds: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp)
        pipeline = HookDispatcher(
            project_dir=cwd,
            shell_hooks=[HookConfig(event="PreToolUse", match_tool="Bash", command=COMMAND)],
            log=print,
        )

        async def pipeline_call() -> None:
            result = await pipeline.pre_tool_use(tool="Bash", input=INPUT, tool_iterations=3)
            assert isinstance(result, Allow)

        hooks = cwd / ".forgeflare" / "hooks"
        hooks.mkdir(parents=True)
        (hooks / "guard.sh").write_text(COMMAND + "\n")
        for i in range(19):
            (hooks / f"lib{i}.sh").write_text(f"# helper {i}\n" * 50)
        (cwd / ".forgeflare" / "hooks.toml").write_text(
            '[[hooks]]\nevent = "PreToolUse"\nmatch_tool = "Bash"\n'
            'command = "bash .forgeflare/hooks/guard.sh"\n'
        )
        items = agent_trust_items(cwd)
        pin = TrustPin(
            cwd, lambda: agent_trust_items(cwd), items, watch=[cwd / ".forgeflare" / "hooks.toml"]
        )
        pinned = HookDispatcher(
            project_dir=cwd,
            shell_hooks=[HookConfig(event="PreToolUse", match_tool="Bash", command=COMMAND)],
            log=print,
            pin=pin.refusal,
        )

        async def pinned_call() -> None:
            result = await pinned.pre_tool_use(tool="Bash", input=INPUT, tool_iterations=3)
            assert isinstance(result, Allow)

        for _ in range(20):  # warm up every path
            await bare_call(cwd)
            await pipeline_call()
            await pinned_call()
        bare, ours = await alternate(partial(bare_call, cwd), pipeline_call, rounds)
        report(("bare", bare), ("pipeline", ours), "target <= 1.25")
        plain, checked = await alternate(pipeline_call, pinned_call, rounds)
        report(("pipeline", plain), ("pinned", checked), "target <= 1.10")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=300)
    trio.run(main, parser.parse_args().rounds)
