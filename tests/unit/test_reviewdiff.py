"""The reviewer's diff: the command that collects it and the reading of its output (pure)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forgeflare.security import git_argv
from forgeflare.security._reviewdiff import EMPTY_TREE, CollectedDiff, diff_argv, split_parts

SEP = "\n--forgeflare-0123--\n"


def out(*parts: str) -> bytes:
    return SEP.join(parts).encode()


@pytest.mark.parametrize(
    ("raw", "budget", "expected"),
    [
        # the diff, its stat, git's status, no new files
        (out("D", "S", "0", ""), 100, CollectedDiff("D", "S")),
        # cut by head -c inside the box: still the diff
        (out("D", "S", "141", ""), 100, CollectedDiff("D", "S")),
        # not a repository / unknown base: nothing
        (out("", "", "128", ""), 100, CollectedDiff()),
        # bubblewrap or bash failed before the script printed its parts
        (b"bwrap: cannot do it", 100, CollectedDiff()),
        (b"", 100, CollectedDiff()),
        # new files: named under the stat, their diffs added while within the budget
        (
            out("D", "S", "0", "a\0b\0", "+a", "+b"),
            100,
            CollectedDiff("D+a+b", "Snew files:\n a\n b\n"),
        ),
        (
            out("D" * 10, "S", "0", "a\0b\0", "+a", "+b"),
            10,
            CollectedDiff("D" * 10 + "+a", "Snew files:\n a\n b\n"),
        ),
        (
            out("D" * 11, "S", "0", "a\0", "+a"),
            10,
            CollectedDiff("D" * 11, "Snew files:\n a\n"),
        ),
    ],
)
def test_the_parts(raw: bytes, budget: int, expected: CollectedDiff) -> None:
    assert split_parts(raw, SEP, budget) == expected


@given(
    diff=st.text(max_size=40),
    names=st.lists(st.text("abc/ .", min_size=1, max_size=5), max_size=4),
)
def test_any_work_reads_back(diff: str, names: list[str]) -> None:
    """Whatever the files hold (the separator is random: they cannot hold it), the diff
    reads back whole and every new file is named."""
    news = [f"+{n}" for n in names]
    raw = out(diff, "S", "0", "".join(f"{n}\0" for n in names), *news)
    got = split_parts(raw, SEP, 1 << 20)
    assert got.diff == diff + "".join(news)
    assert got.stat == "S" + ("new files:\n" + "".join(f" {n}\n" for n in names) if names else "")


def test_the_command() -> None:
    argv = diff_argv(None, sep=SEP, cap=99, new_files=3, pathspec=[".", ":(exclude)x"])
    assert argv[:2] == ["bash", "-c"]
    sep, base, cap, new, words = argv[4:9]
    assert (sep, base, cap, new) == (SEP, EMPTY_TREE, "99", "3")
    git = argv[9 : 9 + int(words)]
    assert git == git_argv([])
    assert argv[9 + int(words) :] == [".", ":(exclude)x"]
    assert diff_argv("abc", sep=SEP, cap=1, new_files=0)[5] == "abc"


def test_a_driver_named_with_an_equals_sign_is_switched_off_too() -> None:
    """``-c filter.a=b.clean=`` would set ``filter.a`` (split at the first ``=``):
    ``--config-env`` splits at the last."""
    argv = git_argv(["status"], ["a=b", "plain"])
    assert "--config-env=filter.a=b.clean=FORGEFLARE_GIT_EMPTY" in argv
    assert "--config-env=filter.a=b.required=FORGEFLARE_GIT_FALSE" in argv
    assert "filter.plain.clean=" in argv
    assert not any(a.startswith("filter.a=b") for a in argv)
