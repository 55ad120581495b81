"""The shipped Bash guard's decision, called in-process (its script is also run for real in
tests/integration/test_bash_guard.py)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forgeflare.templates import GUARD_SCRIPT, guard_core, render_guard_script, template_files

# The guard as `forgeflare init` writes it (the shipped template carries only the markers).
_WRITTEN = next(f for f in template_files() if f.relpath == ".forgeflare/hooks/bash-guard.py")


def _from_text(text: str, name: str) -> ModuleType:
    module = ModuleType(name)
    exec(compile(text, f"<{name}>", "exec"), module.__dict__)
    return module


def _load(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


guard = _from_text(_WRITTEN.content, "bash_guard")
BUILT_IN_DENIED: list[str] = _load(Path(__file__).with_name("test_tools_guard.py"), "tg").DENIED

BLOCKED = [
    "rm -rf build",
    "rm -fr build",
    "rm -r -f build",
    "rm -R dist",
    "rm --recursive x",
    "/bin/rm -rf /",
    "sudo rm -rf /var",
    "sudo -n rm -rf x",
    "env FOO=1 rm -rf x",
    "FOO=1 rm -rf x",
    "timeout 10 rm -rf x",
    "find . -name '*.o' | xargs rm -rf",
    "make && rm -rf out",
    "true; rm -rf out",
    "echo $(rm -rf out)",
    "(cd x && rm -rf y)",
    "bash -c 'rm -rf build'",
    'sh -c "git reset --hard"',
    "eval rm -rf build",
    "git reset --hard",
    "git reset --hard HEAD~1",
    "git -C repo reset --hard",
    "git clean -fd",
    "git clean -xdf",
    "git clean --force",
    "git push --force",
    "git push -f origin main",
    "git push -fu origin main",
    "git push --force-with-lease",
    "git push origin +main",
    "git checkout -- .",
    "mkfs.ext4 /dev/sda1",
    "mkfs -t ext4 /dev/sdb",
    "dd if=/dev/zero of=/dev/sda bs=1M",
    "cat image > /dev/sda",
    "shred secrets.txt",
    "chmod -R 777 /",
    ":(){ :|:& };:",
    "bomb(){ bomb|bomb& };bomb",
]

ALLOWED = [
    "ls",
    "ls -la build",
    "rm build/stale.txt",
    "rm -f out.log",
    "python3 -m unittest -v",
    "pytest -q",
    "git status",
    "git reset HEAD file.txt",
    "git reset --soft HEAD~1",
    "git clean -n",
    "git push origin main",
    "git checkout -b feature",
    "dd if=/dev/zero of=/dev/null count=1",
    "dd if=a of=b",
    "echo 'rm -rf is dangerous'",
    "grep -r 'rm -rf' docs",
    "chmod -R 755 build",
    "mv build build.old",
    "",
]


@pytest.mark.parametrize("command", BLOCKED)
def test_destructive_commands_are_blocked_with_a_reason(command: str) -> None:
    reason = guard.check(command)
    assert isinstance(reason, str)
    assert reason


@pytest.mark.parametrize("command", ALLOWED)
def test_ordinary_commands_are_allowed(command: str) -> None:
    assert guard.check(command) is None


def test_rm_reason_names_the_target_and_an_alternative() -> None:
    reason = guard.check("rm -rf build")
    assert "rm -r build" in reason
    assert "mv" in reason


@given(st.text(max_size=200))
def test_check_never_raises(command: str) -> None:
    result = guard.check(command)
    assert result is None or isinstance(result, str)


@given(
    prefix=st.sampled_from(["", "cd src && ", "true; ", "sudo ", "echo hi | "]),
    flags=st.sampled_from(["-rf", "-fr", "-r", "-R", "-Rf", "--recursive", "-r -f"]),
    target=st.from_regex(r"[a-z][a-z0-9_./-]{0,15}", fullmatch=True),
)
def test_recursive_rm_is_blocked_in_any_position(prefix: str, flags: str, target: str) -> None:
    assert guard.check(f"{prefix}rm {flags} {target}") is not None


def test_init_writes_the_current_core_and_the_package_ships_it_once() -> None:
    assert guard_core() in _WRITTEN.content
    assert render_guard_script(_WRITTEN.content) == _WRITTEN.content
    shipped = GUARD_SCRIPT.read_text(encoding="utf-8")
    assert "def check_command" not in shipped  # only the markers: the core lives in _guard.py
    assert render_guard_script(shipped) == _WRITTEN.content


def test_render_replaces_only_the_core() -> None:
    stale = "head\n# --- guard core begin ---\nold = 1\n# --- guard core end ---\ntail\n"
    assert render_guard_script(stale) == (
        "head\n# --- guard core begin ---\n" + guard_core() + "# --- guard core end ---\ntail\n"
    )
    with pytest.raises(ValueError, match="markers"):
        render_guard_script("no markers here")


@pytest.mark.parametrize("command", BUILT_IN_DENIED)
def test_the_template_blocks_everything_the_built_in_check_blocks(command: str) -> None:
    assert guard.check(command) is not None
