"""``forgeflare init`` on real directories: files, modes, validation, keep / force / dry-run."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli_inprocess import run_cli
from forgeflare import _app as cli
from forgeflare.hooks import load_hooks_file
from forgeflare.supervisor import LoopConfig, load_config
from forgeflare.templates import (
    GITIGNORE_LINES,
    TemplateError,
    init_project,
    template_files,
)
from project_support import run_text

ALL = sorted({f.relpath for f in template_files()} | {".gitignore"})


def _init(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli.app, ["init", *args])
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.output


def _files(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}


def test_init_into_an_empty_dir_with_the_real_command(tmp_path: Path) -> None:
    project = tmp_path / "new-project"
    done = run_text([sys.executable, "-m", "forgeflare", "init", str(project)], timeout=60)
    assert done.returncode == 0, done.stderr
    assert _files(project) == set(ALL)
    for rel in ALL:
        assert f"created         {rel}" in done.stdout
    assert "forgeflare loop --mode planning" in done.stdout
    assert f"--dir {project}" in done.stdout

    for f in template_files():
        mode = stat.S_IMODE((project / f.relpath).stat().st_mode)
        assert bool(mode & stat.S_IXUSR) == f.executable, f.relpath
        assert (project / f.relpath).read_text() == f.content

    validate = run_cli(["hooks", "validate", ".forgeflare/hooks.toml"], cwd=project)
    assert validate.returncode == 0, validate.stderr
    assert validate.stdout.strip() == "OK: 4 hooks"

    loaded = load_config(project, env={})
    assert loaded.warnings == []
    assert loaded.config == LoopConfig()
    assert loaded.sources == {
        key: ".fresher/config.toml"
        for key in (
            f"{section}.{field}"
            for section, model in LoopConfig.model_fields.items()
            for field in model.annotation.model_fields  # type: ignore[union-attr]
            if f"{section}.{field}" != "agent.profiles"  # a table of tables: none by default
        )
    }

    gitignore = (project / ".gitignore").read_text().splitlines()
    assert all(line in gitignore for line in GITIGNORE_LINES)


def test_hooks_file_has_the_four_hooks_the_brief_names(tmp_path: Path) -> None:
    init_project(tmp_path)
    hooks = load_hooks_file(tmp_path / ".forgeflare" / "hooks.toml")
    assert hooks is not None
    shape = [(h.event, h.effective_phase, h.match_tool) for h in hooks.hooks]
    assert shape == [
        ("PreToolUse", "guard", "Bash"),
        ("PreToolUse", "observe", None),
        ("PostToolUse", None, "Bash"),
        ("Stop", None, None),
    ]
    for h in hooks.hooks:
        script = tmp_path / h.command
        assert script.is_file(), h.command
        assert os.access(script, os.X_OK), h.command


def test_existing_files_are_kept(tmp_path: Path) -> None:
    (tmp_path / "IMPLEMENTATION_PLAN.md").write_text("# mine\n- [ ] my task\n")
    (tmp_path / ".fresher").mkdir()
    (tmp_path / ".fresher" / "config.toml").write_text("[fresher]\nmax_iterations = 7\n")
    (tmp_path / ".gitignore").write_text("node_modules/\n.entire/\n")
    code, out = _init(str(tmp_path))
    assert code == 0
    assert (tmp_path / "IMPLEMENTATION_PLAN.md").read_text() == "# mine\n- [ ] my task\n"
    assert "max_iterations = 7" in (tmp_path / ".fresher" / "config.toml").read_text()
    assert "exists, kept    IMPLEMENTATION_PLAN.md" in out
    assert "exists, kept    .fresher/config.toml" in out
    assert f"merged          .gitignore (+{len(GITIGNORE_LINES) - 1} lines)" in out
    ignore = (tmp_path / ".gitignore").read_text()
    assert ignore.startswith("node_modules/\n.entire/\n")
    assert ignore.count(".entire/") == 1
    assert all(line in ignore.splitlines() for line in GITIGNORE_LINES)

    assert out.splitlines()[0] == (
        f"forgeflare init: wrote {len(ALL) - 2} file(s) in {tmp_path}, kept 2"
    )

    # A second run changes nothing at all, and says so.
    before = {rel: (tmp_path / rel).read_bytes() for rel in _files(tmp_path)}
    code, out = _init(str(tmp_path))
    assert code == 0
    assert out.splitlines()[0] == (
        f"forgeflare init: nothing written in {tmp_path}: all {len(ALL)} file(s) exist and were "
        "kept"
    )
    assert "created" not in out
    assert "unchanged       .gitignore" in out
    assert {rel: (tmp_path / rel).read_bytes() for rel in _files(tmp_path)} == before


def test_dry_run_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / "IMPLEMENTATION_PLAN.md").write_text("mine\n")
    code, out = _init(str(tmp_path), "--dry-run", "--claude")
    assert code == 0
    assert _files(tmp_path) == {"IMPLEMENTATION_PLAN.md"}
    assert "would create    .fresher/hooks/started" in out
    assert "exists, kept    IMPLEMENTATION_PLAN.md" in out
    assert "would merge     .claude/settings.json" in out
    assert "nothing written" in out
    # A missing directory is not created either.
    code, _ = _init(str(tmp_path / "missing"), "--dry-run")
    assert code == 0
    assert not (tmp_path / "missing").exists()


def test_force_overwrites_and_restores_modes(tmp_path: Path) -> None:
    init_project(tmp_path)
    started = tmp_path / ".fresher" / "hooks" / "started"
    started.write_text("#!/bin/sh\nexit 0\n")
    started.chmod(0o644)
    (tmp_path / "IMPLEMENTATION_PLAN.md").write_text("mine\n")
    code, out = _init(str(tmp_path), "--force")
    assert code == 0
    assert "overwritten     .fresher/hooks/started" in out
    assert "overwritten     IMPLEMENTATION_PLAN.md" in out
    assert "unchanged       .fresher/hooks/finished" in out
    files = {f.relpath: f for f in template_files()}
    assert started.read_text() == files[".fresher/hooks/started"].content
    assert os.access(started, os.X_OK)
    assert (tmp_path / "IMPLEMENTATION_PLAN.md").read_text() == files[
        "IMPLEMENTATION_PLAN.md"
    ].content


def test_claude_sets_the_agent_and_installs_the_stop_hook(tmp_path: Path) -> None:
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"model": "x"}))
    code, out = _init(str(tmp_path), "--claude")
    assert code == 0
    cfg = load_config(tmp_path, env={}).config
    assert cfg.backend_name == "claude"
    data = json.loads(settings.read_text())
    assert data["model"] == "x"
    commands = [h["command"] for g in data["hooks"]["Stop"] for h in g["hooks"]]
    # By absolute path (runs without PATH): the forgeflare beside this interpreter.
    assert commands == [f"{Path(sys.executable).absolute().parent / 'forgeflare'} stop-hook"]
    assert "Stop hook added" in out
    # Idempotent, and an existing config is kept with a hint.
    code, out = _init(str(tmp_path), "--claude")
    assert code == 0
    assert "Stop hook already there" in out
    assert "exists, kept    .fresher/config.toml (set [agent] backend yourself)" in out
    data = json.loads(settings.read_text())
    assert len(data["hooks"]["Stop"]) == 1


def test_unusable_targets_are_one_clear_error(tmp_path: Path) -> None:
    a_file = tmp_path / "file"
    a_file.write_text("x")
    with pytest.raises(TemplateError, match="not a directory"):
        init_project(a_file)
    (tmp_path / "p" / ".gitignore").mkdir(parents=True)
    with pytest.raises(TemplateError, match=r"\.gitignore: is a directory"):
        init_project(tmp_path / "p")
    done = run_cli(["init", str(a_file)], cwd=tmp_path)
    assert done.returncode == 2  # a usage error, as everywhere
    assert done.stderr.strip() == f"forgeflare: error: {a_file}: not a directory"


def test_an_agent_adding_everything_commits_no_file_the_loop_writes(tmp_path: Path) -> None:
    """init's .gitignore covers every run-time file: an agent's ``git add -A`` in the middle of
    a loop (its lock held, a stop requested) commits only its own work."""
    for args in (["init", "-q"], ["config", "user.name", "T"], ["config", "user.email", "t@t"]):
        subprocess.run(["git", *args], cwd=tmp_path, check=True)
    assert _init(str(tmp_path))[0] == 0
    stop = f"{sys.executable} -m forgeflare stop ."
    work = "echo work > work.txt; git add -A; git commit -qm work"
    agent = f"sh -c 'cat >/dev/null; {stop} >/dev/null; {work}'"
    loop = ["loop", "--dir", str(tmp_path), "--trust-project", "--max-iterations", "1"]
    done = run_text([sys.executable, "-m", "forgeflare", *loop, "--agent-cmd", agent], timeout=60)
    assert done.returncode in (10, 18), done.stderr
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=tmp_path, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert "work.txt" in tracked
    runtime = [f for f in tracked if f.startswith((".fresher/runs/", ".entire/"))]
    runtime += [f for f in tracked if f in (".fresher/loop.lock", ".fresher/stop-request")]
    assert runtime == []
