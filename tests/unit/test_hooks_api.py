"""The Python hook API: validation at registration, matchers, module and entry-point loading."""

from __future__ import annotations

import re
import textwrap
import threading
import uuid
from pathlib import Path
from typing import Any

import pytest

from forgeflare._errors import ConfigError
from forgeflare.hooks import (
    Allow,
    Block,
    Blocked,
    Continue,
    Hook,
    HookEvent,
    HookOutcome,
    HookRegistrationError,
    HookRegistry,
    Signal,
    Stop,
    collect_hooks,
    hook,
    load_entry_point_hooks,
    load_hooks_module,
    make_hook,
    python_verdict,
)


def test_make_hook_takes_the_arguments_it_names() -> None:
    def guard(tool: str, input: dict[str, Any]) -> None:
        return None

    h = make_hook(guard, "PreToolUse", match="Bash")
    assert h.event is HookEvent.PRE_TOOL_USE
    assert h.arguments == ("tool", "input")
    assert h.name.endswith("guard")


def test_var_keyword_gets_everything() -> None:
    h = make_hook(lambda **kw: None, HookEvent.STOP)
    assert h.arguments == ("reason", "tool_iterations", "total_tokens")


def test_optional_unknown_argument_is_allowed() -> None:
    def f(step: int, extra: int = 1) -> None:
        return None

    assert make_hook(f, "StepStart").arguments == ("step",)


@pytest.mark.parametrize(
    ("event", "match", "func", "needle"),
    [
        ("PreTool", None, lambda tool: None, "unknown event 'PreTool'"),
        ("PreToolUse", None, lambda reason: None,
         "unknown argument 'reason'; PreToolUse hooks get tool, input, tool_iterations"),
        ("Stop", None, lambda tool: None, "unknown argument 'tool'"),
        ("Stop", "Bash", lambda reason: None, "a tool matcher needs PreToolUse or PostToolUse"),
        ("PreToolUse", 3, lambda tool: None, "match must be a tool name"),
        ("PreToolUse", [], lambda tool: None, "match must be a tool name"),
        ("PreToolUse", None, lambda *args: None, "must be passable by keyword"),
    ],
)  # fmt: skip
def test_registration_errors_name_the_hook(event: str, match: Any, func: Any, needle: str) -> None:
    with pytest.raises(HookRegistrationError) as info:
        make_hook(func, event, match=match, name="my-hook")
    assert "'my-hook'" in str(info.value)
    assert needle in str(info.value)
    assert isinstance(info.value, ConfigError)


def test_positional_only_rejected() -> None:
    def f(tool: str, /) -> None:
        return None

    with pytest.raises(HookRegistrationError, match="passable by keyword"):
        make_hook(f, "PreToolUse")


def test_matchers() -> None:
    def noop(tool: str) -> None:
        return None

    exact = make_hook(noop, "PreToolUse", match="Bash")
    assert exact.matches("Bash")
    assert not exact.matches("BashScript")
    several = make_hook(noop, "PostToolUse", match=["Read", "Grep"])
    assert several.matches("Grep")
    assert not several.matches("Bash")
    regex = make_hook(noop, "PreToolUse", match=re.compile("Re.*|Edit"))
    assert regex.matches("Read")
    assert regex.matches("Edit")
    assert not regex.matches("XRead")
    anything = make_hook(noop, "PreToolUse")
    assert anything.matches("Whatever")


