"""What the Makefile's targets would run on a fresh clone (``make -n``: nothing is built)."""

from __future__ import annotations

import shutil
import subprocess
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
    assert "'.[dev]'" in planned("pytest", tmp_path / "venv")  # the tests keep the full venv
