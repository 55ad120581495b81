"""What an iteration proved, pure: git facts, delivery, the reviewer, finish and wait rules."""
