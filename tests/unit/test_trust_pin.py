"""The trust pin: a change to a trusted file refuses the run, a touch does not."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from forgeflare.trust import (
    TrustItem,
    TrustPin,
    agent_trust_items,
)


def test_pin_refuses_a_change_and_not_a_touch(tmp_path: Path) -> None:
    hooks = tmp_path / ".forgeflare" / "hooks"
    hooks.mkdir(parents=True)
    (hooks / "guard.py").write_text("print('{}')\n")
    toml = tmp_path / ".forgeflare" / "hooks.toml"
    toml.write_text('[[hooks]]\nevent = "Stop"\ncommand = "python3 .forgeflare/hooks/guard.py"\n')
    items = agent_trust_items(tmp_path)
    pin = TrustPin(tmp_path, lambda: agent_trust_items(tmp_path), items, watch=[toml])
    assert pin.refusal() is None
    os.utime(hooks / "guard.py", ns=(1, 1))  # touched, same content
    assert pin.refusal() is None
    (hooks / "json.py").write_text("import os\n")  # a module beside a trusted Python hook
    refusal = pin.refusal()
    assert refusal is not None
    assert "changed: hooks.toml[0] Stop" in refusal
    assert "\n" not in refusal
    (hooks / "json.py").unlink()
    assert pin.refusal() is None
    toml.write_text(toml.read_text().replace("Stop", "PostToolUse"))
    assert "new: hooks.toml[0] PostToolUse" in (pin.refusal() or "")


def _counting(items: list[TrustItem]) -> tuple[list[int], Callable[[], list[TrustItem]]]:
    calls: list[int] = []

    def gather() -> list[TrustItem]:
        calls.append(1)
        return items

    return calls, gather


def test_gathers_again_only_when_a_watched_stat_changed(tmp_path: Path) -> None:
    (tmp_path / "hook.sh").write_text("echo 1\n")
    item = TrustItem("hook", "sh hook.sh", {"hook.sh": "1"})
    calls, gather = _counting([item])
    pin = TrustPin(tmp_path, gather, [item])
    assert pin.refusal() is None
    assert calls == []  # nothing changed: no gathering at all
    (tmp_path / "other.txt").write_text("x")  # the project folder changed
    assert pin.refusal() is None
    assert calls == [1]
    assert pin.refusal() is None  # the touch is remembered: cheap again
    assert calls == [1]


def test_a_gather_that_cannot_read_is_a_refusal(tmp_path: Path) -> None:
    watched = tmp_path / "hooks.toml"
    watched.write_text("a")

    def gather() -> list[TrustItem]:
        raise PermissionError("denied")

    pin = TrustPin(tmp_path, gather, [], watch=[watched])
    watched.write_text("bb")
    refusal = pin.refusal()
    assert refusal is not None
    assert refusal.startswith(f"{tmp_path.resolve()}: cannot check the project hooks' trust:")


def test_a_removed_trusted_file_is_seen(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "hook.sh").write_text("echo 1\n")
    item = TrustItem("hook", "sh sub/hook.sh", {"sub/hook.sh": "1"})
    gone = TrustItem("hook", "sh sub/hook.sh", {"sub/hook.sh": "missing"})
    calls, gather = _counting([gone])
    pin = TrustPin(tmp_path, gather, [item])
    (tmp_path / "sub" / "hook.sh").unlink()
    assert "changed: hook" in (pin.refusal() or "")
    assert calls == [1]
