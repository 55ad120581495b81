"""A claim's evidence in the stop-hook, in this process: the frame's gate runs only as the user
trusted it, a red gate refuses, and a reviewer that cannot answer refuses (never accepts)."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

from forgeflare.security import BoxSettings
from forgeflare.stophook import Checked, Frame, Mode, check_claim, head_commit
from forgeflare.stophook._check import gate_trust_item, gate_untrusted
from forgeflare.trust import TrustStore, default_trust_file
from project_support import git, new_repo

SIG = "<loop-done>COMPLETE</loop-done>"


def _environ(tmp_path: Path) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path / "home"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
    }


def _trust(gate: str, project: Path, environ: dict[str, str]) -> None:
    """As ``stop-hook start --gate`` records it."""
    store = TrustStore(default_trust_file(environ))
    store.trust(
        str(project.resolve()), [gate_trust_item(gate, project)], datetime.now(UTC).isoformat()
    )


def _check(frame: Frame, project: Path, environ: dict[str, str]) -> Checked:
    return check_claim(
        frame,
        depth=1,
        run_id="r1",
        final_text=f"Done.\n{SIG}",
        project=project,
        environ=environ,
        settings_for=lambda _project, _env: BoxSettings(sandbox="off"),
    )


def test_the_head_commit_or_nothing(tmp_path: Path) -> None:
    assert head_commit(tmp_path) == ""  # not a repository
    git(tmp_path, "init", "-q")
    assert head_commit(tmp_path) == ""  # no commit yet
    project = new_repo(tmp_path / "p")
    assert head_commit(project) == git(project, "rev-parse", "HEAD")


def test_a_frame_without_evidence_holds(tmp_path: Path) -> None:
    checked = _check(Frame(Mode.LOOP, 2, 5, "p"), tmp_path, _environ(tmp_path))
    assert (checked.refused, checked.review) == (None, None)


def test_a_gate_nobody_trusted_here_never_runs(tmp_path: Path) -> None:
    environ = _environ(tmp_path)
    gate = "touch ran"
    assert gate_untrusted(gate, tmp_path, environ).startswith("not run: this gate was not set")
    checked = _check(Frame(Mode.LOOP, 2, 5, "p", gate=gate), tmp_path, environ)
    assert checked.refused is not None
    assert "not run" in checked.refused.text
    assert not (tmp_path / "ran").exists()


def test_a_trusted_gate_runs_red_refuses_and_green_holds(tmp_path: Path) -> None:
    environ = _environ(tmp_path)
    red, green = "echo 'FAILED t.py::test_a'; exit 3", "touch ran"
    _trust(red, tmp_path, environ)
    _trust(green, tmp_path, environ)
    assert gate_untrusted(green, tmp_path, environ) == ""
    refused = _check(Frame(Mode.LOOP, 2, 5, "p", gate=red), tmp_path, environ).refused
    assert refused is not None
    assert "FAILED t.py::test_a" in refused.text
    assert _check(Frame(Mode.LOOP, 2, 5, "p", gate=green), tmp_path, environ).refused is None
    assert (tmp_path / "ran").exists()


def test_a_reviewer_that_cannot_answer_refuses_the_claim(tmp_path: Path) -> None:
    project = new_repo(tmp_path / "p")
    environ = {
        **_environ(tmp_path),
        "ANTHROPIC_API_KEY": "sk-test",
        "ANTHROPIC_API_URL": "http://127.0.0.1:9",  # nothing listens: no answer
    }
    frame = Frame(Mode.LOOP, 2, 5, "p", reviewer="claude-m", base=head_commit(project))
    checked = _check(frame, project, environ)
    assert checked.review is not None
    assert checked.review.complete is None
    assert checked.review.error
    assert checked.refused is not None
