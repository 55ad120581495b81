"""What a record or a project holds reaches the terminal without escapes: a hostile agent
(commit subject, output, question with OSC 52, OSC 0/2, CSI, C1 and U+202E) and a hostile
clone (a hook script's first lines, a stop-hook prompt), read back through real
``forgeflare loop`` and ``stop-hook status`` processes and ``report``, ``runs`` and
``trust --show`` through the same entry point in the test process (``cli_inprocess``)."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from cli_inprocess import forgeflare_here
from project_support import run_text
from supervisor_agents.project import Project, base_env

HOSTILE = (
    "\x1b]52;c;cm0gLXJmIH4=\x07 \x1b]0;pwned\x07 \x1b]2;t\x1b\\ \x1b[2K\x9b31m \u202eevil\u2066"
)
"""Clipboard write, window titles (BEL and ST ended), erase line, C1 CSI, bidi controls."""

AGENT = f"""\
import json, os, subprocess, sys, time
sys.stdin.read()
open(f"f{{time.time_ns()}}.txt", "w").write("x")
subprocess.run(["git", "add", "-A", "."], check=True)
subprocess.run(["git", "commit", "-qm", "subject " + {HOSTILE!r}], check=True)
print("working " + {HOSTILE!r})
report = {{"outcome": "ok", "question": "Which database? " + {HOSTILE!r}}}
json.dump(report, open(os.environ["FORGEFLARE_REPORT"], "w"))
"""


def _clean(text: str, where: str) -> None:
    bad = sorted({hex(ord(c)) for c in text if ord(c) < 0x20 and c not in "\n\t"})
    bad += sorted({hex(ord(c)) for c in text if 0x7F <= ord(c) <= 0x9F})
    bad += sorted({hex(ord(c)) for c in text if c in "\u202e\u2066"})
    assert not bad, (where, bad, text[:400])


def _forgeflare(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_text(
        [sys.executable, "-m", "forgeflare", *args],
        cwd=cwd,
        env=base_env(FORGEFLARE_TRUST="1"),
        timeout=60,
    )


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Project, str, str]:
    project = Project(tmp_path_factory.mktemp("hostile"))
    project.git_init()
    agent = project.write("agent.py", AGENT)
    project.write(".gitignore", ".fresher/runs/\nagent.py\n")
    subprocess.run(["git", "commit", "-qam", "ignore"], cwd=project.dir, check=True)
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(agent))}"
    done = project.run(
        "--agent-cmd",
        command,
        "--max-iterations",
        "2",
        "--no-sandbox",
        env=base_env(FORGEFLARE_TRUST="1"),
    )
    assert done.code == 20, done.stderr  # blocked: the agent asked
    return project, done.stdout, done.stderr


def test_the_loop_echoes_agent_text_without_escapes(hostile_run: tuple[Project, str, str]) -> None:
    _, out, err = hostile_run
    _clean(out, "loop stdout")
    _clean(err, "loop stderr")
    assert "working" in out
    assert "Which database? " in err
    assert "<U+202E>evil<U+2066>" in err


@pytest.mark.parametrize("command", [["report"], ["runs"]])
def test_records_read_back_without_escapes(
    hostile_run: tuple[Project, str, str], command: list[str]
) -> None:
    project, _, _ = hostile_run
    done = forgeflare_here(project.dir, *command, env=base_env(FORGEFLARE_TRUST="1"))
    assert done.returncode == 0, done.stderr
    _clean(done.stdout, " ".join(command))
    _clean(done.stderr, " ".join(command))
    assert "Which database?" in done.stdout
    assert "<U+202E>evil" in done.stdout
    if command == ["report"]:
        assert "subject" in done.stdout


def test_stop_hook_status_shows_a_prompt_without_escapes(tmp_path: Path) -> None:
    started = _forgeflare(tmp_path, "stop-hook", "start", "--prompt", f"do it \u202eevil {HOSTILE}")
    assert started.returncode == 0, started.stderr
    done = _forgeflare(tmp_path, "stop-hook", "status")
    assert done.returncode == 0, done.stderr
    _clean(done.stdout, "stop-hook status")
    assert "do it" in done.stdout
    assert "<U+202E>evil" in done.stdout


def test_trust_show_marks_a_bidi_override_in_a_hook_script(tmp_path: Path) -> None:
    project = Project(tmp_path)
    project.hook("started", f"# looks harmless {HOSTILE}\necho hi")
    done = forgeflare_here(tmp_path, "trust", "--show", env=base_env(FORGEFLARE_TRUST="1"))
    assert done.returncode == 1, done.stderr  # not trusted yet
    _clean(done.stdout, "trust --show")
    assert "looks harmless" in done.stdout
    assert "<U+202E>evil<U+2066>" in done.stdout
