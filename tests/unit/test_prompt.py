"""The system prompt takes the project's instructions, named and capped."""

from __future__ import annotations

from pathlib import Path

from forgeflare.agent import INSTRUCTIONS_CAP, build_system_prompt


def test_agents_md_first_then_claude_md(tmp_path: Path) -> None:
    assert "Project instructions" not in build_system_prompt(tmp_path)
    (tmp_path / "CLAUDE.md").write_text("Use tabs.")
    assert "Project instructions from CLAUDE.md:\n<instructions>\nUse tabs." in (
        build_system_prompt(tmp_path)
    )
    (tmp_path / "AGENTS.md").write_text("Run make test.")
    prompt = build_system_prompt(tmp_path)
    assert "from AGENTS.md" in prompt
    assert "Use tabs." not in prompt


def test_loop_instructions_and_the_cap(tmp_path: Path) -> None:
    (tmp_path / ".fresher").mkdir()
    (tmp_path / ".fresher" / "AGENTS.md").write_text("x" * (INSTRUCTIONS_CAP + 10))
    assert ".fresher/AGENTS.md" not in build_system_prompt(tmp_path)
    prompt = build_system_prompt(tmp_path, loop=True)
    assert "from .fresher/AGENTS.md" in prompt
    assert "[... 10 more characters of .fresher/AGENTS.md cut ...]" in prompt
