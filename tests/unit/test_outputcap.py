"""Output kept of a gate or hook run: head and tail, the cut said (pure)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from forgeflare.platform._outputcap import HeadTail, LineCap, cut_note


def test_small_output_is_kept_whole() -> None:
    kept = HeadTail(head=10, tail=10)
    kept.extend(b"abc")
    kept.extend(b"defghijklmnop")
    assert kept.kept() == b"abcdefghijklmnop"
    assert kept.cut == 0


def test_large_output_keeps_head_and_tail_and_says_the_cut() -> None:
    kept = HeadTail(head=4, tail=4)
    for chunk in (b"0123", b"456789", b"abcdefgh", b"WXYZ"):
        kept.extend(chunk)
    assert kept.cut == 14
    assert kept.kept() == b"0123\n" + cut_note(14).encode() + b"\nWXYZ"


@given(st.lists(st.binary(max_size=50), max_size=30), st.integers(0, 40), st.integers(0, 40))
def test_kept_is_bounded_and_exact(chunks: list[bytes], head: int, tail: int) -> None:
    kept = HeadTail(head=head, tail=tail)
    for chunk in chunks:
        kept.extend(chunk)
    whole = b"".join(chunks)
    out = kept.kept()
    if len(whole) <= head + tail:
        assert out == whole
    else:
        assert kept.cut == len(whole) - head - tail
        assert out.startswith(whole[:head])
        assert out.endswith(whole[len(whole) - tail :] if tail else b"")
        assert len(out) <= head + tail + 60


def test_cut_note_sizes() -> None:
    assert cut_note(12) == "[forgeflare: 12 bytes of output cut here]"
    assert cut_note(48 << 20) == "[forgeflare: 48.0 MB of output cut here]"


def test_lines_pass_until_the_head_then_the_tail_after_the_cut() -> None:
    out: list[bytes] = []
    cap = LineCap(out.append, head=6, tail=6)
    for line in (b"a\n", b"b\n", b"c\n", b"d\n", b"e\n", b"f\n", b"g\n"):
        cap(line)
    assert out == [b"a\n", b"b\n", b"c\n"]
    cap.close()
    assert out == [b"a\n", b"b\n", b"c\n", cut_note(2).encode() + b"\n", b"e\n", b"f\n", b"g\n"]


@given(st.lists(st.binary(min_size=1, max_size=30), max_size=40), st.integers(0, 50))
def test_lines_passed_on_are_bounded(lines: list[bytes], budget: int) -> None:
    out: list[bytes] = []
    cap = LineCap(out.append, head=budget, tail=budget)
    for line in lines:
        cap(line)
    cap.close()
    total = sum(len(line) for line in lines)
    if total <= budget:
        assert out == lines
    else:
        assert sum(len(line) for line in out) <= 2 * budget + 60
