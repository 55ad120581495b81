"""The in-process CLI runner: what a process would print and exit with, and nothing left over."""

from __future__ import annotations

import logging
import os
import signal
import sys
from pathlib import Path

import pytest

import forgeflare.report._text
from cli_inprocess import run_cli
from project_support import run_text


def _state() -> tuple[object, ...]:
    return (
        dict(os.environ),
        os.getcwd(),
        sys.stdin,
        sys.stdout,
        sys.stderr,
        list(sys.argv),
        list(sys.path),
        signal.getsignal(signal.SIGINT),
        signal.getsignal(signal.SIGTERM),
        list(logging.getLogger().handlers),
        logging.getLogger().level,
        logging.root.manager.disable,
        getattr(sys.modules["__main__"], "__package__", None),
    )


@pytest.mark.parametrize(
    "args",
    [
        ["runs"],
        ["report"],
        ["report", "--bogus"],
        ["report", "--help"],
    ],
)
def test_prints_and_exits_as_the_process_does(tmp_path: Path, args: list[str]) -> None:
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "NO_COLOR": "1", "COLUMNS": "90"}
    script = Path(sys.executable).with_name("forgeflare")  # the console script
    process = run_text([script, *args], cwd=tmp_path, env=env, timeout=60)
    here = run_cli(args, cwd=tmp_path, env=env)
    assert (here.returncode, here.stdout, here.stderr) == (
        process.returncode,
        process.stdout,
        process.stderr,
    )


def test_runs_in_cwd_with_exactly_env_and_restores_both(tmp_path: Path) -> None:
    before = _state()
    project = tmp_path / "p"
    project.mkdir()
    only = {"PATH": os.environ["PATH"], "FRESHER_RUNS_DIR": "elsewhere", "NO_COLOR": "1"}
    done = run_cli(["runs"], cwd=project, env=only)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "no runs yet\n"
    assert _state() == before
    assert "FRESHER_RUNS_DIR" not in os.environ


def test_a_traceback_propagates_and_stdin_is_fed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = _state()

    def echo_stdin(_summaries: object) -> str:
        return "read: " + sys.stdin.read()

    monkeypatch.setattr(forgeflare.report._text, "render_runs", echo_stdin)
    done = run_cli(["runs"], cwd=tmp_path, stdin="a line\n")
    assert (done.returncode, done.stdout) == (0, "read: a line\n\n")

    def warn(_summaries: object) -> str:
        logging.getLogger("forgeflare.test").warning("a warning")
        logging.getLogger("forgeflare.test").info("no info")
        return ""

    monkeypatch.setattr(forgeflare.report._text, "render_runs", warn)
    # as a fresh process logs: a warning on stderr (logging's last resort), no info
    assert run_cli(["runs"], cwd=tmp_path).stderr == "a warning\n"

    def boom(_summaries: object) -> str:
        os.environ["LEFT_BEHIND"] = "1"
        os.chdir("/")
        sys.path.insert(0, "/")
        signal.signal(signal.SIGTERM, lambda *_: None)
        logging.getLogger().addHandler(logging.NullHandler())
        raise RuntimeError("a bug")

    monkeypatch.setattr(forgeflare.report._text, "render_runs", boom)
    with pytest.raises(RuntimeError, match="a bug") as raised:
        run_cli(["runs"], cwd=tmp_path, env={"PATH": os.environ["PATH"]})
    assert "forgeflare stderr so far: ''" in (raised.value.__notes__ or [])
    assert _state() == before
