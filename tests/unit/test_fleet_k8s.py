"""The Kubernetes manifests a fleet file becomes (``forgeflare fleet k8s``)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

from cli_inprocess import run_cli
from fleet_support import FLEET
from forgeflare import __version__
from forgeflare.fleet import k8s_documents, parse_fleet_text, pod_failure_policy
from forgeflare.supervisor.evidence import FINISH_EXIT_CODES, FinishType

CODES = {str(k): v for k, v in FINISH_EXIT_CODES.items()}


def test_exit_code_mapping_follows_the_finish_table() -> None:
    rules = pod_failure_policy(CODES)["rules"]
    assert rules[0] == {
        "action": "Ignore",
        "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}],
    }
    fail_now = set(rules[1]["onExitCodes"]["values"])
    assert 2 in fail_now  # bad configuration
    assert FINISH_EXIT_CODES[FinishType.HOOK_ABORT] in fail_now
    assert FINISH_EXIT_CODES[FinishType.COMPLETE] not in fail_now
    assert FINISH_EXIT_CODES[FinishType.ERROR] not in fail_now  # retried (outages, crashes)
    assert 1 not in fail_now
    for finish, code in FINISH_EXIT_CODES.items():
        if finish not in (FinishType.COMPLETE, FinishType.ERROR):
            assert code in fail_now, finish


@pytest.mark.parametrize("minor", [30, 31, 32, 33, 34, "latest"])
def test_manifests_pass_the_schemas_of_every_supported_kubernetes(minor: int | str) -> None:
    kv = pytest.importorskip("kubernetes_validate", reason="kubernetes-validate is a dev extra")
    fleet = parse_fleet_text(FLEET, Path("FLEET.toml"))
    version = kv.latest_version() if minor == "latest" else f"1.{minor}.0"
    for doc in k8s_documents(fleet, CODES).values():
        kv.validate(doc, version, strict=True)


def test_manifests_pass_the_kubernetes_schemas() -> None:
    fleet = parse_fleet_text(FLEET, Path("FLEET.toml"))
    docs = k8s_documents(fleet, CODES)
    job = docs["job.yaml"]["spec"]
    assert job["completionMode"] == "Indexed"
    assert (job["completions"], job["parallelism"]) == (2, 2)
    assert job["template"]["spec"]["activeDeadlineSeconds"] == 7200 + 900
    container = job["template"]["spec"]["containers"][0]
    assert container["envFrom"] == [{"secretRef": {"name": "forgeflare-night"}}]
    assert not any("API_KEY" in str(env) for env in container.get("env", []))
    assert "BRANCH=forgeflare/night/docs" in docs["configmap.yaml"]["data"]["loop-1.env"]


def k8s(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``forgeflare fleet k8s ARGS`` in ``tmp_path``, in the test process."""
    return run_cli(["fleet", "k8s", *args], cwd=tmp_path)


def test_cli_writes_and_lists_the_files(tmp_path: Path) -> None:
    for args in (
        ["init", "-q"],
        ["remote", "add", "origin", "https://u:secret@example.invalid/r.git"],
    ):
        subprocess.run(["git", *args], cwd=tmp_path, check=True)
    (tmp_path / "FLEET.toml").write_text(FLEET)
    done = k8s(tmp_path, "FLEET.toml", "--out", "out")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    # repo = "." (the default, as in the README) is cloned in the pod from its remote
    assert lines[0] == "loop docs: repo '.' is cloned in the pod from https://example.invalid/r.git"
    assert sorted(lines[1:5]) == sorted(
        f"wrote out/{n}" for n in ("configmap.yaml", "job.yaml", "Containerfile", "README.md")
    )
    assert lines[5].startswith("note: the pod is the boundary: no bubblewrap in it")
    assert lines[6] == (
        "note: [fleet] max_cost $50 caps each pod; the budget across pods is not enforced on "
        "Kubernetes"
    )
    out = tmp_path / "out"
    job = yaml.safe_load((out / "job.yaml").read_text())
    assert job["kind"] == "Job"
    configmap = yaml.safe_load((out / "configmap.yaml").read_text())
    docs = configmap["data"]["loop-1.env"]
    assert "REPO=https://example.invalid/r.git" in docs
    assert "MAX_COST=50" in docs  # the fleet's total caps a loop without its own
    assert "MAX_COST=50" in configmap["data"]["loop-0.env"]
    assert "secret" not in (out / "configmap.yaml").read_text()
    for name in ("job.yaml", "configmap.yaml"):
        assert "&id" not in (out / name).read_text()  # no YAML anchors
    containerfile = (out / "Containerfile").read_text()
    assert f'pip install --no-cache-dir "forgeflare=={__version__}"' in containerfile
    assert "COPY" not in containerfile
    readme = (out / "README.md").read_text()
    assert "GIT_ASKPASS" not in readme
    assert "GIT_TOKEN" in readme
    assert "4h" in readme
    bad = k8s(tmp_path, "missing.toml")
    assert bad.returncode == 2
    assert "missing.toml: no such fleet file" in bad.stderr


def test_a_local_repo_without_a_remote_is_refused(tmp_path: Path) -> None:
    (tmp_path / "FLEET.toml").write_text(FLEET)
    done = k8s(tmp_path, "FLEET.toml", "--out", "out")
    assert done.returncode == 2
    assert done.stderr == (
        "forgeflare: error: loop docs: repo '.' is a path on this machine, which a pod cannot "
        "clone, and it has no remote with a URL: give --clone-url URL or set repo to a git "
        "URL\n"
    )
    assert not (tmp_path / "out").exists()
    url = "https://example.invalid/other.git"
    done = k8s(tmp_path, "FLEET.toml", "--out", "out", "--clone-url", url)
    assert done.returncode == 0, done.stderr
    env = yaml.safe_load((tmp_path / "out" / "configmap.yaml").read_text())["data"]["loop-1.env"]
    assert f"REPO={url}" in env
