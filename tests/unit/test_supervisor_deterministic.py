"""Which failures retrying cannot fix (``supervisor.agents._deterministic``), and the loop's
verdict on one: finish ``error`` at once with the agent's line, or hand the night to a fallback."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forgeflare.supervisor.agents._deterministic import (
    deterministic_failure,
    error_line,
    iteration_failure,
    same_line,
)
from forgeflare.supervisor.backends import BACKENDS
from forgeflare.supervisor.evidence import (
    Finish,
    FinishType,
    IterationFacts,
    IterationOutcome,
    Limits,
    Streaks,
    decide,
)

CLAUDE = BACKENDS["claude"].deterministic_errors
CODEX = BACKENDS["codex"].deterministic_errors

# (outcome, transient, line, earlier, table, deterministic?)
TABLE: list[tuple[str, bool, str, list[str], tuple[str, ...], bool]] = [
    ("agent_error", False, "Not logged in · Please run /login", [], (), True),
    (
        "api_error",
        False,
        "authentication_error: Invalid API key · Fix external API key",
        [],
        (),
        True,
    ),
    ("api_error", False, "permission_error: not allowed for this org", [], (), True),
    ("api_error", False, "not_found_error: model: claude-nope", [], (), True),
    ("agent_error", False, "Error: model 'gpt-9' does not exist", [], (), True),
    (
        "agent_error",
        False,
        "--dangerously-skip-permissions cannot be used with root/sudo privileges",
        [],
        CLAUDE,
        True,
    ),
    ("agent_error", False, "bwrap: execvp codex-linux-sandbox: No such file", [], CODEX, True),
    ("agent_error", False, "config: bad key at line 3", [], (), False),  # once: not yet
    ("agent_error", False, "config: bad key at line 3", ["config: bad key at line 3"], (), True),
    ("agent_error", False, "request 81 failed", ["request 17 failed"], (), True),  # digits aside
    ("agent_error", False, "fetch failed", ["fetch failed"], (), False),  # network
    ("api_error", False, "API Error: 529 Overloaded", ["API Error: 529 Overloaded"], (), False),
    ("agent_error", False, "usage limit reached", ["usage limit reached"], (), False),
    ("api_error", True, "Not logged in", [], (), False),  # transient: an outage's
    ("rate_limited", False, "Not logged in", [], (), False),
    ("quota", False, "Not logged in", [], (), False),  # quota has its own finish
    ("ok", False, "Not logged in", [], (), False),
    ("agent_error", False, "", [""], (), False),  # no line: nothing to show, not decided
    ("timed_out", False, "Not logged in", [], (), False),
]


@pytest.mark.parametrize(("outcome", "transient", "line", "earlier", "table", "expected"), TABLE)
def test_table(
    outcome: str,
    transient: bool,
    line: str,
    earlier: list[str],
    table: tuple[str, ...],
    expected: bool,
) -> None:
    found = deterministic_failure(
        outcome=outcome, transient=transient, line=line, earlier=earlier, table=table
    )
    assert found == (line if expected else None)


lines = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=60)
outcomes = st.sampled_from(["ok", "agent_error", "api_error", "rate_limited", "quota", "killed"])


@given(outcomes, st.booleans(), lines, st.lists(lines, max_size=3))
def test_only_error_iterations_that_are_not_transient_are_ever_deterministic(
    outcome: str, transient: bool, line: str, earlier: list[str]
) -> None:
    found = deterministic_failure(outcome=outcome, transient=transient, line=line, earlier=earlier)
    if found is not None:
        assert outcome in ("agent_error", "api_error")
        assert not transient
        assert found == line


@given(lines)
def test_a_line_said_twice_is_deterministic_unless_it_names_a_network_failure(
    line: str,
) -> None:
    once = deterministic_failure(outcome="agent_error", transient=False, line=line)
    twice = deterministic_failure(outcome="agent_error", transient=False, line=line, earlier=[line])
    if once is not None:
        assert twice == line  # a table line stays one
    if line.strip():
        noisy = f"{line} connection reset"
        again = deterministic_failure(
            outcome="agent_error", transient=False, line=noisy, earlier=[noisy]
        )
        assert again is None or again == noisy  # only the table makes it one


@given(lines, lines)
def test_same_line_is_symmetric_and_ignores_digits(a: str, b: str) -> None:
    assert same_line(a, b) == same_line(b, a)
    if a.strip():
        assert same_line(a, a + " ")
        assert same_line("x 1 " + a, "x 22 " + a)


def test_error_line_is_the_last_words_kept_short() -> None:
    assert error_line("starting\n\nNot logged in\n  \n") == "Not logged in"
    assert error_line(None) == ""
    assert len(error_line("x" * 1000)) == 300


@dataclass
class Row:
    outcome: str
    transient: bool | None = None
    detail: str | None = None


def test_iteration_failure_reads_earlier_errors_only() -> None:
    now = Row("agent_error", detail="boom: broken config")
    assert iteration_failure(now, [Row("ok", detail="boom: broken config")]) is None
    assert iteration_failure(now, [Row("api_error", True, "boom: broken config")]) is None
    assert iteration_failure(now, [Row("agent_error", None, "boom: broken config")]) == (
        "boom: broken config"
    )


NOW = datetime(2026, 2, 13, 12, 0, tzinfo=UTC)


def verdict_of(outcome: IterationOutcome, streaks: Streaks | None = None) -> Finish:
    limits = Limits(max_iterations=10)
    facts = IterationFacts(outcome=outcome, limits=limits, now=NOW, streaks=streaks or Streaks())
    action = decide(facts).action
    assert isinstance(action, Finish)
    return action


@pytest.mark.parametrize("errors", [0, 1])
def test_a_deterministic_failure_finishes_error_at_once(errors: int) -> None:
    outcome = IterationOutcome(outcome="agent_error", exit_code=1, deterministic="Not logged in")
    finish = verdict_of(outcome, Streaks(errors=errors))
    assert finish.type is FinishType.ERROR
    assert finish.type.exit_code == 12
    assert finish.agent_only  # a fallback may go on instead
    assert (finish.reason or "").endswith("Not logged in")


def test_an_ordinary_error_is_not_finished_at_once() -> None:
    facts = IterationFacts(
        outcome=IterationOutcome(outcome="agent_error", exit_code=1), limits=Limits(), now=NOW
    )
    assert not isinstance(decide(facts).action, Finish)


def test_a_spent_quota_is_the_agents_alone_too() -> None:
    assert verdict_of(IterationOutcome(outcome="quota")).agent_only
