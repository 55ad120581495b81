"""The agents the loop runs: which one next (fallback, usage windows), its process, its key."""
