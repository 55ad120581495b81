"""The Bash check follows the shell: the destructive and ordinary tables (tests/guard_table.py)
on the pure check, the reasons it gives, and its cost growing linearly with the command."""

from __future__ import annotations

import sys
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forgeflare.agent.tools import check_command, denied_reason
from forgeflare.templates import GUARD_SCRIPT_NAME, template_files
from guard_table import DESTRUCTIVE, ORDINARY, PROJECT_BELOW_HOME, UP_TO_HOME, UP_TO_ROOT

HOME = "/home/dev"
PROJECT = HOME + "/" + "/".join(PROJECT_BELOW_HOME)


def check(command: str) -> str | None:
    return check_command(command, cwd=PROJECT, home=HOME)


def test_the_tables_are_big_enough() -> None:
    assert len(DESTRUCTIVE) >= 250
    assert len(ORDINARY) >= 40
    assert not set(DESTRUCTIVE) & set(ORDINARY)


@pytest.mark.parametrize("command", DESTRUCTIVE)
def test_destructive_spellings_are_refused(command: str) -> None:
    assert check(command)
    # Without knowing where it runs (the project and ~ stay symbolic) it is refused too.
    assert check_command(command)


@pytest.mark.parametrize("command", ORDINARY)
def test_ordinary_commands_run(command: str) -> None:
    assert check(command) is None
    assert check_command(command) is None


def _template_check() -> Callable[..., str | None]:
    written = next(f for f in template_files() if f.relpath.endswith(GUARD_SCRIPT_NAME))
    namespace: dict[str, object] = {"__name__": "bash_guard"}
    exec(compile(written.content, "<bash-guard.py>", "exec"), namespace)
    return namespace["check"]  # type: ignore[return-value]


def test_the_template_guard_refuses_every_destructive_spelling() -> None:
    template_check = _template_check()
    missed = [c for c in DESTRUCTIVE if template_check(c, PROJECT) is None]
    assert missed == []


@pytest.mark.parametrize(
    ("command", "words"),
    [
        ("cd / && rm -rf *", "everything in /"),
        ("pushd / && rm -rf *", "everything in /"),
        ("cd /tmp && cd - && rm -rf *", "the project"),
        (f"cd {UP_TO_HOME} && rm -rf *", "everything in ~"),
        (f"rm -rf {UP_TO_ROOT}", "would delete /"),
        ("rm -rf ../..", "/home/dev/src/a/b"),
        ('cd "$X" && rm -rf *', "a directory the check cannot know (after cd $x)"),
        ("cd $(mktemp -d) && rm -rf .", "cannot know"),
        ("rm -rf ${HOME:?}", "would delete ~"),
        ("rm -rf $'\\x2f'", "would delete /"),
        ("echo / | xargs -I{} rm -rf {}", "would delete /"),
        ("find / -print0 | xargs -0 rm -rf", "find / lists all of /"),
        ("find ~ -name '*.bak' -delete", "-delete there"),
        ("python3 -c \"import shutil; shutil.rmtree('/')\"", "python3 code that names a disaster"),
        ("git -c alias.p='push --force' p", "the git alias p runs a refused command"),
        ("git send-pack --force origin main", "send-pack"),
        ("b(){ b&b; }; b", "fork bomb"),
        ("wipefs -a /dev/sdb", "wipefs"),
    ],
)
def test_reasons_say_what_and_where(command: str, words: str) -> None:
    assert words in (check(command) or "")


@pytest.mark.parametrize(
    "command",
    [
        # State does not leak out of a subshell, a substitution or a bash -c string.
        "(cd /) && rm -rf build",
        "echo $(cd /) && rm -rf build",
        "bash -c 'cd /' && rm -rf build",
        "pushd / && popd && rm -rf build",
        # An unknown directory still allows deleting a name in it.
        'cd "$X" && rm -rf build',
        "cd $(mktemp -d) && rm -rf out",
    ],
)
def test_the_working_directory_is_followed_not_guessed(command: str) -> None:
    assert check(command) is None


_SHAPES = [
    "cd src && rm -rf __pycache__; cd ..; ",
    "pushd build > /dev/null; rm -rf out; popd; ",
    "(cd docs && make html); ",
    "echo a b | xargs -n1 echo; ",
    'echo "$(pwd)" `id` $HOME; ',
    "find . -name '*.pyc' -delete; ",
    "x=$x$x; rm -rf $x/build; ",
    "cat <<EOF | sh\necho hi\nEOF\n",
    "python3 -c 'print(1)'; ",
    "git add -A && git commit -m wip; ",
    "echo $( echo $( echo a ) ) ",
    "rm -rf build/out.o ",
    "( $( ",
    "xargs echo <<E\n",
    "echo x | rev | ",
    "cd src && rm -rf __pycache__; pushd ../docs; popd; ",
    "(cd docs && make html); echo a b | xargs -n1 echo; ",
    "python3 -c 'print(1)'; echo cHJpbnQK | base64 -d | sh; ",
]


def _calls(command: str) -> int:
    """How many Python and C calls the check makes: a count of work that load cannot change."""
    count = 0

    def profile(frame: object, event: str, arg: object) -> None:
        nonlocal count
        if event in ("call", "c_call"):
            count += 1

    sys.setprofile(profile)
    try:
        check(command)
    finally:
        sys.setprofile(None)
    return count


@settings(max_examples=16)
@given(shape=st.sampled_from(_SHAPES), tail=st.sampled_from(["", "ls", "rm -rf build", ")"]))
def test_the_check_grows_linearly_with_the_command(shape: str, tail: str) -> None:
    # 8 times the text costs about 8 times the calls (a quadratic reading: 64 times). Calls, not
    # seconds: a timed assertion fails on a busy machine; bench/bench_guard.py prints the times.
    small = shape * (8_000 // len(shape)) + tail
    big = shape * (64_000 // len(shape)) + tail
    small_calls, big_calls = _calls(small), _calls(big)
    assert big_calls / small_calls < 12, (shape, small_calls, big_calls)


def test_the_agent_check_starts_in_the_project_and_knows_home(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HOME", HOME)
    chmod_home = f"chmod -R 777 {UP_TO_HOME}"
    assert "~" in (denied_reason(chmod_home, cwd=PROJECT) or "")
    # Without the project's place, five directories up is only "above the project".
    assert denied_reason(chmod_home) is None
    assert denied_reason("cd .. && rm -rf build", cwd=PROJECT) is None


def test_the_template_hook_starts_in_the_events_cwd(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", HOME)
    template_check = _template_check()
    assert template_check(f"chmod -R 777 {UP_TO_HOME}", PROJECT)
    assert template_check(f"chmod -R 777 {UP_TO_HOME}") is None
