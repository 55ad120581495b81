"""The running loop: its setup, its parts, one step, the run method and its commands."""
