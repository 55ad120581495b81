"""A fleet file of two loops, shared by the fleet file and Kubernetes tests."""

FLEET = """
[fleet]
name = "night"
parallel = 2
max_cost = 50
gate = "make test"

[[loop]]
name = "parser"
repo = "https://example.invalid/org/repo.git"
base = "main"
prompt = "Implement specs/parser.md; check off its tasks in IMPLEMENTATION_PLAN.md."
max_iterations = 10
max_runtime = "2h"

[[loop]]
name = "docs"
prompt = "Write the docs."
max_runtime = "30m"
backend = "claude"
"""
