"""Every setting the docs document has a test that sets it and sees what it changes.

The configuration table of the docs (``| `[section] key` | `FRESHER_...` | default | meaning |``,
generated from the config model by ``docs/_hooks/reference.py`` when the site is built) lists
each key of the model; here each key is tied to one behaviour test (a parse check does not
count) that ``make test-fast`` runs too. A new setting without one fails this test:
write the test (``tests/integration/test_documented_settings.py`` is the place for a small
one), then name it below.
"""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

from docs_support import reference
from forgeflare.supervisor.config._config import env_name

ROOT = Path(__file__).resolve().parents[2]


def documented_table() -> str:
    """The configuration table as the docs site shows it."""
    return str(reference().loop_config_table())


_LOOP = "tests/integration/test_supervisor_loop.py"
_OURS = "tests/integration/test_documented_settings.py"
_FALLBACK = "tests/integration/test_fallback_loop.py"

BEHAVIOUR_TESTS: dict[str, str] = {
    "[fresher] mode": f"{_LOOP}::test_agent_env_and_prompt",
    "[limits] max_requests_per_hour": f"{_OURS}"
    "::test_max_requests_per_hour_waits_and_never_finishes",
    "[security] readable": f"{_OURS}::test_security_readable_reaches_the_gates_box",
    "[fresher] checkpoint": "tests/integration/test_loop_delivery.py"
    "::test_without_the_checkpoint_a_dirty_claim_is_undelivered",
    "[fresher] max_iterations": f"{_LOOP}::test_max_iterations",
    "[fresher] smart_termination": f"{_OURS}"
    "::test_smart_termination_ends_a_loop_that_changes_nothing",
    "[fresher] model": f"{_OURS}::test_agent_arguments_follow_the_agent_settings",
    "[paths] log_dir": f"{_OURS}::test_log_dir_is_where_the_run_is_recorded",
    "[paths] spec_dir": f"{_OURS}"
    "::test_plan_file_and_spec_dir_are_what_the_agent_is_told_and_the_loop_reads",
    "[paths] plan_file": f"{_OURS}"
    "::test_plan_file_and_spec_dir_are_what_the_agent_is_told_and_the_loop_reads",
    "[paths] hooks_dir": f"{_OURS}::test_hooks_dir_is_where_the_hooks_are_found",
    "[hooks] enabled": f"{_OURS}::test_hook_switches_choose_which_hooks_run",
    "[hooks] timeout": f"{_OURS}::test_hook_timeout_is_when_a_hook_is_ended",
    "[hooks] fail_behavior": f"{_LOOP}::test_hook_error_logged_and_fail_behavior_abort",
    "[hooks] started_enabled": f"{_OURS}::test_hook_switches_choose_which_hooks_run",
    "[hooks] next_iteration_enabled": f"{_OURS}::test_hook_switches_choose_which_hooks_run",
    "[hooks] finished_enabled": f"{_OURS}::test_hook_switches_choose_which_hooks_run",
    "[agent] backend": f"{_OURS}::test_agent_arguments_follow_the_agent_settings",
    "[agent] command": f"{_OURS}::test_agent_arguments_follow_the_agent_settings",
    "[agent] permission_mode": f"{_OURS}::test_agent_arguments_follow_the_agent_settings",
    "[agent] extra_args": f"{_OURS}::test_agent_arguments_follow_the_agent_settings",
    "[agent] final_required": "tests/integration/test_backends_loop.py"
    "::test_final_required_makes_a_silent_command_agent_an_error",
    "[agent] kill_grace": f"{_OURS}::test_kill_grace_is_how_long_a_term_ignoring_agent_is_given",
    "[agent] fallback": f"{_FALLBACK}"
    "::test_a_spent_quota_falls_back_at_once_and_finishes_quota_without_one",
    "[agent] fallback_after": f"{_OURS}"
    "::test_fallback_after_decides_between_waiting_and_falling_back",
    "[agent.profiles.NAME]": f"{_FALLBACK}"
    "::test_a_spent_quota_falls_back_at_once_and_finishes_quota_without_one",
    "[limits] max_runtime": f"{_LOOP}::test_max_runtime",
    "[limits] max_cost": f"{_OURS}::test_max_cost_ends_the_loop_once_spent",
    "[limits] max_outage": f"{_OURS}"
    "::test_max_outage_is_how_long_transient_failures_are_waited_out",
    "[limits] gate": f"{_LOOP}"
    "::test_a_red_gate_with_inits_next_iteration_hook_lets_the_agent_fix_it",
    "[limits] iteration_timeout": f"{_LOOP}::test_hang_past_iteration_timeout_leaves_nothing",
    "[limits] max_consecutive_errors": f"{_LOOP}::test_crash_is_an_error_iteration_then_error",
    "[limits] error_pause": f"{_OURS}::test_error_pause_is_waited_after_an_error_iteration",
    "[limits] stuck_after": f"{_OURS}"
    "::test_stuck_after_is_how_many_block_limits_in_a_row_end_the_loop",
    "[limits] max_skips": f"{_OURS}::test_max_skips_is_how_many_skips_in_a_row_end_the_loop",
    "[limits] on_blocked": f"{_OURS}::test_on_blocked_is_whether_a_question_waits_for_an_answer",
    "[limits] stall_after": f"{_OURS}"
    "::test_stall_after_ends_a_loop_that_repeats_the_same_gate_failure",
    "[limits] monthly_credit": f"{_FALLBACK}"
    "::test_a_monthly_credit_spent_by_earlier_runs_falls_back_or_waits_before_the_first_iteration",
    "[finish] reviewer": f"{_OURS}"
    "::test_reviewer_max_diff_is_how_much_of_the_diff_the_reviewer_sees",
    "[finish] reviewer_max_diff": f"{_OURS}"
    "::test_reviewer_max_diff_is_how_much_of_the_diff_the_reviewer_sees",
    "[notify] command": f"{_OURS}::test_notify_on_chooses_the_events_notified",
    "[notify] on": f"{_OURS}::test_notify_on_chooses_the_events_notified",
    "[security] pass_env": f"{_OURS}::test_pass_env_lets_a_named_secret_through_to_the_agent",
    "[security] allow_paths": f"{_OURS}::test_sandbox_settings_reach_the_agent",
    "[security] sandbox": f"{_OURS}::test_sandbox_settings_reach_the_agent",
    "[security] sandbox_network": f"{_OURS}::test_sandbox_settings_reach_the_agent",
    "[security] writable": f"{_OURS}::test_sandbox_settings_reach_the_agent",
    "[security] sockets": f"{_OURS}::test_sandbox_settings_reach_the_agent",
}

