"""The sandbox's pure parts: the bwrap argv, the socket list, the loop's decision."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from forgeflare._errors import ConfigError
from forgeflare.security import (
    GIT_DIR_ENV,
    SANDBOX_ENV,
    BoxSettings,
    SandboxPlan,
    bwrap_argv,
    choose_sandbox,
    host_sockets,
    landlock_abi,
    loop_sandbox,
    outermost,
    sandbox_env,
    sandbox_plan,
    scope_abstract_sockets,
)
from forgeflare.supervisor import load_config
from forgeflare.supervisor.backends import BACKENDS

P = Path("/w/project")


def _pairs(argv: list[str], flag: str) -> list[tuple[str, str]]:
    return [(argv[i + 1], argv[i + 2]) for i, a in enumerate(argv) if a == flag]


def test_every_sandbox_is_a_new_session_without_capabilities() -> None:
    argv = bwrap_argv(SandboxPlan(project=P), ["bash", "-c", "x"])
    for flag in ("--new-session", "--die-with-parent", "--unshare-pid", "--unshare-ipc"):
        assert flag in argv
    assert argv[argv.index("--cap-drop") + 1] == "ALL"
    assert ("/", "/") in _pairs(argv, "--ro-bind")
    assert argv[argv.index("--dev") + 1] == "/dev"
    assert argv[argv.index("--proc") + 1] == "/proc"
    assert argv[-5:] == ["/w/project", "--", "bash", "-c", "x"]
    assert "--unshare-net" not in argv  # network on unless asked


@pytest.mark.parametrize(
    ("plan", "present", "absent"),
    [
        (SandboxPlan(project=P, network=False), ["--unshare-net"], []),
        (SandboxPlan(project=P, tmpdir=True), ["--setenv"], []),
        (SandboxPlan(project=P), [], ["--setenv", "--unshare-net"]),
    ],
)
def test_flags(plan: SandboxPlan, present: list[str], absent: list[str]) -> None:
    argv = bwrap_argv(plan, ["true"])
    assert all(f in argv for f in present)
    assert not any(f in argv for f in absent)


def test_order_socket_dirs_emptied_then_binds_then_sockets_covered() -> None:
    plan = SandboxPlan(
        project=P,
        git_dir=Path("/w/repo/.git"),
        writable=(Path("/h/.cache"), Path("/h/.cache/pip"), Path("/w/project/build")),
        sockets=(Path("/run/docker.sock"),),
        hidden_dirs=(Path("/run"), Path("/x/runtime")),
        hidden_sockets=(Path("/h/.gnupg/S.gpg-agent"),),
        keep_files=(Path("/run/systemd/resolve/stub-resolv.conf"),),
    )
    argv = bwrap_argv(plan, ["true"])
    tmpfs = [argv[i + 1] for i, a in enumerate(argv) if a == "--tmpfs"]
    assert tmpfs == ["/tmp", "/run", "/x/runtime"]
    # Nested writable paths are not bound again: a command could swap them for a symlink.
    assert _pairs(argv, "--bind") == [
        ("/w/project", "/w/project"),
        ("/w/repo/.git", "/w/repo/.git"),
        ("/h/.cache", "/h/.cache"),
    ]
    ro = _pairs(argv, "--ro-bind")
    assert ("/dev/null", "/h/.gnupg/S.gpg-agent") in ro
    assert ("/run/docker.sock", "/run/docker.sock") in ro
    index = argv.index
    assert index("/x/runtime") < index("/run/systemd/resolve/stub-resolv.conf")
    assert index("/run/systemd/resolve/stub-resolv.conf") < index("--bind")
    assert index("--bind") < index("/run/docker.sock") < index("/h/.gnupg/S.gpg-agent")


@pytest.mark.parametrize(
    ("paths", "expected"),
    [
        (["/a", "/a/b", "/c"], ["/a", "/c"]),
        (["/a/b", "/a"], ["/a"]),
        (["/a", "/a"], ["/a"]),
        (["/ab", "/a"], ["/ab", "/a"]),
        ([], []),
    ],
)
def test_outermost(paths: list[str], expected: list[str]) -> None:
    assert outermost(map(Path, paths)) == tuple(map(Path, expected))


def test_host_sockets_reads_paths_not_abstract_or_unnamed() -> None:
    listed = (
        "Num       RefCount Protocol Flags    Type St Inode Path\n"
        "0000: 00000002 00000000 00010000 0001 01 1234 /run/dbus/system_bus_socket\n"
        "0000: 00000002 00000000 00010000 0001 01 1235 @/tmp/.X11-unix/X0\n"
        "0000: 00000003 00000000 00000000 0001 03  1522\n"
        "0000: 00000002 00000000 00010000 0001 01 1236 /home/u/my dir/sock\n"
    )
    assert host_sockets(listed) == [
        Path("/run/dbus/system_bus_socket"),
        Path("/home/u/my dir/sock"),
    ]


def _choose(setting: str, backend: str = "forgeflare", problem: str | None = None) -> str:
    box = BACKENDS[backend].box
    choice = choose_sandbox(
        setting, backend=backend, box=box, problem=problem, network=True, writable=[]
    )
    return f"{'on' if choice.on else 'off'}/{choice.level}: {choice.line}"


@pytest.mark.parametrize(
    ("setting", "backend", "problem", "starts"),
    [
        ("auto", "forgeflare", None, "on/info: sandbox: bubblewrap"),
        ("bwrap", "forgeflare", None, "on/info: sandbox: bubblewrap"),
        ("auto", "forgeflare", "bwrap missing", "off/warn: sandbox: none, Bash commands run"),
        ("off", "forgeflare", None, "off/warn: sandbox: off"),
        ("off", "forgeflare", "bwrap missing", "off/warn: sandbox: off"),
        ("auto", "claude", None, "off/info: sandbox: the claude backend runs its own"),
        ("bwrap", "codex", "bwrap missing", "off/info: sandbox: the codex backend runs its own"),
        ("auto", "command", None, "on/info: sandbox: a command agent runs as it is"),
        ("auto", "command", "bwrap missing", "off/info: sandbox: a command agent"),
    ],
)
def test_loop_choice(setting: str, backend: str, problem: str | None, starts: str) -> None:
    assert _choose(setting, backend, problem).startswith(starts)


def test_a_required_sandbox_that_cannot_run_is_refused() -> None:
    with pytest.raises(ConfigError, match='sandbox = "bwrap": no bwrap; refusing to start'):
        _choose("bwrap", problem="no bwrap")
    with pytest.raises(ConfigError):
        _choose("bwrap", backend="command", problem="no bwrap")


def test_sandbox_env_names_only_what_is_set() -> None:
    env = sandbox_env(network=False)
    assert env[SANDBOX_ENV] == "1"
    assert set(env) == {SANDBOX_ENV, "FORGEFLARE_SANDBOX_GIT_DIR"}
    env = sandbox_env(network=True, writable=[Path("/a"), Path("/b")], git_dir=Path("/r/.git"))
    assert env[SANDBOX_ENV] == "network"
    assert env["FORGEFLARE_SANDBOX_WRITABLE"] == "/a:/b"


def test_config_defaults_and_values(tmp_path: Path) -> None:
    security = load_config(tmp_path, env={}).config.security
    assert (security.sandbox, security.sandbox_network) == ("auto", True)
    assert (security.writable, security.sockets) == ([], [])
    env = {"FRESHER_SECURITY_SANDBOX": "off", "FRESHER_SECURITY_WRITABLE": "~/.m2, /opt/x"}
    security = load_config(tmp_path, env=env).config.security
    assert (security.sandbox, security.writable) == ("off", ["~/.m2", "/opt/x"])
    with pytest.raises(ConfigError, match="FRESHER_SECURITY_SANDBOX=yes") as info:
        load_config(tmp_path, env={"FRESHER_SECURITY_SANDBOX": "yes"})
    assert "\n" not in str(info.value)


def test_plan_binds_the_caches_that_exist_and_empties_the_runtime_dir(tmp_path: Path) -> None:
    home, runtime, project = tmp_path / "home", tmp_path / "runtime", tmp_path / "p"
    for path in (home / ".cache" / "pip", home / ".cargo" / "bin", runtime, project):
        path.mkdir(parents=True)
    env = {"HOME": str(home), "XDG_RUNTIME_DIR": str(runtime), "TMPDIR": "/elsewhere"}
    plan = sandbox_plan(project, network=True, env={**env, GIT_DIR_ENV: ""})
    # Only the named caches that exist, never all of ~/.cache; toolchains read-only.
    assert plan.writable == ((home / ".cache" / "pip").resolve(),)
    assert plan.readable == ((home / ".cargo" / "bin").resolve(),)
    assert plan.home == home.resolve()
    # Under /tmp the runtime dir is already private; elsewhere it would be emptied.
    shared = ("/run", "/var/run", "/var/tmp", "/srv", "/mnt", "/media")
    assert plan.hidden_dirs == tuple(Path(d) for d in shared if _real_dir(d))
    assert plan.tmpdir  # TMPDIR outside every writable place: /tmp inside


def _real_dir(path: str) -> bool:
    return Path(path).is_dir() and not Path(path).is_symlink()


def test_a_planted_git_file_does_not_widen_the_sandbox(tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    (project / ".git").write_text(f"gitdir: {tmp_path}\n")  # not a git directory
    assert sandbox_plan(project, network=True, env={"HOME": ""}).git_dir is None
    (project / ".git").write_text("gitdir: /\n")
    plan = sandbox_plan(project, network=True, env={"HOME": "", GIT_DIR_ENV: ""})
    assert plan.git_dir is None  # the loop's answer, found before anything ran, wins


@pytest.mark.parametrize(
    ("settings", "said"),
    [
        (BoxSettings(writable=("nope",)), r"\[security\] writable: 'nope' .* does not exist"),
        (BoxSettings(sockets=("~/s.sock",)), r"\[security\] sockets: '~/s.sock'"),
    ],
    ids=["writable", "sockets"],
)
async def test_a_named_path_that_does_not_exist_is_one_line(
    tmp_path: Path, settings: BoxSettings, said: str
) -> None:
    with pytest.raises(ConfigError, match=said):
        await loop_sandbox(
            tmp_path, settings, backend="forgeflare", box="bwrap", env={"HOME": str(tmp_path)}
        )


def test_landlock_is_a_no_op_off_linux(monkeypatch: pytest.MonkeyPatch) -> None:
    assert landlock_abi() >= 0
    monkeypatch.setattr(sys, "platform", "darwin")
    assert landlock_abi() == 0
    assert scope_abstract_sockets() is False
