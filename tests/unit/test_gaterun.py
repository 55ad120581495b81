"""Where a gate runs (boxed, unconfined or refused) and the line that says so."""

from __future__ import annotations

import pytest

from forgeflare.security._gaterun import choose_gate_box


@pytest.mark.parametrize(
    ("setting", "problem", "boxed", "said", "refused"),
    [
        ("auto", None, True, "gate: runs in the sandbox (bubblewrap), without secrets", ""),
        ("bwrap", None, True, "gate: runs in the sandbox (bubblewrap), without secrets", ""),
        ("off", None, False, 'gate: runs unconfined ([security] sandbox = "off")', ""),
        ("off", "no bwrap", False, 'gate: runs unconfined ([security] sandbox = "off")', ""),
        ("auto", "no bwrap", False, "gate: runs unconfined: no bwrap", ""),
        (
            "bwrap",
            "no bwrap",
            False,
            'gate: not run: [security] sandbox = "bwrap": no bwrap',
            'not run: [security] sandbox = "bwrap": no bwrap',
        ),
    ],
)
def test_where_a_gate_runs(
    setting: str, problem: str | None, boxed: bool, said: str, refused: str
) -> None:
    assert choose_gate_box(setting, problem) == (boxed, said, refused)