_ROW = re.compile(r"^\| `(\[[\w.]+\](?: \w+)?)` \| (?:`FRESHER_\w+` )?\|", re.MULTILINE)


def documented_settings(text: str) -> list[str]:
    """The keys of the docs' configuration table, in its order (``[agent.profiles.NAME]``
    too: a row without a variable)."""
    return _ROW.findall(text)


@cache
def defined_tests(path: str) -> dict[str, str]:
    """The test functions defined at the top level of ``path`` (relative to the repository),
    each with its source (decorators included: parametrized settings are there)."""
    text = (ROOT / path).read_text(encoding="utf-8")
    lines = text.splitlines()
    found = {}
    for node in ast.parse(text).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith(
            "test_"
        ):
            first = min([d.lineno for d in node.decorator_list] + [node.lineno])
            found[node.name] = "\n".join(lines[first - 1 : node.end_lineno])
    return found


def spellings(key: str) -> set[str]:
    """How a test sets ``key``: its variable, its flag, or the key in a config.toml."""
    section, _, name = key.partition("] ")
    section = section.strip("[]")
    if not name:
        return {f"[{section.removesuffix('.NAME')}."}  # [agent.profiles.NAME]: [agent.profiles.x]
    return {env_name(section, name), f"--{name.replace('_', '-')}", f"{name} =", f"{name}="}


def test_the_table_is_read() -> None:
    keys = documented_settings(documented_table())
    assert len(keys) == len(set(keys)) >= 45
    assert {"[fresher] mode", "[agent.profiles.NAME]", "[security] sockets"} <= set(keys)


def test_every_documented_setting_has_a_behaviour_test() -> None:
    keys = documented_settings(documented_table())
    missing = [key for key in keys if key not in BEHAVIOUR_TESTS]
    assert missing == [], f"documented settings without a behaviour test: {missing}"
    gone = sorted(set(BEHAVIOUR_TESTS) - set(keys))
    assert gone == [], f"settings no longer documented (drop them here): {gone}"


def test_each_named_behaviour_test_exists_and_sets_its_setting() -> None:
    absent, silent = [], []
    for key, where in BEHAVIOUR_TESTS.items():
        path, _, name = where.partition("::")
        if not (ROOT / path).is_file() or name not in defined_tests(path):
            absent.append(f"{key}: {where}")
        elif not any(word in defined_tests(path)[name] for word in spellings(key)):
            silent.append(f"{key}: {where} (none of {sorted(spellings(key))})")
    assert absent == []
    assert silent == []


def test_every_setting_is_covered_by_the_fast_tier() -> None:
    """``make test-fast`` leaves out e2e/ and the modules that drive a real Claude Code or
    Codex (``tests/conftest.py``): each setting's test runs there all the same."""
    slow = sorted(
        where
        for where in BEHAVIOUR_TESTS.values()
        if where.startswith("tests/e2e/")
        or re.search(
            r"^from (claude_code|codex)_support import",
            (ROOT / where.partition("::")[0]).read_text(encoding="utf-8"),
            re.MULTILINE,
        )
    )
    assert slow == []


def test_a_row_added_without_a_test_is_found() -> None:
    text = (
        "| key | variable | default | meaning |\n|---|---|---|---|\n"
        "| `[limits] new_bound` | `FRESHER_NEW_BOUND` | `1` | A new bound. |\n"
        "| `[agent.profiles.NAME]` | | | Named profiles. |\n"
    )
    assert documented_settings(text) == ["[limits] new_bound", "[agent.profiles.NAME]"]
    assert "[limits] new_bound" not in BEHAVIOUR_TESTS
