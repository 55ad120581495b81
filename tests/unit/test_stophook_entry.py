"""The hook process's entry, in this process over a real stdin, stdout and working directory:
the quick Stops, the full hook after them, and exit 0 whatever goes wrong."""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path

import pytest

from forgeflare.security import BoxSettings
from forgeflare.stophook import continued, state_path
from forgeflare.stophook._entry import run_stop_hook_process
from stophook_support import DONE, write_state


@pytest.fixture
def hook_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The hook runs with ``tmp_path`` as its working directory (the project)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FORGEFLARE_STOPHOOK_WAIT_MS", "0")
    return tmp_path


def _stdin(monkeypatch: pytest.MonkeyPatch, data: bytes) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))


def test_no_loop_is_silent(
    hook_in: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _stdin(monkeypatch, b'{"hook_event_name": "Stop"}')
    assert run_stop_hook_process() == 0
    assert capsys.readouterr() == ("", "")


def test_a_running_loop_goes_on_and_bytes_that_are_not_utf8_do_no_harm(
    hook_in: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    write_state(hook_in, updated_at=datetime.now(UTC).isoformat())
    payload = {"hook_event_name": "Stop", "last_assistant_message": "Still \udcff failing."}
    _stdin(monkeypatch, json.dumps(payload).encode().replace(b"\\udcff", b"\xff"))
    assert run_stop_hook_process() == 0
    out = capsys.readouterr()
    assert (continued(out.out) or "").startswith("[ITERATION 2/5]")
    assert json.loads(state_path(hook_in).read_text())["stack"][0]["iter"] == 2


def test_a_claim_goes_to_the_full_hook_and_ends_the_loop(
    hook_in: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    write_state(hook_in, updated_at=datetime.now(UTC).isoformat())
    _stdin(monkeypatch, json.dumps({"last_assistant_message": f"Done.\n{DONE}"}).encode())
    assert run_stop_hook_process() == 0
    out = capsys.readouterr()
    assert continued(out.out) is None
    assert not state_path(hook_in).exists()


def test_a_failure_anywhere_still_allows_the_stop(
    hook_in: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    write_state(hook_in, updated_at=datetime.now(UTC).isoformat(), gate="make test")

    def unreadable(project: Path, environ: Mapping[str, str]) -> BoxSettings:
        raise RuntimeError("the settings broke")

    _stdin(monkeypatch, json.dumps({"last_assistant_message": f"Done.\n{DONE}"}).encode())
    assert run_stop_hook_process(unreadable) == 0
    assert capsys.readouterr() == (
        "",
        "forgeflare stop-hook: internal error (RuntimeError('the settings broke')); stop allowed\n",
    )


def test_a_closed_stdout_is_exit_0(hook_in: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_state(hook_in, updated_at=datetime.now(UTC).isoformat())
    _stdin(monkeypatch, json.dumps({"last_assistant_message": "Still failing."}).encode())
    unwritable = hook_in / "out"
    unwritable.write_text("")
    with unwritable.open("r") as read_only:
        monkeypatch.setattr(sys, "stdout", read_only)
        assert run_stop_hook_process() == 0
