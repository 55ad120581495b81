"""What an iteration proved, and what the loop decides from it (pure where it can be).

Git facts (:func:`run_git`, snapshots, trees), what a checkpoint delivers
(:func:`plan_checkpoint`), the neutral reviewer (:func:`run_review`), the finish decision
(:func:`decide` over :class:`IterationOutcome` and :class:`Streaks`, with
:data:`FINISH_EXIT_CODES`) and the wait rules (usage windows, outage back-off, the budget).
"""

from forgeflare.supervisor.evidence._delivery import Change
from forgeflare.supervisor.evidence._delivery import CheckpointPlan
from forgeflare.supervisor.evidence._delivery import Delivered
from forgeflare.supervisor.evidence._delivery import exclude_pathspec
from forgeflare.supervisor.evidence._delivery import lock_is_stale
from forgeflare.supervisor.evidence._delivery import plan_checkpoint
from forgeflare.supervisor.evidence._delivery import undelivered_reason
from forgeflare.supervisor.evidence._finish import Between
from forgeflare.supervisor.evidence._finish import ContinueLoop
from forgeflare.supervisor.evidence._finish import FINISH_EXIT_CODES
from forgeflare.supervisor.evidence._finish import Finish
from forgeflare.supervisor.evidence._finish import FinishType
from forgeflare.supervisor.evidence._finish import IterationFacts
from forgeflare.supervisor.evidence._finish import IterationOutcome
from forgeflare.supervisor.evidence._finish import Limits
from forgeflare.supervisor.evidence._finish import RunGate
from forgeflare.supervisor.evidence._finish import Skip
from forgeflare.supervisor.evidence._finish import Streaks
from forgeflare.supervisor.evidence._finish import Verdict
from forgeflare.supervisor.evidence._finish import agent_time
from forgeflare.supervisor.evidence._finish import before_iteration
from forgeflare.supervisor.evidence._finish import claimed
from forgeflare.supervisor.evidence._finish import decide
from forgeflare.supervisor.evidence._finish import finish_rule
from forgeflare.supervisor.evidence._finish import hook_verdict
from forgeflare.supervisor.evidence._git import GIT_TIMEOUT
from forgeflare.supervisor.evidence._git import GitResult
from forgeflare.supervisor.evidence._git import GitSnapshot
from forgeflare.supervisor.evidence._git import NETWORK_TIMEOUT
from forgeflare.supervisor.evidence._git import STATUS_ARGS
from forgeflare.supervisor.evidence._git import commits_and_tree
from forgeflare.supervisor.evidence._git import git
from forgeflare.supervisor.evidence._git import git_argv
from forgeflare.supervisor.evidence._git import git_env
from forgeflare.supervisor.evidence._git import git_snapshot
from forgeflare.supervisor.evidence._git import git_timeout
from forgeflare.supervisor.evidence._git import run_git
from forgeflare.supervisor.evidence._git import snapshot_of
from forgeflare.supervisor.evidence._git import tree_of
from forgeflare.supervisor.evidence._gitwritable import git_dir_writable
from forgeflare.supervisor.evidence._gitwritable import git_write_problem
from forgeflare.supervisor.evidence._reviewer import ReviewInput
from forgeflare.supervisor.evidence._reviewer import review_prompt
from forgeflare.supervisor.evidence._reviewer import run_review
from forgeflare.supervisor.evidence._reviewer import verdict_of
from forgeflare.supervisor.evidence._waits import WaitFor
from forgeflare.supervisor.evidence._waits import WaitSettings
from forgeflare.supervisor.evidence._waits import WaitStreaks

__all__ = [
    "FINISH_EXIT_CODES",
    "GIT_TIMEOUT",
    "NETWORK_TIMEOUT",
    "STATUS_ARGS",
    "Between",
    "Change",
    "CheckpointPlan",
    "ContinueLoop",
    "Delivered",
    "Finish",
    "FinishType",
    "GitResult",
    "GitSnapshot",
    "IterationFacts",
    "IterationOutcome",
    "Limits",
    "ReviewInput",
    "RunGate",
    "Skip",
    "Streaks",
    "Verdict",
    "WaitFor",
    "WaitSettings",
    "WaitStreaks",
    "agent_time",
    "before_iteration",
    "claimed",
    "commits_and_tree",
    "decide",
    "exclude_pathspec",
    "finish_rule",
    "git",
    "git_argv",
    "git_dir_writable",
    "git_env",
    "git_snapshot",
    "git_timeout",
    "git_write_problem",
    "hook_verdict",
    "lock_is_stale",
    "plan_checkpoint",
    "review_prompt",
    "run_git",
    "run_review",
    "snapshot_of",
    "tree_of",
    "undelivered_reason",
    "verdict_of",
]
