"""The scaffolded ``finished`` hook has its own words for every finish type the loop has."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from forgeflare.supervisor.evidence import FinishType

HOOK = (
    Path(__file__).resolve().parents[2]
    / "src/forgeflare/templates/files/dot-fresher/hooks/finished"
)


@pytest.mark.parametrize("finish", [*(t.value for t in FinishType), "undelivered"])
def test_every_finish_type_has_words(finish: str, tmp_path: Path) -> None:
    env = {"PATH": os.environ["PATH"], "FRESHER_FINISH_TYPE": finish}
    done = subprocess.run(
        ["bash", str(HOOK)], env=env, cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert f"Loop finished: {finish}" not in done.stdout  # the fallback for unknown types
