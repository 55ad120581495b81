"""The loop's setup, built alone: its effective limits come from the config in one place."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forgeflare.supervisor import LoopConfig
from forgeflare.supervisor.evidence import Limits
from forgeflare.supervisor.run import loop_limits
from forgeflare.supervisor.run._setup import time_scale
from loop_support import loop_setup


@pytest.mark.parametrize(
    ("value", "scale"),
    [("1", 1.0), ("0.5", 0.5), ("0", 0.0), ("2", 1.0), ("-1", 1.0), ("soon", 1.0), ("", 1.0)],
)
def test_time_scale_table(value: str, scale: float) -> None:
    assert time_scale({"FORGEFLARE_TIME_SCALE": value}) == scale


def test_time_scale_defaults_to_one() -> None:
    assert time_scale({}) == 1.0


@given(st.floats(min_value=0, max_value=1))
def test_a_scale_between_zero_and_one_is_kept(value: float) -> None:
    assert time_scale({"FORGEFLARE_TIME_SCALE": repr(value)}) == value


def test_limits_follow_the_config() -> None:
    cfg = LoopConfig.model_validate(
        {
            "fresher": {"max_iterations": 7, "smart_termination": False},
            "limits": {
                "max_runtime": 60,
                "error_pause": 10,
                "stall_after": 4,
                "max_cost": 2.5,
                "max_outage": 30,
                "gate": "true",
            },
        }
    )
    limits = loop_limits(cfg, 0.5)
    assert (limits.max_iterations, limits.max_runtime, limits.smart_termination) == (7, 60, False)
    assert (limits.stall_after, limits.max_cost, limits.gate) == (4, 2.5, True)
    assert limits.error_pause == 5.0  # scaled, like every wait
    assert limits.waits.max_outage == 30


def test_a_reviewer_alone_makes_the_evidence_count() -> None:
    cfg = LoopConfig.model_validate({"finish": {"reviewer": "claude-sonnet-4-5"}})
    assert loop_limits(cfg, 1.0).gate is True
    assert loop_limits(LoopConfig(), 1.0).gate is False


def test_the_setup_is_built_alone(tmp_path: Path) -> None:
    setup = loop_setup(tmp_path / "p", config={"paths": {"log_dir": "runs"}})
    assert setup.project == (tmp_path / "p").resolve()
    assert setup.log_root == setup.project / "runs"
    assert setup.time_scale == 0.001
    assert setup.limits == loop_limits(setup.cfg, 0.001)
    assert setup.answer_wait is None  # on_blocked defaults to finishing at once


def test_the_decision_s_defaults_are_the_config_s() -> None:
    """One source: ``Limits()`` is what a loop with an empty config decides with (but for
    the time scale and the gate, which come from the run)."""
    assert Limits() == replace(loop_limits(LoopConfig(), 1.0), waits=Limits().waits)
    assert Limits().waits.max_outage == LoopConfig().limits.max_outage
