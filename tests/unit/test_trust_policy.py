"""Trust's pure decision: a table of what is new, changed or removed, its properties, and the
override words."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from forgeflare._words import TRUE_WORDS
from forgeflare.trust import (
    TrustItem,
    TrustRecord,
    check_trust,
    fingerprint,
    trust_override,
)
from trust_support import A2, A, B


def rec(*items: TrustItem) -> TrustRecord:
    return TrustRecord(fingerprint(items), {i.key: i.digest for i in items})


def test_table() -> None:
    p, q = "/p", "/q"
    rows = [
        # items, records, override -> trusted, new, changed, removed
        ((), {}, False, True, (), (), ()),
        ((A,), {}, False, False, ("a",), (), ()),
        ((A,), {}, True, True, (), (), ()),
        ((A,), {p: rec(A)}, False, True, (), (), ()),
        ((A2,), {p: rec(A)}, False, False, (), ("a",), ()),
        ((A, B), {p: rec(A)}, False, False, ("b",), (), ()),
        ((A,), {p: rec(A, B)}, False, True, (), (), ()),  # a subset of what was trusted
        ((A2,), {p: rec(A, B)}, False, False, (), ("a",), ("b",)),
        ((A,), {q: rec(A)}, False, True, (), (), ()),  # a clone with the same content
        ((A2,), {q: rec(A)}, False, False, ("a",), (), ()),
    ]
    for items, records, override, trusted, new, changed, removed in rows:
        check = check_trust(items, records, p, override=override)
        assert (check.trusted, check.new, check.changed, check.removed) == (
            trusted,
            new,
            changed,
            removed,
        ), (items, records)


keys = st.text("abc", min_size=1, max_size=3)


item_sets = st.dictionaries(keys, st.text("xy", max_size=3), max_size=4).map(
    lambda d: [TrustItem(k, v) for k, v in d.items()]
)


@given(item_sets)
def test_trusting_then_checking_is_trusted(items: list[TrustItem]) -> None:
    assert check_trust(items, {"/p": rec(*items)}, "/p").trusted


@given(item_sets, item_sets)
def test_untrusted_exactly_when_something_is_new_or_changed(
    before: list[TrustItem], now: list[TrustItem]
) -> None:
    check = check_trust(now, {"/p": rec(*before)}, "/p")
    known = {i.key: i.digest for i in before}
    differs = any(known.get(i.key) != i.digest for i in now)
    assert check.trusted is not differs
    assert bool(check.new or check.changed) is differs


@given(item_sets)
def test_fingerprint_ignores_order(items: list[TrustItem]) -> None:
    assert fingerprint(items) == fingerprint(list(reversed(items)))


def test_override_values() -> None:
    assert trust_override({"FORGEFLARE_TRUST": "1"})
    assert trust_override({"FORGEFLARE_TRUST": "yes"})
    assert not trust_override({"FORGEFLARE_TRUST": "0"})
    assert not trust_override({})
    assert trust_override({}, flag=True)


def test_override_words_are_one_list() -> None:
    for word in TRUE_WORDS:
        assert trust_override({"FORGEFLARE_TRUST": f" {word.upper()} "})
    for word in ("0", "false", "no", "off", "", "2"):
        assert not trust_override({"FORGEFLARE_TRUST": word})
