"""Where a gate runs (boxed, unconfined or refused) and the line that says so; an unconfined
gate run for real: in the project, without secrets, marked, bounded by its timeout."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from forgeflare.security._gaterun import GateBox, choose_gate_box, gate_argv, run_gate


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


UNCONFINED = GateBox(None, True, 'gate: runs unconfined ([security] sandbox = "off")')


def test_an_unconfined_gate_is_plain_bash(tmp_path: Path) -> None:
    assert gate_argv("make test", tmp_path, UNCONFINED, {}) == ["bash", "-c", "make test"]


async def test_a_gate_runs_in_the_project_without_secrets(tmp_path: Path) -> None:
    env = {**os.environ, "ANTHROPIC_API_KEY": "sk-secret"}
    gate = 'pwd; echo "key=${ANTHROPIC_API_KEY:-none} mark=${FORGEFLARE_GATE:+set}"; exit 3'
    done = await run_gate(gate, project=tmp_path, env=env, box=UNCONFINED, timeout=120)
    assert done.exit_code == 3
    assert done.output.splitlines() == [str(tmp_path), "key=none mark=set"]


async def test_a_refused_box_runs_nothing(tmp_path: Path) -> None:
    box = GateBox(None, True, "gate: not run", refused="not run: no bwrap")
    done = await run_gate(f"touch {tmp_path / 'ran'}", project=tmp_path, env={}, box=box)
    assert (done.exit_code, done.output) == (None, "not run: no bwrap")
    assert not (tmp_path / "ran").exists()


async def test_a_gate_past_its_timeout_has_no_exit_code(tmp_path: Path) -> None:
    seen: list[bytes] = []
    done = await run_gate(
        "echo started; exec sleep 600",
        project=tmp_path,
        env=dict(os.environ),
        box=UNCONFINED,
        timeout=1,
        grace=0,
        on_output=seen.append,
    )
    assert done.exit_code is None
    assert done.output.startswith("started\n")
    assert done.output.endswith("(timed out after 1 s)")
    assert b"".join(seen) == b"started\n"
