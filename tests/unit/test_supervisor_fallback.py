"""Choosing the agent of the next iteration: primary, fallback or a wait (pure)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forgeflare._errors import ConfigError
from forgeflare.supervisor.agents import AgentSpec, Window, choose_agent, parse_agent_spec
from forgeflare.supervisor.config import LoopConfig, load_config

NOW = datetime(2026, 11, 25, 1, 0, tzinfo=UTC)
OWN = AgentSpec("forgeflare")
CODEX = AgentSpec("codex")
WORK = AgentSpec("claude", "work")
H = timedelta(hours=1)
M = timedelta(minutes=1)


def _in(delta: timedelta) -> Window:
    return Window(NOW + delta)


@pytest.mark.parametrize(
    ("windows", "current", "agent", "wait", "reason"),
    [
        # Nothing known: the primary.
        ({}, None, OWN, None, ""),
        # Primary out for 2 h: the first open fallback, saying why.
        ({OWN: _in(2 * H)}, OWN, CODEX, None, "forgeflare: usage limit for 2h"),
        # First fallback waiting too: the next one.
        ({OWN: _in(2 * H), CODEX: _in(H)}, OWN, WORK, None, "on claude:work"),
        # A short wait on the primary: wait rather than switch.
        ({OWN: _in(10 * M)}, OWN, None, NOW + 10 * M, "forgeflare"),
        # ... but already on a fallback: keep going there.
        ({OWN: _in(10 * M)}, CODEX, CODEX, None, ""),
        # The primary's window has reset: back to it.
        ({OWN: Window(NOW - M)}, CODEX, OWN, None, "back to the primary"),
        # All waiting: the earliest reset.
        ({OWN: _in(2 * H), CODEX: _in(H), WORK: _in(3 * H)}, CODEX, None, NOW + H, "no fallback"),
        # Quota spent everywhere, no reset known: finish.
        (
            {OWN: Window(None, "quota"), CODEX: Window(None), WORK: Window(None)},
            OWN,
            None,
            None,
            "no reset known",
        ),
        # Primary quota spent: a fallback at once (no fallback_after for a quota).
        ({OWN: Window(None, "quota")}, OWN, CODEX, None, "forgeflare: quota"),
    ],
)
def test_choose_agent_table(
    windows: dict[AgentSpec, Window],
    current: AgentSpec | None,
    agent: AgentSpec | None,
    wait: datetime | None,
    reason: str,
) -> None:
    choice = choose_agent(OWN, [CODEX, WORK], windows, NOW, current=current)
    assert choice.agent == agent
    assert choice.wait_until == wait
    assert reason in choice.reason


def test_no_fallback_waits_for_the_primary() -> None:
    choice = choose_agent(OWN, [], {OWN: _in(2 * H)}, NOW, current=OWN)
    assert (choice.agent, choice.wait_until) == (None, NOW + 2 * H)


@pytest.mark.parametrize(
    ("text", "spec"),
    [("codex", AgentSpec("codex")), ("claude:work", AgentSpec("claude", "work"))],
)
def test_parse_agent_spec(text: str, spec: AgentSpec) -> None:
    assert parse_agent_spec(text) == spec
    assert spec.label == text


@pytest.mark.parametrize("text", ["", ":work", "claude:", "a:b:c"])
def test_parse_agent_spec_rejects(text: str) -> None:
    with pytest.raises(ValueError, match="BACKEND"):
        parse_agent_spec(text)


_SPECS = [OWN, CODEX, WORK, AgentSpec("command", "x")]
_windows = st.dictionaries(
    st.sampled_from(_SPECS),
    st.builds(
        Window,
        st.one_of(st.none(), st.integers(-300, 300).map(lambda m: NOW + m * M)),
    ),
)


@given(
    windows=_windows,
    fallbacks=st.lists(st.sampled_from(_SPECS[1:]), unique=True, max_size=3),
    current=st.one_of(st.none(), st.sampled_from(_SPECS)),
    after=st.integers(0, 120).map(lambda m: m * M),
)
def test_choice_properties(
    windows: dict[AgentSpec, Window],
    fallbacks: list[AgentSpec],
    current: AgentSpec | None,
    after: timedelta,
) -> None:
    choice = choose_agent(OWN, fallbacks, windows, NOW, fallback_after=after, current=current)

    def is_open(s: AgentSpec) -> bool:
        return s not in windows or windows[s].open_at(NOW)

    if is_open(OWN):
        # The primary whenever its window is open.
        assert choice.agent == OWN
    elif choice.agent is not None:
        # Never an agent that is waiting; always one of the list.
        assert choice.agent in fallbacks
        assert is_open(choice.agent)
    else:
        # A wait is for a reset in the future; finishing means no reset is known.
        if choice.wait_until is not None:
            assert choice.wait_until > NOW
        else:
            assert all(
                windows.get(s, Window(NOW)).resets_at is None
                for s in [OWN, *fallbacks]
                if s in windows
            )
        # Waiting while a fallback is open happens only for a short wait on the primary.
        if any(is_open(s) for s in fallbacks):
            assert current in (None, OWN)
            assert choice.wait_until == windows[OWN].resets_at


def _load(tmp_path: Path, agent: str, env: dict[str, str] | None = None) -> LoopConfig:
    (tmp_path / ".fresher").mkdir(exist_ok=True)
    (tmp_path / ".fresher" / "config.toml").write_text(f"[agent]\n{agent}\n")
    return load_config(tmp_path, env=env or {}).config


def test_fallback_config(tmp_path: Path) -> None:
    cfg = _load(
        tmp_path,
        'fallback = ["codex", "forgeflare:cheap"]\nfallback_after = "5m"\n'
        '[agent.profiles.cheap]\nmodel = "claude-haiku-4-5"\nenv = { X = "1" }\n',
    )
    assert cfg.agent.fallback == ["codex", "forgeflare:cheap"]
    assert cfg.agent.fallback_after == 300.0
    assert cfg.profile_env("cheap") == {"X": "1"}
    assert "claude-haiku-4-5" in cfg.agent_argv("python", cfg.backend_for("forgeflare"), "cheap")
    assert _load(tmp_path, "", {"FRESHER_AGENT_FALLBACK": "codex, command"}).agent.fallback == [
        "codex",
        "command",
    ]


@pytest.mark.parametrize(
    ("agent", "words"),
    [
        ('fallback = ["codx"]', "unknown backend 'codx' (did you mean 'codex'?)"),
        ('fallback = ["forgeflare:nope"]', "no [agent.profiles.nope] (none defined)"),
        ('fallback = ["codex:"]', "'codex:' is not BACKEND[:PROFILE]"),
        ('fallback_after = "soon"', "fallback_after"),
        ('[agent.profiles.x]\nmodle = "m"', "x.modle: unknown key"),
        ("[agent.profiles.x]\nenv = { A = 1 }", "x.env.A: not a string"),
    ],
)
def test_fallback_config_mistakes_are_one_line(tmp_path: Path, agent: str, words: str) -> None:
    with pytest.raises(ConfigError) as caught:
        _load(tmp_path, agent)
    message = str(caught.value)
    assert words in message
    assert "\n" not in message


def test_month_spend_counts_this_calendar_month_of_this_agent() -> None:
    from forgeflare.supervisor.agents import month_spend

    rows = [
        (datetime(2026, 11, 1, 0, 0, tzinfo=UTC), OWN, 2.0),
        (datetime(2026, 11, 24, tzinfo=UTC), OWN, None),
        (datetime(2026, 11, 24, tzinfo=UTC), WORK, 7.0),  # another account
        (datetime(2026, 10, 31, 23, 59, tzinfo=UTC), OWN, 5.0),  # last month
        (None, OWN, 9.0),
    ]
    assert month_spend(rows, OWN, NOW) == 2.0


@pytest.mark.parametrize(
    ("spent", "credit", "now", "opens"),
    [
        (9.0, 0.0, NOW, None),  # no credit set
        (9.0, 10.0, NOW, None),
        (10.0, 10.0, NOW, datetime(2026, 12, 1, tzinfo=UTC)),
        (11.0, 10.0, datetime(2026, 12, 31, 23, tzinfo=UTC), datetime(2027, 1, 1, tzinfo=UTC)),
    ],
)
def test_a_spent_credit_is_a_window_to_the_first(
    spent: float, credit: float, now: datetime, opens: datetime | None
) -> None:
    from forgeflare.supervisor.agents import credit_window

    window = credit_window(spent, credit, now)
    assert (window.resets_at if window else None) == opens


@pytest.mark.parametrize(
    ("spent", "credit", "words"),
    [
        (6.8, 10.0, "$3.20 of $10 left"),
        (0.0, 2.5, "$2.50 of $2.5 left"),
        (12.0, 10.0, "$0.00 of $10 left"),  # overspent: nothing left, never below
    ],
)
def test_the_banner_says_what_is_left_of_a_credit(spent: float, credit: float, words: str) -> None:
    from forgeflare.supervisor.agents import AgentSpec, credit_line

    line = credit_line(spent, credit, AgentSpec("claude", "work"))
    assert line == f"monthly credit: {words} this month (claude:work)"


WORK = AgentSpec("claude", "work")


@pytest.mark.parametrize(
    ("spec", "limit", "profiles", "credit"),
    [
        (OWN, 5.0, {}, 5.0),  # [limits] monthly_credit is the primary's
        (WORK, 5.0, {}, 0.0),  # ... and no fallback's
        (WORK, 5.0, {"work": 10.0}, 10.0),  # [agent.profiles.work] monthly_credit
        (AgentSpec("codex", "work"), 0.0, {"work": 10.0}, 10.0),  # the profile's, any backend
        (AgentSpec("forgeflare", "home"), 5.0, {"work": 10.0}, 0.0),
    ],
)
def test_each_profile_may_have_its_own_monthly_credit(
    spec: AgentSpec, limit: float, profiles: dict[str, float], credit: float
) -> None:
    from forgeflare.supervisor.agents import credit_of

    assert credit_of(spec, OWN, limit, profiles) == credit
