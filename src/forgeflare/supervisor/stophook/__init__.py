"""``forgeflare stop-hook``: the stop-hook state machine for loops inside one agent session."""
