"""The reviewer's diff, collected in the box: the git commands that show a reviewer the work
run where the gate runs (:mod:`forgeflare.security._gaterun`'s
:class:`~forgeflare.security._gaterun.GateBox`).

A diff reads the project's ``.git/config`` and ``.gitattributes``: a ``diff.external``, a
driver's ``textconv``, a ``filter.*`` command or ``core.fsmonitor`` the agent (or a copied
tree) planted would otherwise run on the host, with the user's files in reach. So the whole
collection is one ``bash`` script (one bubblewrap start, not one per file) that runs forgeflare's
safe git (:func:`forgeflare.security._git.git_argv`, :func:`forgeflare.security._git.git_env`)
inside the box whenever bubblewrap works and ``[security] sandbox`` is not ``"off"``, without a
secret and
without the network. What a plant could still do there stays in the box.

The script prints its parts separated by a random token (:func:`split_parts`, pure): the diff,
its ``--stat``, the diff's exit status, the new files (NUL-separated) and one ``--no-index``
diff per new file. Each part is cut at ``cap`` bytes inside the box, so a huge file never
fills memory.
"""

from __future__ import annotations

import functools
import secrets
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import trio

from forgeflare.platform import run_child
from forgeflare.security._gaterun import GateBox, gate_box
from forgeflare.security._git import filter_drivers, git_argv, git_env
from forgeflare.security._sandbox import BoxSettings, sandbox_argv

__all__ = [
    "DIFF_TIMEOUT",
    "EMPTY_TREE",
    "NEW_FILES_MAX",
    "CollectedDiff",
    "collect_diff",
    "collect_project_diff_blocking",
    "diff_argv",
    "split_parts",
]

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
"""git's empty tree: the base when a run started before the first commit."""
NEW_FILES_MAX = 50
"""New (untracked) files shown to the reviewer at most."""
DIFF_TIMEOUT = 120.0
"""Seconds the whole collection may take."""

# $1 separator, $2 base, $3 cap per part, $4 most new files, $5 words of the git command,
# then the git command, then the pathspec.
_SCRIPT = r"""
sep=$1 rev=$2 cap=$3 new=$4 n=$5
shift 5
git=("${@:1:$n}")
shift "$n"
"${git[@]}" diff --no-ext-diff --no-textconv "$rev" -- "$@" 2>/dev/null | head -c "$cap"
code=${PIPESTATUS[0]}
printf '%s' "$sep"
"${git[@]}" diff --no-ext-diff --no-textconv --stat "$rev" -- "$@" 2>/dev/null | head -c "$cap"
printf '%s%s%s' "$sep" "$code" "$sep"
case $code in 0 | 141) ;; *) exit 0 ;; esac
names=() i=0
while [ "$i" -lt "$new" ] && IFS= read -r -d '' name; do
  names+=("$name") i=$((i + 1))
done < <("${git[@]}" ls-files --others --exclude-standard -z -- "$@" 2>/dev/null)
for name in "${names[@]}"; do printf '%s\0' "$name"; done
for name in "${names[@]}"; do
  printf '%s' "$sep"
  "${git[@]}" diff --no-ext-diff --no-textconv --no-index -- /dev/null "$name" 2>/dev/null \
    | head -c "$cap"
done
exit 0
"""


@dataclass(frozen=True, slots=True)
class CollectedDiff:
    """What the reviewer is shown of the work: the diff and its ``--stat`` (both empty when
    there is no diff: not a repository, an unknown base, git or bubblewrap failed)."""

    diff: str = ""
    stat: str = ""


def diff_argv(
    base: str | None,
    *,
    sep: str,
    cap: int,
    new_files: int,
    pathspec: Sequence[str] = (),
    drivers: Sequence[str] = (),
) -> list[str]:
    """The command that collects the diff since ``base`` (pure): ``bash -c`` the script with
    forgeflare's safe git (``drivers``: the filter drivers to switch off)."""
    git = git_argv([], drivers)
    return [
        "bash",
        "-c",
        _SCRIPT,
        "forgeflare-diff",
        sep,
        base or EMPTY_TREE,
        str(cap),
        str(new_files),
        str(len(git)),
        *git,
        *pathspec,
    ]


def split_parts(out: bytes, sep: str, budget: int) -> CollectedDiff:
    """The diff and stat in the script's output (pure). New files' diffs are added while the
    diff is within ``budget`` bytes, and every new file is named under the stat."""
    parts = out.split(sep.encode())
    if len(parts) < 4 or parts[2].strip() not in (b"0", b"141"):  # 141: cut by head (SIGPIPE)
        return CollectedDiff()
    diff = bytearray(parts[0])
    stat = parts[1].decode(errors="replace")
    names = [n.decode(errors="replace") for n in parts[3].split(b"\0") if n]
    for one in parts[4:]:
        if len(diff) > budget:
            break
        diff += one
    if names:
        stat += "new files:\n" + "".join(f" {name}\n" for name in names)
    return CollectedDiff(bytes(diff).decode(errors="replace"), stat)


async def collect_diff(
    project: Path,
    base: str | None,
    *,
    box: GateBox,
    env: Mapping[str, str],
    budget: int,
    pathspec: Sequence[str] = (),
    new_files: int = 0,
    timeout: float = DIFF_TIMEOUT,
) -> CollectedDiff:
    """The work since ``base`` in ``project`` as the reviewer sees it, collected where ``box``
    says (in bubblewrap, or unconfined with the safe git only); never raises.

    ``budget`` is the most the reviewer is shown (each part is cut at four times it, at least
    1 MB); ``new_files`` how many untracked files to add (0: none).
    """
    clean = git_env(env)
    drivers = await trio.to_thread.run_sync(filter_drivers, project, clean)
    sep = f"\n--forgeflare-{secrets.token_hex(16)}--\n"
    cap = max(4 * budget, 1 << 20)
    command = diff_argv(
        base, sep=sep, cap=cap, new_files=new_files, pathspec=pathspec, drivers=drivers
    )
    if box.refused:
        return CollectedDiff()
    if box.env is not None:
        # No network: a diff needs none, and a plant must not reach anything through it.
        wrap = functools.partial(
            sandbox_argv, project, command, network=False, env={**clean, **box.env}
        )
        command = await trio.to_thread.run_sync(wrap)
    out = bytearray()
    try:
        done = await run_child(
            command,
            cwd=project,
            env=clean,
            stdin=None,
            on_output=out.extend,
            stderr=subprocess.DEVNULL,
            timeout=timeout,
        )
    except OSError:
        return CollectedDiff()
    if done.timed_out:
        return CollectedDiff()
    return split_parts(bytes(out), sep, budget)


def collect_project_diff_blocking(
    project: Path,
    base: str | None,
    *,
    env: Mapping[str, str],
    budget: int,
    settings: BoxSettings | None = None,
    pathspec: Sequence[str] = (),
    new_files: int = 0,
) -> CollectedDiff:
    """:func:`collect_diff` for synchronous code (the stop-hook), in the box the project's
    ``[security]`` ``settings`` give its gate (``None``: the defaults)."""

    async def run() -> CollectedDiff:
        box = await gate_box(project, settings or BoxSettings(), env)
        return await collect_diff(
            project,
            base,
            box=box,
            env=env,
            budget=budget,
            pathspec=pathspec,
            new_files=new_files,
        )

    return trio.run(run)
