"""The loop's settings (config file, variables, flags) and what it would run, for trust."""
