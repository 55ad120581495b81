"""The shipped ``session-end.py`` run for real: one line per session end."""

from __future__ import annotations

from pathlib import Path

from forgeflare.templates import init_project
from template_hooks_support import run_hook_script


def test_stop_hook_appends_the_session_end(tmp_path: Path) -> None:
    init_project(tmp_path)
    for reason, iterations, tokens in (("end_turn", 7, 45000), ("convergence_signal", 2, 900)):
        payload = {
            "event": "Stop",
            "reason": reason,
            "tool_iterations": iterations,
            "total_tokens": tokens,
        }
        assert run_hook_script(tmp_path, "session-end.py", payload) == {"action": "continue"}
    rows = [
        line.split("\t")[1:]
        for line in (tmp_path / ".forgeflare" / "sessions.log").read_text().splitlines()
    ]
    assert rows == [
        ["reason=end_turn", "tool_iterations=7", "total_tokens=45000"],
        ["reason=convergence_signal", "tool_iterations=2", "total_tokens=900"],
    ]