def test_outcome_validation() -> None:
    with (
        pytest.warns(DeprecationWarning, match="deprecated"),
        pytest.raises(ValueError, match="unknown decision"),
    ):
        HookOutcome("block")  # type: ignore[arg-type]
    with (
        pytest.warns(DeprecationWarning, match="deprecated"),
        pytest.raises(ValueError, match="'allow' only"),
    ):
        HookOutcome("deny", updated_input={"a": 1})
    with pytest.warns(DeprecationWarning, match="return Allow, Block, Signal") as warned:
        outcome = HookOutcome("allow", updated_input={"a": 1})
    assert outcome.updated_input == {"a": 1}
    assert warned[0].filename == __file__  # points at the hook's own line


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize(
    ("event", "decision", "reason", "answer", "note"),
    [
        ("PreToolUse", "deny", "no", Block("no"), None),
        ("PreToolUse", "stop", None, Block("denied"), None),
        ("PreToolUse", "allow", None, Allow(), None),
        ("PreToolUse", "continue", "x", None, None),
        ("PostToolUse", "stop", "tests_pass", Signal("tests_pass", "tests_pass"), None),
        ("PostToolUse", "stop", None, Signal("h"), None),
        ("PostToolUse", "deny", "x", None, "decision 'deny' after the tool ran is ignored"),
        ("PostToolUse", "continue", None, None, None),
        ("Stop", "continue", "go on", Continue("go on"), None),
        ("Stop", "continue", None, Continue("Continue."), None),
        ("Stop", "stop", None, Stop(), None),
        ("Stop", "allow", None, None, None),
        ("StepEnd", "stop", "x", None, None),
    ],
)
def test_hook_outcome_adapter_keeps_the_old_meaning(
    event: str, decision: Any, reason: str | None, answer: object, note: str | None
) -> None:
    verdict = python_verdict(HookEvent(event), "h", HookOutcome(decision, reason=reason))
    assert (verdict.answer, verdict.failure, verdict.note) == (answer, None, note)


def test_python_verdict_accepts_only_the_events_answers() -> None:
    ok = python_verdict(HookEvent.PRE_TOOL_USE, "h", Allow({"a": 1}))
    assert ok.answer == Allow({"a": 1})
    wrong = python_verdict(HookEvent.POST_TOOL_USE, "h", Block("x"))
    assert wrong.failure is not None
    assert wrong.failure.detail == "returned Block, expected Continue, Signal or None"
    asked = python_verdict(HookEvent.STOP, "h", Blocked("v1 or v2?"))
    assert asked.answer == Blocked("v1 or v2?")
    assert asked.outcome == "blocked"
    late = python_verdict(HookEvent.POST_TOOL_USE, "h", Blocked("v1 or v2?"))
    assert late.failure is not None
    wrong_stop = python_verdict(HookEvent.STOP, "h", Block("x"))
    assert wrong_stop.failure is not None
    assert wrong_stop.failure.detail == "returned Block, expected Continue, Stop, Blocked or None"
    observe = python_verdict(HookEvent.STEP_END, "h", Continue())
    assert observe.failure is not None
    assert observe.failure.detail == "returned Continue, expected None"


@pytest.mark.parametrize("timeout", [0, -1, float("nan"), float("inf"), True, "2"])
def test_timeout_must_be_positive_seconds(timeout: Any) -> None:
    with pytest.raises(HookRegistrationError, match="timeout must be a positive number"):
        make_hook(lambda: None, "PreToolUse", timeout=timeout)
    assert make_hook(lambda: None, "PreToolUse", timeout=0.5).timeout == 0.5


async def test_sync_hook_with_timeout_runs_off_the_event_loop() -> None:
    loop_thread = threading.get_ident()
    threads: list[int] = []

    def where() -> None:
        threads.append(threading.get_ident())

    await make_hook(where, "StepStart").call(step=1)
    await make_hook(where, "StepStart", timeout=5).call(step=1)
    assert threads[0] == loop_thread
    assert threads[1] != loop_thread


async def test_call_sync_and_async_with_only_wanted_arguments() -> None:
    seen: list[Any] = []

    def sync(tool: str) -> Allow:
        seen.append(tool)
        return Allow()

    async def asynchronous(input: dict[str, Any]) -> None:
        seen.append(input)

    everything = {"tool": "Bash", "input": {"c": 1}, "tool_iterations": 1}
    assert await make_hook(sync, "PreToolUse").call(**everything) == Allow()
    assert await make_hook(asynchronous, "PreToolUse").call(**everything) is None
    assert seen == ["Bash", {"c": 1}]


def test_decorator_marks_and_returns_function() -> None:
    @hook("PreToolUse", match="Bash")
    @hook("PostToolUse")
    def both(tool: str) -> None:
        return None

    assert both("x") is None  # still a plain function
    events = [h.event for h in collect_hooks(both)]
    assert events == [HookEvent.POST_TOOL_USE, HookEvent.PRE_TOOL_USE]


