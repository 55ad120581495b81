"""Completion on neutral ground: one plan parser for the loop and the report, one rule text."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from forgeflare import _completion
from forgeflare.stophook import _completion as stophook_completion
from forgeflare.stophook import _signals as stophook_signals
from forgeflare.supervisor.backends import _backends

LINES = st.sampled_from(
    [
        "- [ ] a",
        "- [x] b",
        "* [X] c",
        "+ [ ] d",
        "  - [ ] nested",
        "-[ ] no",
        "text",
        "",
        "\t* [ ] t",
    ]
)


@given(st.lists(LINES, max_size=12))
def test_the_loop_counts_the_boxes_the_report_lists(lines: list[str]) -> None:
    text = "\n".join(lines)
    tasks = _completion.plan_tasks(text)
    assert _completion.count_unchecked(text) == sum(1 for done, _ in tasks if not done)


def test_one_home_for_the_tags_and_the_rule() -> None:
    assert stophook_signals.find_signal is _completion.find_signal
    assert stophook_completion.completion_hint is _completion.completion_hint
    assert _backends.completion_signal is _completion.completion_signal
    assert _completion.RULE in _completion.completion_hint(_completion.Mode.LOOP)
    assert _completion.COMPLETE_TAG in _backends.StreamBackend.prompt_suffix
