"""``forgeflare fleet k8s``: the same fleet file as a Kubernetes Indexed Job.

Each loop is a batch job of hours with its own checkout, which is what a Job is for. One
Indexed Job runs every loop (one index per loop, ``parallelism`` from the fleet); each pod
clones the repository, runs ``forgeflare loop`` on the loop's branch and pushes the branch (never
forced). How a pod ends maps to what Kubernetes should do (:func:`pod_failure_policy`): bad
configuration and a loop that ended on one of its own limits fail the index without a retry,
crashes and error streaks are retried, pod disruptions (eviction, preemption) are ignored.
Secrets come from a Kubernetes Secret, never inline. Everything here is pure: it returns the
files' text; the CLI writes them.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping
from typing import Any

from forgeflare.fleet._config import FleetFile, FleetLoop

__all__ = [
    "RETRIED_EXIT_CODES",
    "containerfile",
    "is_git_url",
    "k8s_documents",
    "k8s_files",
    "pod_failure_policy",
    "pod_max_cost",
]

RETRIED_EXIT_CODES: tuple[int, ...] = (1, 12, 137)
"""Crashes (1), error streaks such as a long outage (12, finish ``error``), OOM kills (137)."""

_MARGIN_SECONDS = 900
_STOP_GRACE_SECONDS = 300
"""After a SIGTERM: time for the loop to end its iteration and for the push of its branch."""
_MOUNT = "/etc/forgeflare"


def containerfile(version: str) -> str:
    """The image a fleet pod runs: forgeflare ``version`` from PyPI (what this fleet file was
    written for), git, and Node with Claude Code only when asked."""
    return f"""\
