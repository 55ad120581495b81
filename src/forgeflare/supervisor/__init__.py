"""The loop supervisor (``forgeflare loop``) and the stop-hook state machine."""
