"""The fleet's HTML page, as Chromium builds it, after a real fleet: what landed, what did not,
and for each loop not landed what to run to land it.

The loops are real ``forgeflare loop`` processes whose agents are shell commands (what the own
agent's scripted turns would run): the page is about the fleet's records, not the agent."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from test_fleet import (
    commits_command,
    completing_agent,
    fleet_file,
    fleet_here,
    loop,
    make_repo,
    shell_agent,
    state,
)

from chromium_support import CHROMIUM, NO_CHROMIUM, dom_of
from supervisor_agents.project import base_env


def _items(dom: str, list_id: str) -> list[str]:
    """The text of each item of the list ``list_id`` (tags dropped, spaces kept)."""
    found = re.search(rf'<ul id="{list_id}">(.*?)</ul>', dom, re.S)
    assert found is not None, f"no list {list_id!r}"
    items = re.findall(r"<li>(.*?)</li>", found.group(1), re.S)
    return [re.sub(r"<[^>]+>", " ", item).replace("&amp;", "&") for item in items]


@pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)
def test_the_fleet_page_says_landed_and_not_landed(tmp_path: Path) -> None:
    make_repo(tmp_path, "lands", "gated", "unfinished")
    loops = [
        loop("lands", **completing_agent("lands", "lands.txt", "ok")),
        loop("gated", **completing_agent("gated", "gated.txt", "ok")),
        # work, but the plan stays open: the loop ends at its one iteration
        loop("unfinished", max_iterations=1, **shell_agent(commits_command("unfinished"))),
    ]
    path = fleet_file(
        tmp_path,
        "night",
        loops,
        gate="test ! -e gated.txt",  # the landing gate refuses only the loop "gated"
    )
    env = base_env()
    done = fleet_here("run", str(path), env=env)  # the loops are processes
    assert done.returncode == 1, done.stderr
    rec = state(path, "night")
    assert (rec["lands"]["status"], rec["gated"]["status"]) == ("landed", "gate_failed")
    assert rec["unfinished"]["finish_type"] == "max_iterations"
    page = tmp_path / "fleet.html"
    written = fleet_here("report", str(path), "--html", str(page), env=env)
    assert written.returncode == 0, written.stderr
    dom = dom_of(page, tmp_path / "profile")
    headings = re.findall(r"<h2[^>]*>(.*?)</h2>", dom)
    assert "Landed: 1 of 3 loop(s)" in headings
    assert "Not landed: 2" in headings
    (landed,) = _items(dom, "landed")
    assert landed.split()[:2] == ["lands", "forgeflare/night/lands"]
    gated, unfinished = _items(dom, "not-landed")
    assert gated.split()[:3] == ["gated", "forgeflare/night/gated", ":"]
    assert f"to land: forgeflare fleet land {path} gated" in " ".join(gated.split())
    worktree = rec["unfinished"]["worktree"]
    assert unfinished.split()[0] == "unfinished"
    assert (
        f"to land: forgeflare loop --dir {worktree} && forgeflare fleet land {path} unfinished"
        in " ".join(unfinished.split())
    )
    # each loop's own section says it too
    badges = re.findall(r'<h1 id="loop-([a-z]+)">.*?<span class="badge ([a-z-]+)">', dom, re.S)
    assert badges == [("lands", "landed"), ("gated", "not-landed"), ("unfinished", "not-landed")]
