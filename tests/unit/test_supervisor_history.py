"""Why a run ended, in words: every finish type has its own (none falls to the generic
``finished: TYPE``)."""

from __future__ import annotations

import pytest

from forgeflare.supervisor import RunRecord, finish_reason
from forgeflare.supervisor.evidence import FinishType


def _finished(finish: FinishType) -> RunRecord:
    return RunRecord(
        run_id="run-1",
        mode="building",
        project_dir="/p",
        started_at="2026-11-24T01:00:00Z",
        finished_at="2026-11-24T02:00:00Z",
        finish_type=finish.value,
        max_iterations=0,
        backend="forgeflare",
    )


@pytest.mark.parametrize("finish", list(FinishType))
def test_every_finish_type_has_its_words(finish: FinishType) -> None:
    words = finish_reason(_finished(finish))
    assert words
    assert not words.startswith("finished:")


@pytest.mark.parametrize(
    ("finish", "said"),
    [
        (FinishType.QUOTA, "quota is spent"),
        (FinishType.BLOCKED, "forgeflare answer"),
    ],
)
def test_quota_and_blocked_say_what_happened(finish: FinishType, said: str) -> None:
    assert said in finish_reason(_finished(finish))


def test_the_record_s_own_reason_wins() -> None:
    run = _finished(FinishType.QUOTA)
    run.finish_reason = "no agent left: claude: quota spent"
    assert finish_reason(run) == "no agent left: claude: quota spent"
