"""The agents the loop runs (``forgeflare loop``'s agent side).

Which agent runs the next iteration (the primary, a fallback, or none until a usage window
resets: :func:`choose_agent`, pure), the machine's usage windows per account
(:func:`read_windows`, :func:`record_window`), how the agent gets its API key
(:func:`plan_agent_key`), how its process is run under the loop's Ctrl+C / SIGTERM control
(:func:`supervise`), and which failures waiting cannot fix (:func:`iteration_failure`). The
backends themselves (how to start each CLI and read its stream) are ``supervisor.backends``.
"""

from forgeflare.supervisor.agents._agentkey import KeyPlan
from forgeflare.supervisor.agents._agentkey import key_file
from forgeflare.supervisor.agents._agentkey import plan_agent_key
from forgeflare.supervisor.agents._agentproc import ChildResult
from forgeflare.supervisor.agents._agentproc import StopControl
from forgeflare.supervisor.agents._agentproc import exit_status
from forgeflare.supervisor.agents._agentproc import supervise
from forgeflare.supervisor.agents._deterministic import iteration_failure
from forgeflare.supervisor.agents._fallback import AgentSpec
from forgeflare.supervisor.agents._fallback import Choice
from forgeflare.supervisor.agents._fallback import Window
from forgeflare.supervisor.agents._fallback import choose_agent
from forgeflare.supervisor.agents._fallback import credit_line
from forgeflare.supervisor.agents._fallback import credit_of
from forgeflare.supervisor.agents._fallback import credit_window
from forgeflare.supervisor.agents._fallback import month_spend
from forgeflare.supervisor.agents._fallback import parse_agent_spec
from forgeflare.supervisor.agents._windowkey import WindowKey
from forgeflare.supervisor.agents._windowkey import agent_account
from forgeflare.supervisor.agents._windowstore import read_windows
from forgeflare.supervisor.agents._windowstore import record_window
from forgeflare.supervisor.agents._windowstore import window_store_path

__all__ = [
    "AgentSpec",
    "ChildResult",
    "Choice",
    "KeyPlan",
    "StopControl",
    "Window",
    "WindowKey",
    "agent_account",
    "choose_agent",
    "credit_line",
    "credit_of",
    "credit_window",
    "exit_status",
    "iteration_failure",
    "key_file",
    "month_spend",
    "parse_agent_spec",
    "plan_agent_key",
    "read_windows",
    "record_window",
    "supervise",
    "window_store_path",
]