# The image a fleet pod runs: Python, git, forgeflare {version} from PyPI; Node and Claude Code
# only with --build-arg WITH_CLAUDE=1. Runs as a non-root user.
# The pod is the boundary: no bubblewrap here (a pod can rarely create the namespaces it
# needs), so the agent's Bash commands run unconfined inside the pod, with what it can reach.
#   podman build -f Containerfile -t IMAGE .
FROM python:3.12-slim
ARG WITH_CLAUDE=0
RUN apt-get update \\
 && apt-get install -y --no-install-recommends git ca-certificates \\
 && if [ "$WITH_CLAUDE" = 1 ]; then \\
      apt-get install -y --no-install-recommends nodejs npm \\
      && npm install -g @anthropic-ai/claude-code@2.1.332; \\
    fi \\
 && rm -rf /var/lib/apt/lists/*
RUN pip install --no-cache-dir "forgeflare=={version}"
RUN useradd --create-home --uid 10001 loop
USER 10001
WORKDIR /home/loop
ENTRYPOINT ["/bin/sh"]
"""


RUN_LOOP = """\
#!/bin/sh
# One fleet loop in one pod: clone, work on the loop's branch, push it (never forced).
set -u
i="${JOB_COMPLETION_INDEX:?not an Indexed Job pod}"
. "@MOUNT@/loop-$i.env"
git config --global user.name "forgeflare fleet"
git config --global user.email "forgeflare@localhost"
if [ -n "${GIT_TOKEN:-}" ]; then
  # An https token from the Secret, given to git by a credential helper (never in a URL).
  git config --global credential.helper \
    '!f() { echo username=x-access-token; echo "password=$GIT_TOKEN"; }; f'
fi
git clone --quiet --branch "$BASE" "$REPO" repo || exit 2
cd repo
if git ls-remote --exit-code --heads origin "$BRANCH" >/dev/null 2>&1; then
  git fetch --quiet origin "$BRANCH" && git checkout --quiet -B "$BRANCH" FETCH_HEAD
else
  git checkout --quiet -b "$BRANCH"
fi
set -- --mode "$MODE" --max-iterations "$MAX_ITERATIONS" --max-runtime "$MAX_RUNTIME" \\
  --task-file "@MOUNT@/task-$i.md" --trust-project
# The loop's agent_command is its agent (a --backend flag would win over it).
if [ -n "$AGENT_COMMAND" ]; then
  set -- "$@" --agent-cmd "$AGENT_COMMAND"
elif [ -n "$BACKEND" ]; then
  set -- "$@" --backend "$BACKEND"
fi
[ -n "$MODEL" ] && set -- "$@" --model "$MODEL"
[ -n "$MAX_COST" ] && set -- "$@" --max-cost "$MAX_COST"
[ -n "$PLAN" ] && export FRESHER_PLAN_FILE="$PLAN"
# A stopped pod (activeDeadlineSeconds, an eviction) gets SIGTERM: pass it to the loop, which
# ends its iteration and finishes; then the branch is pushed all the same.
stopping=0
forgeflare loop "$@" &
loop=$!
trap 'stopping=1; kill -TERM "$loop" 2>/dev/null' TERM INT
wait "$loop"
code=$?
if [ "$stopping" = 1 ]; then
  wait "$loop"  # the first wait ended with the signal: this one with the loop
  code=$?
fi
trap - TERM INT
git push --quiet origin "$BRANCH" || echo "push of $BRANCH failed" >&2
exit "$code"
""".replace("@MOUNT@", _MOUNT)


def pod_failure_policy(finish_exit_codes: Mapping[str, int]) -> dict[str, Any]:
    """The Job's ``podFailurePolicy`` from forgeflare's finish-type exit codes.

    ``complete`` (0) succeeds; ``error`` and crashes are retried up to ``backoffLimitPerIndex``;
    every other finish type (a limit, a hook abort, a manual stop, the budget) and bad
    configuration (2) fail the index at once: running it again would do the same.
    """
    no_retry = sorted(
        {2}
        | {
            code
            for finish, code in finish_exit_codes.items()
            if code != 0 and code not in RETRIED_EXIT_CODES and finish not in ("complete", "error")
        }
    )
    return {
        "rules": [
            {
                "action": "Ignore",
                # status is required by the schemas of Kubernetes 1.30-1.34 (1.35 defaults it).
                "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}],
            },
            {
                "action": "FailIndex",
                "onExitCodes": {"containerName": "loop", "operator": "In", "values": no_retry},
            },
        ]
    }


def is_git_url(repo: str) -> bool:
    """A repository a pod can clone (not a path on this machine)."""
    return "://" in repo or repo.startswith("git@")


def pod_max_cost(fleet: FleetFile, loop: FleetLoop) -> float | None:
    """A pod's ``--max-cost``: its own, capped at the fleet's total (pods share no budget)."""
    caps = [c for c in (loop.max_cost, fleet.fleet.max_cost) if c is not None]
    return min(caps) if caps else None


def _env_file(fleet: FleetFile, loop: FleetLoop, repo: str) -> str:
    cost = pod_max_cost(fleet, loop)
    values = {
        "LOOP_NAME": loop.name,
        "REPO": repo,
        "BASE": loop.base,
        "BRANCH": fleet.branch(loop),
        "MODE": loop.mode,
        "MAX_ITERATIONS": str(loop.max_iterations),
        "MAX_RUNTIME": loop.max_runtime,
        "MAX_COST": "" if cost is None else f"{cost:g}",
        "BACKEND": loop.backend,
        "MODEL": loop.model,
        "PLAN": loop.plan,
        "AGENT_COMMAND": loop.agent_command,
    }
    return "".join(f"{k}={shlex.quote(v)}\n" for k, v in values.items())


def _dump(doc: Mapping[str, Any]) -> str:
    import yaml

    class _Plain(yaml.SafeDumper):
        """No anchors and aliases: a shared dict (the labels) is written out each time."""

        def ignore_aliases(self, data: Any) -> bool:
            return True

    return str(yaml.dump(dict(doc), Dumper=_Plain, sort_keys=False, allow_unicode=True, width=100))


def k8s_documents(
    fleet: FleetFile,
    finish_exit_codes: Mapping[str, int],
    repos: Mapping[str, str] | None = None,
) -> dict[str, dict[str, Any]]:
    """The Kubernetes objects (as dicts) by file name.

    ``repos`` maps a loop's name to the URL its pod clones (a local ``repo`` resolved to its
    remote by the caller); without an entry the loop's ``repo`` is used as it is.
    """
    repos = repos or {}
    name = f"forgeflare-{fleet.fleet.name}"
    labels = {"app.kubernetes.io/name": "forgeflare", "forgeflare/fleet": fleet.fleet.name}
    data = {"run-loop.sh": RUN_LOOP}
    for index, loop in enumerate(fleet.loop):
        data[f"loop-{index}.env"] = _env_file(fleet, loop, repos.get(loop.name, loop.repo))
        data[f"task-{index}.md"] = loop.prompt + "\n"
    configmap = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "labels": labels},
        "data": data,
    }
    deadline = int(max(loop.runtime_seconds for loop in fleet.loop)) + _MARGIN_SECONDS
    pod = {
        "metadata": {"labels": labels},
        "spec": {
            "restartPolicy": "Never",
            "activeDeadlineSeconds": deadline,
            "terminationGracePeriodSeconds": _STOP_GRACE_SECONDS,
            "securityContext": {
                "runAsNonRoot": True,
                "runAsUser": 10001,
                "fsGroup": 10001,
                "seccompProfile": {"type": "RuntimeDefault"},
            },
            "containers": [
                {
                    "name": "loop",
                    "image": fleet.fleet.image,
                    "command": ["/bin/sh", f"{_MOUNT}/run-loop.sh"],
                    "workingDir": "/work",
                    "envFrom": [{"secretRef": {"name": fleet.secret_name}}],
                    "env": [{"name": "HOME", "value": "/work"}],
                    "securityContext": {
                        "allowPrivilegeEscalation": False,
                        "capabilities": {"drop": ["ALL"]},
                    },
                    "resources": {
                        "requests": {"cpu": "1", "memory": "2Gi"},
                        "limits": {"memory": "4Gi"},
                    },
                    "volumeMounts": [
                        {"name": "fleet", "mountPath": _MOUNT, "readOnly": True},
                        {"name": "work", "mountPath": "/work"},
                    ],
                }
            ],
            "volumes": [
                {"name": "fleet", "configMap": {"name": name}},
                {"name": "work", "emptyDir": {}},
            ],
        },
    }
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "labels": labels},
        "spec": {
            "completionMode": "Indexed",
            "completions": len(fleet.loop),
            "parallelism": min(fleet.fleet.parallel, len(fleet.loop)),
            "backoffLimitPerIndex": 2,
            "maxFailedIndexes": len(fleet.loop),
            "podFailurePolicy": pod_failure_policy(finish_exit_codes),
            "ttlSecondsAfterFinished": 7 * 86400,
            "template": pod,
        },
    }
    return {"configmap.yaml": configmap, "job.yaml": job}


def k8s_files(
    fleet: FleetFile,
    finish_exit_codes: Mapping[str, int],
    repos: Mapping[str, str] | None = None,
    *,
    version: str,
) -> dict[str, str]:
    """Every file ``fleet k8s`` writes, by name: the manifests, the Containerfile, a README."""
    docs = k8s_documents(fleet, finish_exit_codes, repos)
    files = {fname: _dump(doc) for fname, doc in docs.items()}
    files["Containerfile"] = containerfile(version)
    loops = ", ".join(loop.name for loop in fleet.loop)
    budget = (
        f"\nThe fleet's `max_cost` (${fleet.fleet.max_cost:g}) caps each pod: the pods share no "
        "budget, so together they may spend more.\n"
        if fleet.fleet.max_cost
        else ""
    )
    files["README.md"] = (
        f"# Fleet `{fleet.fleet.name}` on Kubernetes\n\n"
        f"Loops (one Job index each, in this order): {loops}.\n"
        f"{budget}\n"
        "```sh\n"
        "podman build -f Containerfile -t IMAGE .\n"
        f"kubectl create secret generic {fleet.secret_name} \\\n"
        "  --from-literal=ANTHROPIC_API_KEY=... --from-literal=GIT_TOKEN=...\n"
        "kubectl apply -f configmap.yaml -f job.yaml\n"
        f"kubectl get pods -l forgeflare/fleet={fleet.fleet.name}\n"
        "```\n\n"
        "`GIT_TOKEN` is an https token that may push the loops' branches (git gets it from a "
        "credential helper in the pod). Each pod pushes its branch `forgeflare/<fleet>/<loop>`; "
        "a loop without `max_runtime` runs at most 4h. See docs/fleet-on-kubernetes.md in the "
        "forgeflare repository.\n"
        f"\n<!-- exit codes that fail an index at once: "
        f"{json.dumps(pod_failure_policy(finish_exit_codes)['rules'][1]['onExitCodes']['values'])}"
        " -->\n"
    )
    return files
