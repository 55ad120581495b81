"""``.forgeflare/convergence.json``: tokens from an API usage object (damage counts 0), their
sum and total, and the file's updates on real files (final kept with observations, a stale
or corrupt file replaced, never half written)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forgeflare.disk import (
    MAX_COUNT,
    ConvergenceError,
    Final,
    Observation,
    Tokens,
    append_observations,
    clear_convergence,
    convergence_path,
    read_convergence,
    write_final,
)
from forgeflare.disk._convergence import load_for_update


@pytest.mark.parametrize(
    ("usage", "tokens"),
    [
        (
            {
                "input_tokens": 10,
                "output_tokens": 5,
                "cache_read_input_tokens": 100,
                "cache_creation_input_tokens": 7,
            },
            Tokens(input=10, output=5, cache_read=100, cache_write=7),
        ),
        ({"input_tokens": 3}, Tokens(input=3)),
        ({}, Tokens()),
        ({"input_tokens": -1, "output_tokens": True}, Tokens()),
        ({"input_tokens": "12", "output_tokens": 1.5}, Tokens()),
        ({"input_tokens": MAX_COUNT}, Tokens(input=MAX_COUNT)),
        ({"input_tokens": MAX_COUNT + 1}, Tokens()),
        ({"cache_read": 9, "input": 9}, Tokens()),  # our names are not the API's
    ],
)
def test_tokens_from_a_usage_object(usage: dict[str, object], tokens: Tokens) -> None:
    assert Tokens.from_usage(usage) == tokens


counts = st.integers(0, 10**9)
token_sets = st.builds(Tokens, input=counts, output=counts, cache_read=counts, cache_write=counts)


@given(token_sets, token_sets)
def test_the_total_of_a_sum_is_the_sum_of_the_totals(a: Tokens, b: Tokens) -> None:
    assert (a + b).total == a.total + b.total
    assert a + Tokens() == a


def test_final_is_written_beside_the_observations(tmp_path: Path) -> None:
    path = convergence_path(tmp_path)
    assert path == tmp_path / ".forgeflare" / "convergence.json"
    path.parent.mkdir()
    assert read_convergence(path) is None
    append_observations(path, [Observation(signal="tests_pass", tool_iterations=2)])
    append_observations(path, [Observation(signal="converged", reason="plan done")])
    write_final(path, Final(reason="end_turn", total_tokens=9, tokens=Tokens(output=9)))
    state = read_convergence(path)
    assert state is not None
    assert [o.signal for o in state.observations] == ["tests_pass", "converged"]
    assert state.final is not None
    assert (state.final.reason, state.final.tokens) == ("end_turn", Tokens(output=9))
    assert sorted(os.listdir(path.parent)) == ["convergence.json"]  # no temporary left


@pytest.mark.parametrize("text", ["{", "[]", '{"observations": 3}', '{"final": {"x": 1}}'])
def test_a_corrupt_file_is_an_error_to_read_and_replaced_on_update(
    tmp_path: Path, text: str
) -> None:
    path = tmp_path / "convergence.json"
    path.write_text(text)
    with pytest.raises(ConvergenceError) as info:
        read_convergence(path)
    assert str(path) in str(info.value)
    assert "\n" not in str(info.value)
    assert load_for_update(path).observations == []
    write_final(path, Final(reason="error"))
    assert json.loads(path.read_text())["final"]["reason"] == "error"


def test_clearing_a_stale_file(tmp_path: Path) -> None:
    path = tmp_path / "convergence.json"
    assert clear_convergence(path) is None  # nothing to clear
    path.write_text("{}")
    assert clear_convergence(path) is None
    assert not path.exists()
    path.mkdir()  # cannot be unlinked: a warning, not an exception
    warning = clear_convergence(path)
    assert warning is not None
    assert warning.startswith(f"could not delete stale {path}: ")


def test_an_unknown_key_in_final_is_ignored_and_a_missing_reason_is_not() -> None:
    assert Final.model_validate({"reason": "end_turn", "future": 1}).reason == "end_turn"
    with pytest.raises(ValueError, match="reason"):
        Final.model_validate({"total_tokens": 1})
