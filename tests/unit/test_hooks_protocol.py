"""The pure shell-hook protocol: truncation, payload fields, output parsing, messages."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forgeflare.hooks import (
    RESULT_CAP_BYTES,
    Block,
    Blocked,
    HookFailure,
    ProcessOutcome,
    Signal,
    Verdict,
    block_message,
    cap_for_model,
    floor_char_boundary,
    interpret_guard,
    interpret_observe,
    interpret_post,
    interpret_stop,
    post_tool_payload,
    pre_tool_payload,
    stop_payload,
    truncate_result,
)

MARKER_PREFIX = "\n... (truncated for hook, full result: "


def _split(out: str) -> tuple[bytes, str, bytes]:
    head, rest = out.split(MARKER_PREFIX, 1)
    total, tail = rest.split(" bytes)\n", 1)
    return head.encode(), total, tail.encode()


# -- truncation ---------------------------------------------------------------------------


def test_short_result_unchanged() -> None:
    text = "x" * RESULT_CAP_BYTES
    assert truncate_result(text) is text


def test_ascii_truncation_exact_layout() -> None:
    text = "".join(chr(ord("a") + i % 26) for i in range(6000))
    out = truncate_result(text)
    assert (
        out == text[:2560] + "\n... (truncated for hook, full result: 6000 bytes)\n" + text[-2560:]
    )


def test_cut_inside_multibyte_char_moves_down() -> None:
    # "a" + "é"*3000: byte 2560 is the second byte of an "é", so the head keeps 2559 bytes.
    text = "a" + "é" * 3000
    head, total, tail = _split(truncate_result(text))
    assert total == "6001"
    assert head.decode() == "a" + "é" * 1279
    assert tail.decode() == "é" * 1280  # 6001 - 2560 = 3441 starts an "é"
    # And with the tail cut inside a char: it moves down, keeping one more whole "é".
    head, total, tail = _split(truncate_result("é" * 3000))
    assert (len(head), len(tail)) == (2560, 2560)
    head, total, tail = _split(truncate_result("é" * 3000 + "b"))
    assert tail.decode() == "é" * 1280 + "b"  # 6001 - 2560 = 3441 is mid-char: down to 3440


def test_four_byte_chars_never_split() -> None:
    text = "🦀" * 2000  # 8000 bytes
    head, total, tail = _split(truncate_result(text))
    assert total == "8000"
    assert len(head) == 2560  # 2560 is a multiple of 4: already a boundary
    assert set(head.decode()) == {"🦀"}
    assert set(tail.decode()) == {"🦀"}


def test_floor_char_boundary() -> None:
    data = "aé🦀".encode()  # a | c3 a9 | f0 9f a6 80
    assert [floor_char_boundary(data, i) for i in range(9)] == [0, 1, 1, 3, 3, 3, 3, 7, 7]


@given(st.text(min_size=0, max_size=4000))
def test_truncation_properties(text: str) -> None:
    data = text.encode("utf-8", errors="surrogatepass")
    out = truncate_result(text)
    if len(data) <= RESULT_CAP_BYTES:
        assert out == text
        return
    head, total, tail = _split(out)
    assert int(total) == len(data)
    assert data.startswith(head)
    assert data.endswith(tail)
    assert 2557 <= len(head) <= 2560
    assert 2560 <= len(tail) <= 2563
    # Both parts decode: no character was split.
    head.decode("utf-8", errors="surrogatepass")
    tail.decode("utf-8", errors="surrogatepass")


@given(
    st.text(alphabet=st.sampled_from(["a", "é", "€", "🦀"]), min_size=1, max_size=12),
    st.text(alphabet=st.sampled_from(["a", "é", "€", "🦀"]), max_size=4),
)
def test_truncation_of_wide_text_keeps_whole_chars(pattern: str, prefix: str) -> None:
    text = prefix + pattern * (6000 // len(pattern.encode()) + 1)  # always over the cap
    head, total, tail = _split(truncate_result(text))
    assert int(total) == len(text.encode())
    assert text.startswith(head.decode())
    assert text.endswith(tail.decode())
    assert 2557 <= len(head) <= 2560


# -- payloads -----------------------------------------------------------------------------


def test_guard_payload_fields() -> None:
    p = pre_tool_payload(phase="guard", tool="Bash", input={"c": 1}, tool_iterations=3, cwd="/p")
    assert p == {
        "event": "PreToolUse",
        "phase": "guard",
        "tool": "Bash",
        "input": {"c": 1},
        "tool_iterations": 3,
        "cwd": "/p",
    }


def test_observe_payload_after_allow_has_no_block_fields() -> None:
    p = pre_tool_payload(phase="observe", tool="Bash", input={}, tool_iterations=1, cwd="/p")
    assert p["blocked"] is False
    assert "blocked_by" not in p
    assert "block_reason" not in p


def test_observe_payload_after_block() -> None:
    p = pre_tool_payload(
        phase="observe",
        tool="Bash",
        input={},
        tool_iterations=1,
        cwd="/p",
        blocked=True,
        blocked_by="ralph-guard.sh",
        block_reason="destructive command detected",
    )
    assert set(p) == {
        "event",
        "phase",
        "tool",
        "input",
        "blocked",
        "blocked_by",
        "block_reason",
        "tool_iterations",
        "cwd",
    }
    assert (p["blocked"], p["blocked_by"]) == (True, "ralph-guard.sh")


def test_post_and_stop_payload_fields() -> None:
    p = post_tool_payload(
        tool="Bash", input={}, result="x" * 6000, is_error=True, tool_iterations=2, cwd="/p"
    )
    assert set(p) == {"event", "tool", "input", "result", "is_error", "tool_iterations", "cwd"}
    assert len(p["result"].encode()) < 6000
    s = stop_payload(reason="end_turn", tool_iterations=7, total_tokens=45000, cwd="/p")
    assert s == {
        "event": "Stop",
        "reason": "end_turn",
        "tool_iterations": 7,
        "total_tokens": 45000,
        "cwd": "/p",
    }


# -- interpreting output ------------------------------------------------------------------


def _ok(out: object) -> ProcessOutcome:
    raw = out if isinstance(out, bytes) else json.dumps(out).encode()
    return ProcessOutcome("exited", returncode=0, stdout=raw)


def test_guard_outputs() -> None:
    assert interpret_guard(_ok({"action": "allow"})).outcome == "allow"
    blocked = interpret_guard(_ok({"action": "block", "reason": "no"}))
    assert (blocked.outcome, blocked.answer) == ("block", Block("no"))
    assert interpret_guard(_ok({"action": "maybe"})).outcome == "invalid_json"
    assert interpret_guard(_ok(b"not json")).outcome == "invalid_json"
    assert interpret_guard(_ok(b"")).outcome == "invalid_json"
    assert interpret_guard(_ok([1])).outcome == "invalid_json"
    crash = interpret_guard(ProcessOutcome("exited", returncode=2, stdout=b'{"action":"allow"}'))
    assert crash.failure is not None
    assert (crash.outcome, crash.failure.returncode) == ("crash", 2)
    assert interpret_guard(ProcessOutcome("timeout")).outcome == "timeout"
    # More output than the limit is its own failure, not "invalid JSON" (issue 12).
    too_large = interpret_guard(ProcessOutcome("too_large", detail="stdout exceeded 9 bytes"))
    assert too_large.outcome == "too_large"
    assert block_message("g.sh", too_large, 5000) == (
        "hook failed: g.sh output too large (stdout exceeded 9 bytes) (tool blocked by default)"
    )


@given(st.binary(max_size=200), st.integers(min_value=-9, max_value=255))
def test_guard_never_allows_by_accident(stdout: bytes, code: int) -> None:
    r = interpret_guard(ProcessOutcome("exited", returncode=code, stdout=stdout))
    if code != 0:
        assert r.outcome == "crash"
    assert r.outcome in ("allow", "block", "crash", "invalid_json")
    assert (r.answer is None) == (r.failure is not None)
    if r.outcome == "allow":
        assert json.loads(stdout)["action"] == "allow"


def test_post_outputs() -> None:
    assert interpret_post(_ok({"action": "continue"})).outcome == "continue"
    sig = interpret_post(_ok({"action": "signal", "signal": "converged", "reason": "3 runs"}))
    assert (sig.outcome, sig.answer) == ("signal", Signal("converged", "3 runs"))
    assert interpret_post(_ok({"action": "signal"})).outcome == "invalid_json"
    assert interpret_post(_ok({"action": "block"})).outcome == "invalid_json"


def test_stop_unrecognised_action_is_continue_with_note() -> None:
    r = interpret_stop(_ok({"action": "signal"}))
    assert r.outcome == "continue"
    assert r.note is not None
    assert "'signal'" in r.note
    assert interpret_stop(_ok({"action": "continue"})).note is None
    assert interpret_stop(_ok(b"{")).outcome == "invalid_json"


def test_stop_blocked_parks_on_its_question() -> None:
    r = interpret_stop(_ok({"action": "blocked", "question": "  v1 or v2?\n"}))
    assert (r.outcome, r.answer, r.note) == ("blocked", Blocked("v1 or v2?"), None)
    for out in ({"action": "blocked"}, {"action": "blocked", "question": " "},
                {"action": "blocked", "question": 3}):  # fmt: skip
        broken = interpret_stop(_ok(out))
        assert broken.outcome == "invalid_json"
        assert broken.failure is not None
        assert broken.failure.detail == "blocked action without a 'question'"


def test_observe_output_ignored_unless_broken() -> None:
    assert interpret_observe(_ok({"action": "block"})).outcome == "continue"
    assert interpret_observe(_ok(b"nope")).outcome == "invalid_json"


@pytest.mark.parametrize(
    ("result", "message"),
    [
        (Verdict(Block("destructive command detected")),
         "blocked by ralph-guard.sh: destructive command detected"),
        (Verdict(failure=HookFailure("timeout")),
         "hook failed: ralph-guard.sh timed out after 5000ms (tool blocked by default)"),
        (Verdict(failure=HookFailure("crash", returncode=2)),
         "hook failed: ralph-guard.sh exited with code 2 (tool blocked by default)"),
        (Verdict(failure=HookFailure("invalid_json")),
         "hook failed: ralph-guard.sh returned invalid JSON (tool blocked by default)"),
    ],
)  # fmt: skip
def test_the_four_guard_messages(result: Verdict, message: str) -> None:
    assert block_message("ralph-guard.sh", result, 5000) == message


@given(st.text(max_size=12000))
def test_what_reaches_the_model_is_capped(reason: str) -> None:
    # A 500 KB block reason once reached the model (issue 12): messages keep head and tail.
    message = block_message("g.sh", Verdict(Block(reason)), None)
    size = len(message.encode("utf-8", errors="surrogatepass"))
    assert size <= RESULT_CAP_BYTES + 80
    full = f"blocked by g.sh: {reason}"
    if len(full.encode("utf-8", errors="surrogatepass")) <= RESULT_CAP_BYTES:
        assert message == full
    else:
        assert message.startswith("blocked by g.sh: ")
        assert "truncated hook output, full length" in message
    assert cap_for_model(message) == message  # capping is idempotent on short text
