"""Running the hook scripts `forgeflare init` ships, as the agent runs them (JSON on stdin)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any


def hook_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FRESHER_")}
    # The scripts say `#!/usr/bin/env python3`: the test's interpreter answers to that name.
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env.update(extra)
    return env


def run_hook_script(root: Path, script: str, payload: dict[str, Any], **env: str) -> dict[str, Any]:
    done = subprocess.run(
        [str(root / ".forgeflare" / "hooks" / script)],
        input=json.dumps({"cwd": str(root), **payload}),
        cwd=root,
        env=hook_env(**env),
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    value = json.loads(done.stdout)
    assert isinstance(value, dict)
    return value


def pre_tool_use(command: str, phase: str = "guard", **extra: Any) -> dict[str, Any]:
    return {
        "event": "PreToolUse",
        "phase": phase,
        "tool": "Bash",
        "input": {"command": command},
        "tool_iterations": 1,
        **extra,
    }


def post_tool_use(command: str, *, is_error: bool = False, tool: str = "Bash") -> dict[str, Any]:
    return {
        "event": "PostToolUse",
        "tool": tool,
        "input": {"command": command},
        "result": "OK" if not is_error else "FAILED\n[exit code 1]",
        "is_error": is_error,
        "tool_iterations": 2,
    }
