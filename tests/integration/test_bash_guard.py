"""The shipped ``bash-guard.py`` run for real: blocks a destructive command with a reason,
allows an ordinary one, fails closed on unreadable input (its decision core is tested in-process
in tests/unit/test_guard_script.py)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from forgeflare.templates import init_project
from template_hooks_support import hook_env, pre_tool_use, run_hook_script


def test_guard_blocks_rm_rf_build_and_allows_ls(tmp_path: Path) -> None:
    project = tmp_path
    init_project(project)
    blocked = run_hook_script(project, "bash-guard.py", pre_tool_use("rm -rf build"))
    assert blocked["action"] == "block"
    assert "destructive command" in blocked["reason"]
    assert "rm -r build" in blocked["reason"]
    assert run_hook_script(project, "bash-guard.py", pre_tool_use("ls")) == {"action": "allow"}
    # Unreadable input is a block with a reason (the guard fails closed, and says why).
    done = subprocess.run(
        [str(project / ".forgeflare" / "hooks" / "bash-guard.py")],
        input="not json",
        env=hook_env(),
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert json.loads(done.stdout)["action"] == "block"
