"""The Bash deny-list: a table of commands, and properties of its shell-like reading."""

from __future__ import annotations

import shlex

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forgeflare.agent.tools import denied_reason, normalize_command

DENIED = [
    "rm -rf /",
    "rm -rf /*",
    "rm -fr /",
    "rm -Rf /",
    "rm -r -f /",
    "rm --recursive --force /",
    "rm -rf --no-preserve-root /",
    "rm --no-preserve-root -r /tmp",
    "sudo rm -rf /",
    "/bin/rm -rf /",
    'rm -rf "/"',
    "rm -rf '/*'",
    "rm -rf ~",
    "rm -rf ~/",
    "rm -rf $HOME",
    "rm -rf /tmp/build /",
    "rm x; rm -rf /",
    "echo start && rm -rf / && echo done",
    "(rm -rf /)",
    ":(){ :|:& };:",
    ":(){ :|: & };:",
    "bomb(){ bomb|bomb& };bomb",
    "dd if=/dev/zero of=/dev/sda bs=1M",
    "dd if=image.iso of=/dev/nvme0n1",
    "dd of=/dev/disk2 if=x",
    "cat image > /dev/sda",
    "mkfs /dev/sdb1",
    "mkfs.ext4 /dev/sdb1",
    "sudo mkfs.xfs /dev/vdb",
    "mke2fs /dev/sdc",
    "chmod 777 /",
    "chmod -R 777 /",
    "chmod -R 0777 /*",
    "chmod a+rwx /",
    "git push --force",
    "git push -f",
    "git push -f origin main",
    "git push origin main --force",
    "git push origin main -f",
    "git push -uf origin main",
    "git push --force-with-lease",
    "git push --force-with-lease=main:abc123 origin main",
    "git push --force-if-includes --force-with-lease",
    "git push origin +main",
    "git -C repo push --force",
    "git add . && git commit -m wip && git push -f",
    # Every spelling of rm and of / or ~.
    "\\rm -rf /",
    '"rm" -rf /',
    "r''m -rf /",
    "'/bin/rm' -rf /",
    "rm -rf //",
    "rm -rf /./",
    "rm -rf /..",
    "rm -rf /.*",
    "rm -rf -- /",
    "rm -rf ${HOME}",
    'rm -rf "$HOME"',
    "rm -rf $HOME/",
    "rm -rf ~/*",
    "rm -rf ~root",
    "RM -RF /",
    # The same inside wrappers and nested shells.
    "bash -c 'rm -rf /'",
    'sh -c "rm -rf ~"',
    "bash -lc 'sudo rm -rf /'",
    "bash <<< 'rm -rf /'",
    "eval rm -rf /",
    "eval 'rm -rf /'",
    "xargs rm -rf /",
    "xargs -I {} rm -rf /",
    "sudo -u root rm -rf /",
    "sudo -H rm -rf /",
    "env rm -rf /",
    "env FOO=1 rm -rf /",
    "env -S 'rm -rf /'",
    "nohup rm -rf / &",
    "timeout 10 rm -rf /",
    "timeout -s KILL 5 rm -rf ~",
    "su -c 'rm -rf /'",
    "FOO=1 rm -rf /",
    "if true; then rm -rf /; fi",
    'echo "$(rm -rf /)"',
    "echo `rm -rf /`",
    'echo "`rm -rf /`"',
    "sh -c 'sh -c \"rm -rf /\"'",
    "cat <(rm -rf /)",
    "diff <(ls) <(sudo rm -rf ~)",
    "echo x > >(rm -rf /)",
    "{rm,-rf,/}",
    "rm${IFS}-rf${IFS}/",
    "rm$IFS-rf$IFS~",
    "cat image.iso | sudo tee /dev/sda > /dev/null",
    "cp image.iso /dev/nvme0n1",
    # find, chown, more force pushes.
    "find / -delete",
    "find ~ -name '*.bak' -delete",
    "find -L / -exec rm -rf {} +",
    "chown -R nobody /",
    "chmod -R 755 ~",
    "git push --mirror",
    "git push origin +main:main",
    "git push --repo=origin +main",
    "FOO=1 git push -f",
    "sudo git push --force",
    "bash -c 'git push -f'",
]

