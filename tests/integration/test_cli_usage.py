"""What a newcomer's typical mistakes get from the real ``forgeflare`` command: one line that
names the mistake, exit 2 for usage, no rich error boxes and nothing created on the way.

Mistakes found before anything starts run through the entry point in the test process
(``cli_inprocess``, named as the console script names itself); loops that do start are processes.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from cli_inprocess import run_cli
from project_support import forgeflare


def test_no_arguments_prints_the_help_like_a_group_does(tmp_path: Path) -> None:
    done = run_cli([], cwd=tmp_path)
    assert done.returncode == 2
    assert "Usage: forgeflare [OPTIONS] COMMAND" in done.stdout
    assert "│ loop " in done.stdout
    assert run_cli(["fleet"], cwd=tmp_path).returncode == 2  # the same code as a subgroup


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["loop", "--bogus"], "No such option: --bogus (see `forgeflare loop --help`)"),
        (["init", "--bogus"], "No such option: --bogus (see `forgeflare init --help`)"),
        (["demo", "--bogus"], "No such option: --bogus (see `forgeflare demo --help`)"),
        (["nope"], "No such command 'nope'. (see `forgeflare --help`)"),
        (["init", "--claude", "--codex"], "--claude and --codex: choose one agent"),
        (
            ["loop", "--max-iterations", "abc"],
            "Invalid value for '--max-iterations': Input should be a valid integer, unable to "
            "parse string as an integer (see `forgeflare loop --help`)",
        ),
    ],
)
def test_usage_errors_are_one_line_and_exit_2(tmp_path: Path, args: list[str], line: str) -> None:
    done = run_cli(args, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr == f"forgeflare: error: {line}\n"
    assert list(tmp_path.iterdir()) == []


def test_stop_of_a_missing_directory_is_an_error_and_creates_nothing(tmp_path: Path) -> None:
    typo = tmp_path / "typo"
    done = run_cli(["stop", "--dir", str(typo)], cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr == f"forgeflare: error: {typo}: no such directory\n"
    assert not typo.exists()


@pytest.mark.parametrize("command", ["run", "loop"])
def test_a_malformed_api_url_is_a_usage_error_before_anything_starts(
    tmp_path: Path, command: str
) -> None:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "ANTHROPIC_API_KEY": "k"}
    if command == "run":
        done = run_cli(["run", "--api-url", "notaurl", "hello"], cwd=tmp_path, env=env)
        said = "--api-url notaurl"
    else:
        env["ANTHROPIC_API_URL"] = "notaurl"
        done = run_cli(["loop", "--max-iterations", "1"], cwd=tmp_path, env=env)
        said = "ANTHROPIC_API_URL=notaurl"
    assert done.returncode == 2, done.stderr
    assert done.stderr == (
        f"forgeflare: error: {said}: not an http(s) URL (like http://127.0.0.1:8080 or "
        "https://api.anthropic.com)\n"
    )
    assert list(tmp_path.iterdir()) == []


def test_a_fleet_file_reports_every_mistake_with_a_suggestion(tmp_path: Path) -> None:
    fleet = tmp_path / "FLEET.toml"
    fleet.write_text(
        '[fleet]\nname = "night"\nparalel = 2\n\n'
        '[[loop]]\nname = "a"\nprompt = "p"\nmax_iterations = "x"\n\n'
        '[[loop]]\nname = "b"\nprompt = "p"\nbsae = "main"\n'
    )
    done = run_cli(["fleet", "run", str(fleet)], cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"forgeflare: error: {fleet}: fleet.paralel: unknown key; did you mean 'parallel'?",
        f"forgeflare: error: {fleet}: loop[0] (a): max_iterations: not an integer",
        f"forgeflare: error: {fleet}: loop[1] (b): bsae: unknown key; did you mean 'base'?",
    ]


def test_the_banner_says_not_a_git_repository_once(tmp_path: Path) -> None:
    done = forgeflare(tmp_path, "loop", "--agent-cmd", "true", "--max-iterations", "1")
    assert done.returncode == 10, done.stderr
    said = done.stdout + done.stderr
    assert said.count("not a git repository") == 1, said
    assert "commits are not counted and no_changes cannot stop an idle loop" in said
    assert "bounds: 1 iteration, runtime" in said  # not "1 iterations"
    assert "finished: max_iterations (exit 10); 1 iteration, 0 commits" in said


def test_stop_without_a_loop_leaves_no_request_and_an_old_one_is_dropped_with_its_age(
    tmp_path: Path,
) -> None:
    done = run_cli(["stop", "--dir", str(tmp_path)], cwd=tmp_path)
    assert (done.returncode, done.stdout.strip()) == (
        0,
        f"no loop is running in {tmp_path}: nothing to stop",
    )
    request = tmp_path / ".fresher" / "stop-request"
    assert not request.exists()
    # one left behind (an older forgeflare, a copied project): dropped, its age said
    request.parent.mkdir()
    request.write_text('{"requested_at": "2026-01-01T00:00:00Z"}\n')
    two_hours_ago = time.time() - 7200
    os.utime(request, (two_hours_ago, two_hours_ago))
    done = forgeflare(tmp_path, "loop", "--agent-cmd", "true", "--max-iterations", "2")
    assert done.returncode == 10, done.stderr
    assert "dropped a stop request from 2h 00m ago (.fresher/stop-request)" in done.stderr
    assert not request.exists()


def test_a_misspelt_config_section_stops_the_loop_before_it_starts(tmp_path: Path) -> None:
    (tmp_path / ".fresher").mkdir()
    (tmp_path / ".fresher" / "config.toml").write_text("[limit]\nmax_cost = 1\n")
    done = run_cli(["loop", "--agent-cmd", "true"], cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr == (
        "forgeflare: error: .fresher/config.toml: unknown section [limit]; did you mean 'limits'?\n"
    )
    assert not (tmp_path / ".fresher" / "runs").exists()
