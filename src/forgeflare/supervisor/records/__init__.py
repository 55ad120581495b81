"""What a loop keeps and tells: run records, runs read back, the display, notifications."""