def test_registry() -> None:
    reg = HookRegistry()

    @reg.hook("Stop")
    def on_stop(reason: str) -> None:
        return None

    reg.add(lambda step: None, "StepStart", name="lam")
    assert len(reg) == 2
    assert [h.name for h in reg.for_event("StepStart")] == ["lam"]
    assert collect_hooks([reg, reg.hooks[0]]) == list(reg.hooks)  # deduplicated
    with pytest.raises(HookRegistrationError, match="no event"):
        reg.add(lambda: None)


def _module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str) -> str:
    name = f"hooksmod_{uuid.uuid4().hex}"
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(body))
    monkeypatch.syspath_prepend(str(tmp_path))
    return name


def test_load_hooks_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    name = _module(
        tmp_path,
        monkeypatch,
        """
        from forgeflare.hooks import Block, HookRegistry, hook

        registry = HookRegistry()

        @hook("PreToolUse", match="Bash")
        def no_push(input):
            return Block("no pushes")

        @registry.hook("Stop")
        def keep_going(reason):
            return None
        """,
    )
    hooks = load_hooks_module(name)
    assert sorted(h.name.rsplit(".", 1)[1] for h in hooks) == ["keep_going", "no_push"]


def test_load_hooks_module_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(HookRegistrationError, match="'no_such_mod_xyz': cannot import"):
        load_hooks_module("no_such_mod_xyz")
    empty = _module(tmp_path, monkeypatch, "X = 1\n")
    with pytest.raises(HookRegistrationError, match="defines no hooks"):
        load_hooks_module(empty)
    broken = _module(tmp_path, monkeypatch, "raise RuntimeError('boom')\n")
    with pytest.raises(HookRegistrationError, match="RuntimeError: boom"):
        load_hooks_module(broken)
    bad = _module(
        tmp_path,
        monkeypatch,
        """
        from forgeflare.hooks import hook

        @hook("PreToolUse")
        def wrong(reason):
            return None
        """,
    )
    with pytest.raises(HookRegistrationError, match="unknown argument 'reason'") as info:
        load_hooks_module(bad)
    assert bad in str(info.value)


def _fake_distribution(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str) -> str:
    """A distribution on sys.path with an entry point in group forgeflare.hooks."""
    mod = f"fakehooks_{uuid.uuid4().hex}"
    (tmp_path / f"{mod}.py").write_text(
        textwrap.dedent(
            """
            # A published package written for the old API: it must keep working.
            from forgeflare.hooks import HookOutcome, HookRegistry

            registry = HookRegistry()

            @registry.hook("PostToolUse", match="Bash")
            def converged(result):
                if "0 failed" in result:
                    return HookOutcome("stop", reason="tests_pass")
                return None
            """
        )
    )
    info = tmp_path / f"{mod}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {mod}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[forgeflare.hooks]\nfake = {mod}:{target}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    return mod


def test_entry_point_hooks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mod = _fake_distribution(tmp_path, monkeypatch, "registry")
    hooks = [h for h in load_entry_point_hooks() if h.name.startswith(mod)]
    assert len(hooks) == 1
    assert isinstance(hooks[0], Hook)
    assert hooks[0].event is HookEvent.POST_TOOL_USE


def test_entry_point_that_cannot_load(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_distribution(tmp_path, monkeypatch, "missing_attribute")
    with pytest.raises(HookRegistrationError, match=r"entry point 'fake'.*cannot load"):
        load_entry_point_hooks()


def test_public_interface_is_exported() -> None:
    import forgeflare.hooks as hooks_pkg

    for name in hooks_pkg.__all__:
        assert hasattr(hooks_pkg, name), name
    for name in (
        "HookConfigError",
        "load_hooks_file",
        "build_pipeline",
        "load_hooks_module",
        "load_entry_point_hooks",
        "HookEvent",
        "Hook",
        "HookOutcome",
        "HookRegistry",
        "hook",
        "HookPipeline",
        "NoHooks",
    ):
        assert name in hooks_pkg.__all__, name
