"""What a loop knows before it starts and never changes: its options, config, display, stop
control, project, effective limits and notifier (built once, here, from explicit inputs).

Every part of the loop reads a :class:`LoopSetup`; none writes one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from forgeflare.security import child_environment
from forgeflare.supervisor.agents._agentproc import StopControl
from forgeflare.supervisor.config._config import LoopConfig, parse_on_blocked
from forgeflare.supervisor.config._options import LoopOptions
from forgeflare.supervisor.evidence._finish import Limits
from forgeflare.supervisor.evidence._waits import WaitSettings
from forgeflare.supervisor.records._display import LoopDisplay
from forgeflare.supervisor.records._notify import Notifier, notify_urls
from forgeflare.trust import default_trust_file

__all__ = ["LoopSetup", "loop_limits", "time_scale"]


def time_scale(env: Mapping[str, str]) -> float:
    """``FORGEFLARE_TIME_SCALE`` shrinks every wait and pause (tests and demos); default 1."""
    try:
        value = float(env.get("FORGEFLARE_TIME_SCALE", "1"))
    except ValueError:
        return 1.0
    return value if 0 <= value <= 1 else 1.0


def loop_limits(cfg: LoopConfig, scale: float) -> Limits:
    """The loop's effective limits: the one place the config becomes the decision's bounds."""
    return Limits(
        max_iterations=cfg.fresher.max_iterations,
        max_runtime=cfg.limits.max_runtime,
        smart_termination=cfg.fresher.smart_termination,
        max_consecutive_errors=cfg.limits.max_consecutive_errors,
        stuck_after=cfg.limits.stuck_after,
        max_skips=cfg.limits.max_skips,
        iteration_timeout=cfg.limits.iteration_timeout,
        max_cost=cfg.limits.max_cost,
        error_pause=cfg.limits.error_pause * scale,
        gate=bool(cfg.limits.gate or cfg.finish.reviewer),
        stall_after=cfg.limits.stall_after,
        waits=WaitSettings(max_outage=cfg.limits.max_outage, jitter=5.0),
    )


@dataclass(frozen=True)
class LoopSetup:
    """The loop's fixed ground (see module)."""

    opts: LoopOptions
    cfg: LoopConfig
    display: LoopDisplay
    stop: StopControl
    project: Path
    """The project directory, resolved."""
    log_root: Path
    """Where the runs' directories are (``[paths] log_dir``)."""
    limits: Limits
    time_scale: float
    """``FORGEFLARE_TIME_SCALE``: waits are this many times as long (tests set it small)."""
    answer_wait: float | None
    """Seconds to wait for an answer before finishing ``blocked`` (``None``: do not)."""
    notifier: Notifier

    @classmethod
    def build(cls, opts: LoopOptions, display: LoopDisplay, stop: StopControl) -> LoopSetup:
        """The setup of the loop ``opts`` asks for."""
        cfg = opts.config
        project = opts.project_dir.resolve()
        scale = time_scale(opts.env)
        config_dir = default_trust_file(opts.env).parent
        notifier = Notifier(
            command=cfg.notify.command,
            urls=notify_urls(opts.env, config_dir),
            on=tuple(e.strip() for e in cfg.notify.on.split(",") if e.strip()),
            cwd=project,
            env=child_environment(opts.env, opts.pass_env),
            log=display.warn,
        )
        return cls(
            opts=opts,
            cfg=cfg,
            display=display,
            stop=stop,
            project=project,
            log_root=project / cfg.paths.log_dir,
            limits=loop_limits(cfg, scale),
            time_scale=scale,
            answer_wait=parse_on_blocked(cfg.limits.on_blocked),
            notifier=notifier,
        )
