"""The completion tags and their finder, as the stop-hook's modules import them.

They live on neutral ground, :mod:`forgeflare._completion`, which the loop supervisor imports
too: one rule for what completes a loop, whichever runs it.
"""

from __future__ import annotations

from forgeflare._completion import SIGNALS, Mode, find_signal

__all__ = ["SIGNALS", "Mode", "find_signal"]
