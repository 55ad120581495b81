"""A forgeflare process refuses core dumps and ptrace by others (PR_SET_DUMPABLE)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from forgeflare.platform._dumpable import dumpable, forbid_dumps


@pytest.mark.linux_only("PR_SET_DUMPABLE is Linux")
def test_a_forgeflare_process_is_not_dumpable() -> None:
    child = "from forgeflare.platform._dumpable import dumpable; print(dumpable())"
    code = (
        "import subprocess, sys; from forgeflare.platform._dumpable import dumpable, forbid_dumps; "
        "print(dumpable(), forbid_dumps(), dumpable(), flush=True); "
        f"subprocess.run([sys.executable, '-c', {child!r}])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    # What it starts is dumpable again (exec resets it): the flag guards the key holder only.
    assert out.split() == ["True", "True", "False", "True"]


def test_off_linux_nothing_is_known_and_nothing_changes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "platform", "darwin")
    assert forbid_dumps() is False
    assert dumpable() is None
