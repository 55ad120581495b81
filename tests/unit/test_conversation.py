"""Pure conversation operations: tables and properties."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from forgeflare.agent import (
    CONTINUE_PROMPT,
    TRIM_THRESHOLD_TOKENS,
    TRUNCATED_PLACEHOLDER,
    MaxTokensAction,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    add_user_text,
    classify_max_tokens,
    conversation_bytes,
    drop_null_input_tool_uses,
    recover_conversation,
    should_trim,
    trim_conversation,
)


def test_continue_prompt_text() -> None:
    assert CONTINUE_PROMPT == "Continue from where you left off."


def test_classify_max_tokens_table() -> None:
    a = MaxTokensAction
    for count in range(6):
        assert classify_max_tokens(has_tool_use=True, has_text=True, continuation_count=count) is (
            a.DISPATCH_TOOLS
        )
        assert classify_max_tokens(has_tool_use=True, has_text=False, continuation_count=count) is (
            a.DISPATCH_TOOLS
        )
        assert classify_max_tokens(
            has_tool_use=False, has_text=False, continuation_count=count
        ) is (a.BREAK_EMPTY)
    for count in (0, 1, 2):
        assert classify_max_tokens(has_tool_use=False, has_text=True, continuation_count=count) is (
            a.CONTINUE
        )
    for count in (3, 4, 10):
        assert classify_max_tokens(has_tool_use=False, has_text=True, continuation_count=count) is (
            a.BREAK_CAP_REACHED
        )


def test_drop_null_input() -> None:
    text = TextBlock(text="hi")
    good = ToolUseBlock(id="t1", name="Read", input={"file_path": "a"})
    bad = ToolUseBlock(id="t2", name="Bash", input=None)
    assert drop_null_input_tool_uses([text, good, bad]) == [text, good]
    assert drop_null_input_tool_uses([bad]) == [TextBlock(text=TRUNCATED_PLACEHOLDER)]


def test_should_trim_gating() -> None:
    assert should_trim(0)
    assert not should_trim(1)
    assert not should_trim(TRIM_THRESHOLD_TOKENS - 1)
    assert should_trim(TRIM_THRESHOLD_TOKENS)
    assert should_trim(TRIM_THRESHOLD_TOKENS + 1)


def _tool_exchange(i: int, size: int) -> list[Message]:
    return [
        Message(
            role="assistant",
            content=[ToolUseBlock(id=f"t{i}", name="Read", input={"file_path": f"f{i}"})],
        ),
        Message(role="user", content=[ToolResultBlock(tool_use_id=f"t{i}", content="x" * size)]),
    ]


def _conversation(sizes: list[int]) -> list[Message]:
    conv = [Message.user_text("the task")]
    for i, size in enumerate(sizes):
        conv.extend(_tool_exchange(i, size))
    return conv


def _valid(conv: list[Message]) -> bool:
    if conv and conv[0].role != "user":
        return False
    for a, b in itertools.pairwise(conv):
        if a.role == b.role:
            return False
        if a.role == "assistant":
            uses = {x.id for x in a.content if isinstance(x, ToolUseBlock)}
            results = {x.tool_use_id for x in b.content if isinstance(x, ToolResultBlock)}
            if uses != results:
                return False
    return True


def test_trim_keeps_first_and_tail() -> None:
    conv = _conversation([1000] * 10)
    removed = trim_conversation(conv, budget=4000)
    assert removed > 0
    assert removed % 2 == 0
    assert conv[0] == Message.user_text("the task")
    assert _valid(conv)
    assert conversation_bytes(conv) <= 4000 or len(conv) == 3


@given(st.lists(st.integers(min_value=0, max_value=3000), max_size=12), st.integers(0, 40_000))
def test_trim_properties(sizes: list[int], budget: int) -> None:
    conv = _conversation(sizes)
    before = list(conv)
    removed = trim_conversation(conv, budget=budget)
    assert _valid(conv)
    assert conv[0] == before[0]
    assert conv[-2:] == before[-2:]
    assert len(conv) == len(before) - removed
    if conversation_bytes(before) <= budget:
        assert removed == 0


def test_recover_pops_user_and_orphaned_tool_use() -> None:
    conv = _conversation([10, 10])
    conv_before = list(conv)
    recover_conversation(conv)
    assert conv == conv_before[:-2]
    assert _valid(conv)


def test_recover_after_first_prompt_empties() -> None:
    conv = [Message.user_text("task")]
    recover_conversation(conv)
    assert conv == []


def test_recover_keeps_text_answer() -> None:
    conv = [Message.user_text("task"), Message(role="assistant", content=[TextBlock(text="ok")])]
    conv.append(Message.user_text("next"))
    recover_conversation(conv)
    assert [m.role for m in conv] == ["user", "assistant"]


@given(st.lists(st.integers(0, 50), max_size=6), st.booleans())
def test_recover_then_add_text_stays_valid(sizes: list[int], trailing_user: bool) -> None:
    conv = _conversation(sizes)
    if trailing_user and conv[-1].role == "assistant":
        conv.append(Message.user_text("more"))
    recover_conversation(conv)
    add_user_text(conv, "next prompt")
    assert _valid(conv)
    assert conv[-1].role == "user"