ALLOWED = [
    "ls -la",
    "rm -rf build",
    "rm -rf node_modules",
    "rm -rf ./build /tmp/scratch",
    "rm -rf $HOMEWORK",
    "rm -rf /home/me/project/build",
    "rm -rf /tmp/forgeflare-test",
    "rm file.txt",
    "rm -f /",  # not recursive: rm refuses a directory without -r
    "rm -rf ~/project/target",
    "dd if=/dev/zero of=/dev/null bs=1M count=1",
    "dd if=/dev/urandom of=random.bin count=1",
    "echo x > /dev/null",
    "echo x > /dev/stderr",
    "chmod 777 /tmp/x",
    "chmod 755 /",
    "chmod +x script.sh",
    "git push",
    "git push origin main",
    "git push -u origin feature-fix",
    "git push --follow-tags",
    "git push --porcelain origin main",
    "git commit -m 'use -f carefully' && git push origin main",
    "ls -f; git push",
    "git fetch --force",
    "pytest -q",
    "make test",
    "python -c 'print(1)'",
    "grep -rn mkfs_helper src",
    # The first plain argument of git push names the remote, even a strange one.
    "git push +x",
    "git push origin",
    "echo 'rm -rf /'",
    'git commit -m "never rm -rf / or git push -f"',
    "grep -rn 'git push --force' docs",
    "echo hi # rm -rf /",
    "find . -name '*.pyc' -delete",
    "find /tmp/scratch -delete",
    "bash -c 'rm -rf build'",
    "sudo rm -rf /var/tmp/scratch",
    "timeout 60 pytest -q",
    "env FOO=1 make test",
    "chmod -R 755 build",
    "echo $(date) > /dev/null",
    "echo hi | tee /dev/stderr",
    "cp a.txt b.txt",
    'echo "$IFS" | od -c',
    "cat <<'EOF' > notes.md\nplain text\nEOF",
    "bomb() { echo boom; }; bomb",
]


@pytest.mark.parametrize("command", DENIED)
def test_denied(command: str) -> None:
    assert denied_reason(command) is not None


@pytest.mark.parametrize("command", ALLOWED)
def test_allowed(command: str) -> None:
    assert denied_reason(command) is None


def test_reason_names_the_problem() -> None:
    assert "rm" in (denied_reason("rm -rf /") or "")
    assert "fork bomb" in (denied_reason(":(){ :|:& };:") or "")
    assert "--force-with-lease" in (denied_reason("git push --force-with-lease") or "")


def test_normalize_command() -> None:
    assert normalize_command("  RM \t -RF\n\n/  ") == "rm -rf /"


def _respaced(command: str, gaps: list[str], caps: list[bool]) -> str:
    words = command.split(" ")
    out = words[0]
    for index, word in enumerate(words[1:]):
        out += gaps[index % len(gaps)] + word
    return "".join(ch.upper() if caps[i % len(caps)] else ch.lower() for i, ch in enumerate(out))


_GAPS = st.lists(st.text(alphabet=" \t\n", min_size=1, max_size=4), min_size=1, max_size=6)
_CAPS = st.lists(st.booleans(), min_size=1, max_size=12)


@settings(max_examples=40)
@given(command=st.sampled_from(DENIED), gaps=_GAPS, caps=_CAPS, pad=st.text(" \t\n"))
def test_whitespace_and_case_never_undeny(
    command: str, gaps: list[str], caps: list[bool], pad: str
) -> None:
    assert denied_reason(pad + _respaced(command, gaps, caps) + pad) is not None


@given(
    command=st.sampled_from(DENIED),
    before=st.sampled_from(["", "echo hi; ", "cd /tmp && ", "true || ", "ls | head\n"]),
    after=st.sampled_from(["", "; echo done", " && ls", " | cat", "\necho next"]),
)
def test_surrounding_commands_never_undeny(command: str, before: str, after: str) -> None:
    assert denied_reason(before + command + after) is not None


_SAFE_WORDS = [
    "ls",
    "-la",
    "echo",
    "hello",
    "git",
    "status",
    "push",
    "origin",
    "main",
    "rm",
    "build/",
    "cat",
    "notes.txt",
    "&&",
    ";",
    "|",
    "grep",
    "-r",
    "src",
    "make",
    "test",
    "dd",
    "if=a",
    "of=b",
    "chmod",
    # Not "+x" alone: after "git push REMOTE" it is a force-push refspec (the old flake),
    # so chmod +x comes as a command of its own.
    "&& chmod +x run.sh",
    "run.sh",
]


@settings(max_examples=40)
@given(st.lists(st.sampled_from(_SAFE_WORDS), max_size=12))
def test_ordinary_commands_pass(words: list[str]) -> None:
    assert denied_reason(" ".join(words)) is None


_WRAPPERS = [
    lambda c: "bash -c " + shlex.quote(c),
    lambda c: "sh -c " + shlex.quote(c),
    lambda c: "eval " + shlex.quote(c),
    lambda c: "sudo " + c,
    lambda c: "sudo -u root " + c,
    lambda c: "env FOO=1 " + c,
    lambda c: "nohup " + c,
    lambda c: "timeout 30 " + c,
]


@settings(max_examples=80)
@given(
    command=st.sampled_from(DENIED),
    wrappers=st.lists(st.sampled_from(_WRAPPERS), min_size=1, max_size=3),
)
def test_a_block_stays_a_block_when_wrapped(command: str, wrappers: list) -> None:
    for wrap in wrappers:
        command = wrap(command)
    assert denied_reason(command) is not None


def test_nesting_beyond_the_limit_is_refused_not_skipped() -> None:
    # (Nesting without a word any rule looks at, such as ``ls``, is read no further.)
    command = "git status"
    for _ in range(6):
        command = "bash -c " + shlex.quote(command)
    assert denied_reason(command) == "command nested too deeply to check"


@settings(max_examples=40)
@given(st.text(max_size=200))
def test_never_raises(command: str) -> None:
    result = denied_reason(command)
    assert result is None or result
