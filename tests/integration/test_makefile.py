"""What the Makefile's targets would run on a fresh clone (``make -n``: nothing is built)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def own_make_env() -> dict[str, str]:
    """This environment without what a make this suite runs under passes down (``PYTHON``
    from ``make test PYTHON=python``, ``MAKEFLAGS``)."""
    outer = ("PYTHON", "MAKEFLAGS", "MFLAGS", "MAKELEVEL")
    return {k: v for k, v in os.environ.items() if k not in outer}


def planned(target: str, venv: Path, *settings: str, env: dict[str, str] | None = None) -> str:
    """What ``make TARGET`` would run with ``venv`` and ``settings`` (in ``env``, default
    :func:`own_make_env`)."""
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    done = subprocess.run(
        ["make", "-n", target, f"VENV={venv}", *settings],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
        env=own_make_env() if env is None else env,
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


def venv_command(venv: Path, *settings: str, env: dict[str, str] | None = None) -> str:
    """The command ``make venv`` would build ``venv`` with."""
    return planned("venv", venv, *settings, env=env).splitlines()[0]


def test_the_venv_comes_from_the_system_python_when_it_is_311_with_venv(tmp_path: Path) -> None:
    # This interpreter is 3.11 or newer, and its standard library has ensurepip.
    system = f"SYSTEM_PYTHON={sys.executable}"
    assert venv_command(tmp_path / "v", system) == f"{sys.executable} -m venv {tmp_path / 'v'}"


@pytest.mark.parametrize(
    "script",
    [
        None,  # no system python at all
        "#!/bin/sh\nexit 1\n",  # too old, or no venv module: its check fails
    ],
    ids=["missing", "unfit"],
)
def test_otherwise_the_venv_comes_from_python3_on_path(tmp_path: Path, script: str | None) -> None:
    system = tmp_path / "python3"
    if script is not None:
        system.write_text(script)
        system.chmod(0o755)
    command = venv_command(tmp_path / "v", f"SYSTEM_PYTHON={system}")
    assert command == f"python3 -m venv {tmp_path / 'v'}"


def test_python_given_on_the_command_line_or_in_the_environment_wins(tmp_path: Path) -> None:
    venv = tmp_path / "v"
    assert venv_command(venv, "PYTHON=python3.12") == f"python3.12 -m venv {venv}"
    env = {**own_make_env(), "PYTHON": "python3.13"}
    assert venv_command(venv, env=env) == f"python3.13 -m venv {venv}"
