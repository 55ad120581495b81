"""The stop-hook's gate runs in the box the project's ``[security]`` settings describe: the
hook process (``forgeflare stop-hook``, as Claude Code runs it) reads them only when a claim's
gate runs, through its caller (the configuration lives above the stop-hook)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from test_stophook_gate import start
from test_stophook_processes import SIG, run_hook

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")


@pytest.mark.parametrize(
    ("config", "code", "written"),
    [
        ("", 2, False),  # the default box: the rest of / is read-only, the claim is refused
        ('[security]\nsandbox = "off"\n', 0, True),  # the project turned it off: unconfined
    ],
)
def test_the_projects_security_settings_reach_a_stop_hook_gate(
    tmp_path: Path, config: str, code: int, written: bool
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    project = tmp_path / "project"
    (project / ".fresher").mkdir(parents=True)
    (project / ".fresher" / "config.toml").write_text(config)
    start(project, f"touch {outside / 'from-the-gate'}")
    out = run_hook(project, f"All done.\n{SIG}")
    assert out.returncode == code, out.stderr
    assert (outside / "from-the-gate").exists() is written
