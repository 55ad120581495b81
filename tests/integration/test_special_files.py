"""Special files where forgeflare reads a project's or the state directory's files: a FIFO or
``/dev/zero`` as ``config.toml`` or ``hooks.toml``, a FIFO ``windows.json``, a file over the
cap, an answer that is not UTF-8. Each is one line and a usage exit, at once (no hang past the
test's timeout), with the process's peak memory flat (its own high-water RSS, reported at
its exit)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

from cli_inprocess import run_cli
from supervisor_agents.project import Project, base_env

_MAX_RSS_MB = 300  # a read of /dev/zero grew the process to 2.7 GB in seconds before


# The child reports its own peak at exit (VmHWM of its own address space). Its rusage peak
# cannot: Linux carries the parent's peak into an exec'd child, so a worker that once grew
# to 360 MB would fail every case here.
_REPORT_PEAK = """
import atexit, sys
from pathlib import Path

peak_file = sys.argv.pop(1)


def _report() -> None:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            Path(peak_file).write_text(line.split()[1])


atexit.register(_report)
sys.argv[0] = "forgeflare"
from forgeflare.cli import main

main()
"""


def _forgeflare(cwd: Path, *args: str, env: dict[str, str]) -> tuple[int, str, float]:
    """Exit status, output and peak RSS (MB) of ``forgeflare ARGS``, killed after 60 s."""
    with tempfile.TemporaryDirectory() as scratch:
        peak = Path(scratch) / "peak-kb"
        try:
            done = subprocess.run(
                [sys.executable, "-c", _REPORT_PEAK, str(peak), *args],
                cwd=cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                timeout=60,
                check=False,
            )
        except subprocess.TimeoutExpired:
            pytest.fail(f"forgeflare {' '.join(args)} hung")
        text = done.stdout.decode("utf-8", "replace")
        assert peak.exists(), f"forgeflare {' '.join(args)} left no peak report: {text}"
        return done.returncode, text, int(peak.read_text()) / 1024


def _env(tmp_path: Path) -> dict[str, str]:
    return base_env(
        ANTHROPIC_API_KEY="test-key",
        ANTHROPIC_API_URL="http://127.0.0.1:9",
        XDG_STATE_HOME=str(tmp_path / "state"),
        FORGEFLARE_TRUST="1",
    )


def _dev_zero(path: Path) -> None:
    path.symlink_to("/dev/zero")


def _big(path: Path) -> None:
    path.write_bytes(b"# " + b"x" * (2 << 20) + b"\n")


@pytest.mark.parametrize("make", [os.mkfifo, _dev_zero, _big], ids=["fifo", "dev-zero", "2MB"])
@pytest.mark.parametrize(
    ("rel", "command"),
    [
        (".fresher/config.toml", ["loop", "--dir", ".", "--max-iterations", "1"]),
        (".fresher/config.toml", ["trust", "--show"]),
        (".forgeflare/hooks.toml", ["run", "hello"]),
        (".forgeflare/hooks.toml", ["loop", "--dir", ".", "--max-iterations", "1"]),
    ],
)
def test_a_special_config_or_hooks_file_is_one_line(
    tmp_path: Path, make: Callable[[Path], None], rel: str, command: list[str]
) -> None:
    project = tmp_path / "p"
    (project / rel).parent.mkdir(parents=True)
    make(project / rel)
    code, out, rss = _forgeflare(project, *command, env=_env(tmp_path))
    assert code == 2, out
    (line,) = out.strip().splitlines()
    assert line.startswith("forgeflare: error: "), line
    assert rel.split("/")[-1] in line, line
    assert any(why in line for why in ("FIFO", "symlink out of", "larger than 1 MB")), line
    assert rss < _MAX_RSS_MB


def test_an_answer_that_is_not_utf8_is_one_line(tmp_path: Path) -> None:
    bad = os.fsdecode(b"\xed\xa0\x80")
    done = run_cli(["answer", bad], cwd=tmp_path, env=_env(tmp_path))  # no memory at stake
    assert done.returncode == 2
    assert (done.stdout + done.stderr).strip() == (
        "forgeflare: error: answer: not UTF-8 text (character 1)"
    )


async def test_a_fifo_window_store_does_not_hold_up_a_loop(tmp_path: Path) -> None:
    project = Project(tmp_path / "p")
    project.dir.mkdir()
    state = tmp_path / "state" / "forgeflare"
    state.mkdir(parents=True)
    os.mkfifo(state / "windows.json")
    # The store is the loop's (run_loop reads it from the loop's env), not the CLI's: the loop
    # in this process, its agent a real child; a hang still fails at pytest's timeout.
    done = await project.arun(
        "--agent-cmd", "true", "--mode", "planning", "--max-iterations", "1", env=_env(tmp_path)
    )
    assert "Traceback" not in done.stdout + done.stderr
    assert done.code == 10, done.stdout + done.stderr
    assert project.record()["finish_type"] == "max_iterations"
