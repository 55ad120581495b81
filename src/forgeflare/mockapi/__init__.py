"""``forgeflare mock-api``: a scripted, protocol-accurate Anthropic Messages API server."""
