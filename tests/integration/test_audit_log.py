"""The shipped ``audit-log.py`` run for real: one tab-separated line per tool call."""

from __future__ import annotations

from pathlib import Path

from forgeflare.templates import init_project
from template_hooks_support import pre_tool_use, run_hook_script


def test_audit_appends_one_line_per_call(tmp_path: Path) -> None:
    init_project(tmp_path)
    allowed = pre_tool_use("ls -l", phase="observe", blocked=False)
    run_hook_script(tmp_path, "audit-log.py", allowed)
    blocked = pre_tool_use(
        "rm -rf build",
        phase="observe",
        blocked=True,
        blocked_by=".forgeflare/hooks/bash-guard.py",
        block_reason="destructive command: no",
    )
    run_hook_script(tmp_path, "audit-log.py", blocked)
    read = {
        "event": "PreToolUse",
        "phase": "observe",
        "tool": "Read",
        "input": {"file_path": "a\tb\nc.md"},
        "blocked": False,
    }
    run_hook_script(tmp_path, "audit-log.py", read)
    lines = (tmp_path / ".forgeflare" / "audit.log").read_text().splitlines()
    assert len(lines) == 3
    rows = [line.split("\t") for line in lines]
    assert [r[1:4] for r in rows] == [
        ["Bash", "allowed", "ls -l"],
        ["Bash", "BLOCKED", "rm -rf build"],
        ["Read", "allowed", "a b c.md"],
    ]
    assert rows[1][4] == "blocked by .forgeflare/hooks/bash-guard.py: destructive command: no"
    assert all(r[0].endswith("Z") and len(r[0]) == 20 for r in rows)
