"""Stand-in agents and helpers for the supervisor's tests."""
