"""Trust items shared by the trust decision and store tests: ``a`` in two versions, ``b``."""

from __future__ import annotations

from forgeflare.trust import TrustItem

A = TrustItem("a", "cmd a", {"a.sh": "1"})
B = TrustItem("b", "cmd b")
A2 = TrustItem("a", "cmd a", {"a.sh": "2"})
"""``a`` with its script changed."""
