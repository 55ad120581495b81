"""The stop-hook's gate runs in the box the project's ``[security]`` settings describe: the
hook (``forgeflare stop-hook`` as Claude Code runs it, through the console script's real entry in
the test process) reads them only when a claim's gate runs, through its caller (the configuration
lives above the stop-hook); the gate and its box are real processes."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from test_stophook_gate import start
from test_stophook_processes import SIG, hook_here

from stophook_support import blocks

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")


@pytest.mark.parametrize(
    ("config", "refused", "written"),
    [
        ("", True, False),  # the default box: the rest of / is read-only, the claim is refused
        ('[security]\nsandbox = "off"\n', False, True),  # the project turned it off
    ],
)
def test_the_projects_security_settings_reach_a_stop_hook_gate(
    tmp_path: Path, config: str, refused: bool, written: bool
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    project = tmp_path / "project"
    (project / ".fresher").mkdir(parents=True)
    (project / ".fresher" / "config.toml").write_text(config)
    start(project, f"touch {outside / 'from-the-gate'}")
    out = hook_here(project, f"All done.\n{SIG}")
    assert out.returncode == 0, out.stderr
    assert blocks(out) is refused, out.stdout  # a refused claim continues the session
    assert (outside / "from-the-gate").exists() is written
