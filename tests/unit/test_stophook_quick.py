"""The quick Stop: what its process loads, and the Stop without a loop silent (the running loop's
half is ``test_stophook_quickloop``)."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from forgeflare.stophook._quick import quick_stop
from stophook_support import NOW, write_state, write_transcript

FORBIDDEN = ("dataclasses", "inspect", "ast", "typer", "click", "rich", "pydantic", "httpx", "trio")
"""What the Stop that claims nothing must never load (issue 42)."""
ALSO_AVOIDED = ("typing", "pathlib", "forgeflare.stophook._machine", "forgeflare.stophook._hook")
"""What it does not load today either: the quick Stop's whole point."""
BIN = Path(sys.executable).parent
ENTRIES = {
    "forgeflare stop-hook": [sys.executable, str(BIN / "forgeflare"), "stop-hook"],
    "forgeflare-stop-hook": [sys.executable, str(BIN / "forgeflare-stop-hook")],
    "python -m forgeflare stop-hook": [sys.executable, "-m", "forgeflare", "stop-hook"],
}


def imported(entry: list[str], project: Path, payload: dict[str, Any]) -> tuple[int, set[str]]:
    """Exit status and every module one real hook process imported (``-X importtime``)."""
    argv = [entry[0], "-X", "importtime", *entry[1:]]
    out = subprocess.run(
        argv, input=json.dumps(payload), capture_output=True, text=True, cwd=project, timeout=60
    )
    lines = [line for line in out.stderr.splitlines() if line.startswith("import time:")]
    return out.returncode, {line.split("|")[-1].strip() for line in lines}


@pytest.mark.parametrize("entry", list(ENTRIES))
@pytest.mark.parametrize("case", ["no loop", "a loop, no claim"])
def test_the_stop_without_a_claim_loads_only_what_it_uses(
    tmp_path: Path, entry: str, case: str
) -> None:
    script = ENTRIES[entry][1]
    if script != "-m" and not Path(script).exists():
        pytest.skip(f"{entry}: not installed in this environment")
    payload = {"hook_event_name": "Stop", "cwd": str(tmp_path), "session_id": "s"}
    if case == "a loop, no claim":
        write_state(tmp_path, updated_at=datetime.now(UTC).isoformat())
        transcript = write_transcript(tmp_path / "t.jsonl", "Two tests still fail.")
        payload["transcript_path"] = str(transcript)
    code, modules = imported(ENTRIES[entry], tmp_path, payload)
    assert code == 0  # a block is said on stdout
    assert "forgeflare.stophook._quick" in modules
    roots = {name.split(".")[0] for name in modules}
    assert sorted(roots & set(FORBIDDEN)) == []
    assert sorted(set(ALSO_AVOIDED) & modules) == []
    if case == "no loop":  # nearly every Stop: json and os, not even the clock
        assert sorted({"datetime", "forgeflare.stophook._quickloop"} & modules) == []


def test_the_import_check_sees_what_a_claim_loads(tmp_path: Path) -> None:
    """The measure can fail: a claim goes to the full hook, which loads the machine."""
    write_state(tmp_path, updated_at=datetime.now(UTC).isoformat())
    transcript = write_transcript(tmp_path / "t.jsonl", "Done.\n<loop-done>COMPLETE</loop-done>")
    payload = {"hook_event_name": "Stop", "cwd": str(tmp_path), "transcript_path": str(transcript)}
    code, modules = imported(ENTRIES["python -m forgeflare stop-hook"], tmp_path, payload)
    assert code == 0
    assert {"typing", "forgeflare.stophook._machine"} <= modules


def test_no_loop_is_one_stat_and_silent(tmp_path: Path) -> None:
    payload = json.dumps({"hook_event_name": "Stop", "cwd": str(tmp_path)})
    assert quick_stop(payload, environ={}, cwd=str(tmp_path), now=NOW) == (0, "", "")
    assert list(tmp_path.iterdir()) == []
