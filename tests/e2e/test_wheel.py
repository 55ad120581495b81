"""The wheel as users install it: built once, installed alone into a fresh venv, smoke-tested.

A wheel that misses package data (templates, the demo story, the plugin files) fails here, not
on a user's machine. ``make dist`` runs the same smoke test on the release build.
"""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_the_built_wheel_works_alone(tmp_path: Path) -> None:
    built = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--outdir", str(tmp_path), str(REPO)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-2000:]
    (wheel,) = tmp_path.glob("forgeflare-*-py3-none-any.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for data in (
        "forgeflare/templates/demo/story.json",
        "forgeflare/templates/files/dot-forgeflare/hooks.toml",
        "forgeflare/py.typed",
        "forgeflare/templates/claude_plugin/.claude-plugin/plugin.json",
        "forgeflare/templates/claude_plugin/hooks/hooks.json",
        "forgeflare/templates/claude_plugin/commands/loop.md",
        "forgeflare/templates/claude_plugin/commands/cancel.md",
    ):
        assert data in names, data
    smoke = subprocess.run(
        [sys.executable, str(REPO / "tests" / "wheel_smoke.py"), str(wheel)],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert smoke.returncode == 0, smoke.stdout[-3000:] + smoke.stderr[-3000:]
