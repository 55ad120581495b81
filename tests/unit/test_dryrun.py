"""``forgeflare loop --dry-run``: its report (pure) and the first iteration built by the loop's
own parts, with nothing written and no secret's value shown."""

from __future__ import annotations

from pathlib import Path

from forgeflare.supervisor.run._dryrun import dry_run_lines, first_iteration
from loop_support import loop_options


def test_without_a_key_by_descriptor_the_environment_line_says_none() -> None:
    lines = dry_run_lines(
        prompt="p",
        argv=["claude", "-p"],
        env_names=["B", "A"],
        key_names=[],
        bounds="b",
        trust="t",
    )
    assert "agent environment: A B" in lines
    assert lines[1:4] == ["bounds: b", "trust: t", "agent command: claude -p"]


def test_the_first_iteration_is_built_and_nothing_is_written(tmp_path: Path) -> None:
    project = tmp_path / "project"
    secrets = {"ANTHROPIC_API_KEY": "sk-the-value", "GITHUB_TOKEN": "gh-the-value"}
    opts = loop_options(project, config={"fresher": {"max_iterations": 3}}, env=secrets)
    lines = first_iteration(opts, "holds (empty)")
    text = "\n".join(lines)
    assert "-value" not in text
    assert lines[1].startswith("bounds: 3 iterations,")
    assert lines[2] == "trust: holds (empty)"
    assert lines[3].endswith("-m forgeflare run")
    keys, names = next(line for line in lines if line.startswith("agent environment")).split(": ")
    assert keys == "agent environment (its key ANTHROPIC_API_KEY through a descriptor)"
    assert {"FRESHER_ITERATION", "HOME", "PATH"} <= set(names.split())
    assert "GITHUB_TOKEN" not in names
    assert "BUILDING mode" in text  # the prompt the agent would read on stdin
    assert sorted(p.name for p in tmp_path.iterdir()) == ["project"]  # not even its home
    assert list(project.iterdir()) == []


def test_dry_run_names_the_environment_never_its_values() -> None:
    lines = dry_run_lines(
        prompt="Do it.\n",
        argv=["python", "-m", "forgeflare", "run", "--model", "a b"],
        env_names=["PATH", "FRESHER_ITERATION"],
        key_names=["ANTHROPIC_API_KEY"],
        bounds="2 iterations",
        trust="holds (empty)",
    )
    assert "agent command: python -m forgeflare run --model 'a b'" in lines
    assert (
        "agent environment (its key ANTHROPIC_API_KEY through a descriptor): FRESHER_ITERATION PATH"
    ) in lines
    assert lines[-3:] == ["---", "Do it.", "---"]
