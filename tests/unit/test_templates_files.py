"""The pure parts of ``forgeflare init``: the file list, the per-file decision, .gitignore."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import forgeflare.templates as templates
from forgeflare.supervisor import LoopConfig, default_config_toml, default_prompt, load_config
from forgeflare.templates import (
    GITIGNORE_LINES,
    Action,
    TemplateFile,
    backend_config_toml,
    merge_gitignore,
    plan_init,
    template_files,
)

EXPECTED = {
    ".forgeflare/hooks.toml",
    ".forgeflare/hooks/audit-log.py",
    ".forgeflare/hooks/bash-guard.py",
    ".forgeflare/hooks/convergence-check.py",
    ".forgeflare/hooks/session-end.py",
    ".fresher/AGENTS.md",
    ".fresher/PROMPT.building.md",
    ".fresher/PROMPT.planning.md",
    ".fresher/config.toml",
    ".fresher/hooks/custom/notify",
    ".fresher/hooks/finished",
    ".fresher/hooks/next_iteration",
    ".fresher/hooks/started",
    "IMPLEMENTATION_PLAN.md",
    "specs/README.md",
}
EXECUTABLE = {p for p in EXPECTED if "/hooks/" in p}


def test_public_names_are_exported() -> None:
    for name in templates.__all__:
        assert getattr(templates, name) is not None
    assert set(templates.__all__) <= set(dir(templates))
    with pytest.raises(AttributeError):
        _ = templates.no_such_name  # type: ignore[attr-defined]


def test_template_files_are_the_expected_set_with_dot_directories_mapped() -> None:
    files = {f.relpath: f for f in template_files()}
    assert set(files) == EXPECTED
    assert {p for p, f in files.items() if f.executable} == EXECUTABLE
    assert not any("dot-" in p for p in files)
    for path in EXECUTABLE:
        assert files[path].content.startswith("#!/usr/bin/env "), path


def test_config_and_prompts_come_from_the_supervisor() -> None:
    files = {f.relpath: f.content for f in template_files()}
    assert files[".fresher/config.toml"] == default_config_toml()
    assert files[".fresher/PROMPT.planning.md"] == default_prompt("planning")
    assert files[".fresher/PROMPT.building.md"] == default_prompt("building")


def test_claude_config_sets_only_the_agent_backend(tmp_path: Path) -> None:
    text = backend_config_toml("claude")
    assert tomllib.loads(text)["agent"]["backend"] == "claude"
    (tmp_path / ".fresher").mkdir()
    (tmp_path / ".fresher" / "config.toml").write_text(text)
    loaded = load_config(tmp_path, env={})
    assert loaded.warnings == []
    expected = LoopConfig()
    expected.agent.backend = "claude"
    assert loaded.config == expected
    assert loaded.config.agent_argv("python")[:2] == ["claude", "-p"]
    assert "--permission-mode" in loaded.config.agent_argv("python")
    # Everything but that one line is the default file.
    diff = [
        (a, b)
        for a, b in zip(default_config_toml().splitlines(), text.splitlines(), strict=True)
        if a != b
    ]
    assert diff == [('backend = ""', 'backend = "claude"')]
    claude_files = {f.relpath: f.content for f in template_files(agent="claude")}
    assert claude_files[".fresher/config.toml"] == text


# -- plan_init: every combination of (exists?, same content?, force?) ---------------------------

FILE = TemplateFile("a/b.txt", "new\n", executable=True)


@pytest.mark.parametrize(
    ("old", "force", "action", "content"),
    [
        (None, False, Action.CREATE, "new\n"),
        (None, True, Action.CREATE, "new\n"),
        ("old\n", False, Action.KEEP, None),
        ("new\n", False, Action.KEEP, None),
        ("old\n", True, Action.OVERWRITE, "new\n"),
        ("new\n", True, Action.UNCHANGED, "new\n"),
    ],
)
def test_plan_init_decides_per_file(
    old: str | None, force: bool, action: Action, content: str | None
) -> None:
    actions = plan_init([FILE], {"a/b.txt": old}, force=force)
    first = actions[0]
    assert (first.relpath, first.action, first.content) == ("a/b.txt", action, content)
    assert first.executable
    assert first.writes == (action in (Action.CREATE, Action.OVERWRITE))


@pytest.mark.parametrize("force", [False, True])
def test_plan_init_merges_gitignore_and_never_overwrites_it(force: bool) -> None:
    fresh = plan_init([], {}, force=force)[-1]
    assert (fresh.relpath, fresh.action) == (".gitignore", Action.CREATE)
    assert fresh.content is not None
    assert all(line in fresh.content.splitlines() for line in GITIGNORE_LINES)

    merged = plan_init([], {".gitignore": "node_modules/\n"}, force=force)[-1]
    assert merged.action is Action.MERGE
    assert merged.content is not None
    assert merged.content.startswith("node_modules/\n")
    assert merged.note == f"+{len(GITIGNORE_LINES)} lines"

    done = plan_init([], {".gitignore": "\n".join(GITIGNORE_LINES)}, force=force)[-1]
    assert (done.action, done.content) == (Action.UNCHANGED, None)


def test_labels_read_as_the_brief_says() -> None:
    keep = plan_init([FILE], {"a/b.txt": "x"})[0]
    assert keep.label(dry_run=False) == "exists, kept"
    assert keep.label(dry_run=True) == "exists, kept"
    create = plan_init([FILE], {})[0]
    assert create.label(dry_run=False) == "created"
    assert create.label(dry_run=True) == "would create"


# -- merge_gitignore: properties --------------------------------------------------------------

_line = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc")), min_size=0, max_size=20
).filter(lambda s: "\r" not in s and "\x85" not in s and "\u2028" not in s and "\u2029" not in s)
_existing = st.one_of(
    st.none(),
    st.lists(st.one_of(_line, st.sampled_from(GITIGNORE_LINES)), max_size=8).map("\n".join),
    st.lists(st.one_of(_line, st.sampled_from(GITIGNORE_LINES)), max_size=8).map(
        lambda lines: "\n".join(lines) + "\n"
    ),
)


@given(_existing)
def test_merge_gitignore_properties(existing: str | None) -> None:
    merged = merge_gitignore(existing)
    have = {line.strip() for line in (existing or "").splitlines()}
    if all(line in have for line in GITIGNORE_LINES):
        assert merged is None
        return
    assert merged is not None
    # The old text stays as it was, at the front; nothing is removed.
    assert merged.startswith(existing or "")
    lines = merged.splitlines()
    for wanted in GITIGNORE_LINES:
        assert wanted in {line.strip() for line in lines}
    # Only missing lines are added, each once.
    added = merged[len(existing or "") :].splitlines()
    for wanted in GITIGNORE_LINES:
        assert added.count(wanted) == (0 if wanted in have else 1)
    assert merged.endswith("\n")
    # Idempotent.
    assert merge_gitignore(merged) is None


_relpaths = st.sampled_from(["a", "b/c", ".d/e", "f.md"])


@given(
    files=st.dictionaries(_relpaths, st.text(max_size=5), max_size=4),
    existing=st.dictionaries(_relpaths, st.one_of(st.none(), st.text(max_size=5)), max_size=4),
    force=st.booleans(),
)
def test_plan_init_properties(
    files: dict[str, str], existing: dict[str, str | None], force: bool
) -> None:
    templates_ = [TemplateFile(rel, text) for rel, text in files.items()]
    actions = plan_init(templates_, existing, force=force)
    # One decision per file, in order, then .gitignore last.
    assert [a.relpath for a in actions] == [*files, ".gitignore"]
    for act in actions[:-1]:
        old = existing.get(act.relpath)
        if old is None:
            assert act.action is Action.CREATE
        elif not force:
            # Never overwrite without --force, and carry no content that could be written.
            assert act.action is Action.KEEP
            assert not act.writes
        else:
            assert act.action is (
                Action.UNCHANGED if old == files[act.relpath] else Action.OVERWRITE
            )
        if act.writes:
            assert act.content == files[act.relpath]
