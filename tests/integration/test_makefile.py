"""What the Makefile's targets would run on a fresh clone (``make -n``: nothing is built)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def planned(target: str, venv: Path) -> str:
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    done = subprocess.run(
        ["make", "-n", target, f"VENV={venv}"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def test_make_demo_installs_forgeflare_alone_not_the_dev_toolchain(tmp_path: Path) -> None:
    demo = planned("demo", tmp_path / "venv")
    assert "pip install --quiet -e . " in demo
    assert ".[dev]" not in demo
    assert f"{tmp_path / 'venv'}/bin/forgeflare demo" in demo
    # A fresh clone builds the venv first: said before it starts, with how long it takes.
    assert "building" in demo
    assert "about a minute" in demo


def test_make_test_builds_the_docs_strictly(tmp_path: Path) -> None:
    test = planned("test", tmp_path / "venv")
    assert f"{tmp_path / 'venv'}/bin/mkdocs build --strict" in test
    assert "--site-dir site" in test
    assert "'.[dev]'" in planned("pytest", tmp_path / "venv")  # the tests keep the full venv


def test_make_test_fast_leaves_the_slow_tier_out(tmp_path: Path) -> None:
    assert '-m "not slow"' in planned("test-fast", tmp_path / "venv")
    assert "not slow" not in planned("pytest", tmp_path / "venv")  # make test runs everything


def test_the_slow_tier_is_e2e_and_the_real_claude_code_and_codex_tests() -> None:
    files = ["e2e/test_demo.py", "integration/test_codex_cli.py", "unit/test_validation.py"]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:xdist", "--collect-only", "-q", "-m", "slow"]
        + [f"tests/{name}" for name in files],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    # Quiet twice (the config's -q and ours): one "path: count" line per file.
    collected = {line.split(":")[0] for line in done.stdout.splitlines() if ".py: " in line}
    assert collected == {"tests/e2e/test_demo.py", "tests/integration/test_codex_cli.py"}
