"""What the OpenCode and pi readers share, on the streams their real CLIs wrote
(``tests/fixtures/opencode``, ``tests/fixtures/pi``, one folder per version), and both
backends registered with their commands."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from forgeflare import ConfigError
from forgeflare.supervisor.backends import (
    BACKENDS,
    OpenCodeBackend,
    OpenCodeStreamReader,
    PiBackend,
    PiStreamReader,
)

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
OPENCODE = FIXTURES / "opencode" / "1.18.33"
PI = FIXTURES / "pi" / "0.73.1"


def read(reader: OpenCodeStreamReader | PiStreamReader, path: Path) -> list[str]:
    shown: list[str] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        shown += reader.feed(line)
    return shown


@pytest.mark.parametrize(
    ("folder", "make"),
    [(OPENCODE, lambda: OpenCodeStreamReader(model="claude-sonnet-4-5")), (PI, PiStreamReader)],
    ids=["opencode", "pi"],
)
@pytest.mark.parametrize(
    ("name", "outcome", "transient"),
    [
        ("ok", "ok", False),
        ("outage", "api_error", True),
        ("auth", "agent_error", False),
        ("agent-error", "agent_error", False),
    ],
)
def test_recorded_streams_read_into_their_outcome(
    folder: Path, make: Any, name: str, outcome: str, transient: bool
) -> None:
    reader = make()
    shown = read(reader, folder / f"{name}.jsonl")
    report = reader.report()
    assert (report.outcome, report.transient) == (outcome, transient), shown
    assert not reader.damaged
    if outcome == "ok":
        assert report.tokens.input > 0
        assert report.cost_usd > 0
        assert report.model == "claude-sonnet-4-5"
        assert report.turns == 2
        assert report.session_id
        assert "<loop-done>COMPLETE</loop-done>" in report.final_text
        assert any(line.startswith("▸ bash") for line in shown)
    else:
        assert report.detail


def test_both_are_registered_and_find_their_command(tmp_path: Path) -> None:
    assert BACKENDS["opencode"] is OpenCodeBackend
    assert BACKENDS["pi"] is PiBackend
    argv = OpenCodeBackend().argv(python="", model="anthropic/m", command="", extra=[])
    assert argv == ["opencode", "run", "--format", "json", "--model", "anthropic/m"]
    assert PiBackend().argv(python="", model="", command="", extra=[]) == [
        "pi",
        "-p",
        "--mode",
        "json",
    ]
    with pytest.raises(ConfigError, match="opencode"):
        OpenCodeBackend().preflight(tmp_path, ["opencode"], {"PATH": str(tmp_path)})
