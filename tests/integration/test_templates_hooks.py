"""The lifecycle hooks ``forgeflare init`` ships, run for real with ``FRESHER_*`` variables (the
agent hooks have a test file each, named after the script)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from forgeflare.templates import init_project
from template_hooks_support import hook_env


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("initialised")
    init_project(root)
    return root


# -- lifecycle hooks --------------------------------------------------------------------------


def _lifecycle(root: Path, name: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(root / ".fresher" / "hooks" / name)],
        cwd=root,
        env=hook_env(FRESHER_PROJECT_DIR=str(root), **env),
        capture_output=True,
        text=True,
        timeout=30,
    )


def test_started_aborts_in_building_mode_without_a_plan(tmp_path: Path) -> None:
    init_project(tmp_path)
    ok = _lifecycle(tmp_path, "started", FRESHER_MODE="building", FRESHER_MAX_ITERATIONS="0")
    assert ok.returncode == 0, ok.stderr
    assert "Starting the loop in building mode" in ok.stdout
    assert "Max iterations: unlimited" in ok.stdout
    (tmp_path / "IMPLEMENTATION_PLAN.md").unlink()
    aborted = _lifecycle(tmp_path, "started", FRESHER_MODE="building")
    assert aborted.returncode == 2
    assert "run planning mode first" in aborted.stderr
    planning = _lifecycle(tmp_path, "started", FRESHER_MODE="planning")
    assert planning.returncode == 0, planning.stderr


def test_next_iteration_skips_when_nothing_is_open(tmp_path: Path) -> None:
    init_project(tmp_path)
    plan = tmp_path / "IMPLEMENTATION_PLAN.md"
    env = {"FRESHER_MODE": "building", "FRESHER_PLAN_FILE": str(plan)}
    first = _lifecycle(tmp_path, "next_iteration", FRESHER_ITERATION="1", **env)
    assert first.returncode == 0, first.stderr
    assert "Open tasks: 1" in first.stdout
    plan.write_text("- [x] done\n")
    later = _lifecycle(
        tmp_path,
        "next_iteration",
        FRESHER_ITERATION="3",
        FRESHER_LAST_EXIT_CODE="0",
        FRESHER_LAST_DURATION="12",
        FRESHER_COMMITS_MADE="2",
        **env,
    )
    assert later.returncode == 1
    assert "Previous iteration: exit=0, duration=12s" in later.stdout
    assert "Commits so far: 2" in later.stdout
    assert "skipping iteration" in later.stdout
    # Planning mode never skips on the plan.
    planning = _lifecycle(
        tmp_path, "next_iteration", FRESHER_ITERATION="2", FRESHER_MODE="planning"
    )
    assert planning.returncode == 0


@pytest.mark.parametrize(
    ("finish", "message"),
    [
        ("complete", "Complete (complete: the agent said the tag)"),
        ("manual", "Loop stopped by user"),
        ("max_iterations", "Reached the max iterations limit"),
        ("error", "Loop stopped due to errors"),
        ("hook_abort", "Loop aborted by a hook"),
        ("something_new", "Loop finished: something_new"),
    ],
)
def test_finished_prints_the_summary_by_finish_type(
    project: Path, finish: str, message: str
) -> None:
    done = _lifecycle(
        project,
        "finished",
        FRESHER_FINISH_TYPE=finish,
        FRESHER_TOTAL_ITERATIONS="4",
        FRESHER_TOTAL_COMMITS="3",
        FRESHER_DURATION="61",
        FRESHER_FINISH_REASON="complete: the agent said the tag" if finish == "complete" else "",
    )
    assert done.returncode == 0, done.stderr
    assert f"Finish type: {finish}" in done.stdout
    assert "Total iterations: 4" in done.stdout
    assert done.stdout.strip().endswith(message)


def test_notify_does_nothing_without_its_webhook_and_posts_with_it(tmp_path: Path) -> None:
    init_project(tmp_path)
    notify = tmp_path / ".fresher" / "hooks" / "custom" / "notify"
    bash = shutil.which("bash")
    assert bash is not None
    # No tool on PATH at all: without the variable it must not even look for curl.
    done = subprocess.run(
        [bash, str(notify), "hello"],
        env={"PATH": "/nonexistent"},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    # With it, curl gets the message as JSON (a stand-in curl records its arguments).
    bindir = tmp_path / "bin"
    bindir.mkdir()
    fake = bindir / "curl"
    fake.write_text('#!/bin/sh\nprintf "%s\\n" "$@" > "$CURL_ARGS"\n')
    fake.chmod(0o755)
    args_file = tmp_path / "args"
    done = subprocess.run(
        [bash, str(notify), 'say "hi"'],
        env={
            "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}",
            "FRESHER_NOTIFY_WEBHOOK": "http://127.0.0.1:9/hook",
            "CURL_ARGS": str(args_file),
        },
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    args = args_file.read_text().splitlines()
    assert "http://127.0.0.1:9/hook" in args
    body = args[args.index("-d") + 1]
    assert json.loads(body) == {"text": 'say "hi"'}
