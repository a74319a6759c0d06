# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""How ray_cluster_check asks Ray itself: a small program (_ray_probe_program.py) run by the Python that has Ray.

Ray lives in the node's container, so the probe runs there (docker exec) and prints one JSON
line; with no container it runs with the local interpreter. Private to the collection.
"""

from __future__ import annotations

import inspect
import json
import typing as t

from ansible_collections.inferops.vllm_cluster.plugins.module_utils import _ray_probe_program

RESULT_MARKER = "RAY_CLUSTER_CHECK_RESULT="

# The program itself is a Python file of its own (linted, and unit-tested as it runs); its source is what runs
# there, under `python -c`.
PROBE_SOURCE = inspect.getsource(_ray_probe_program)


class ProbeError(Exception):
    """The probe could not run or did not answer; the message says where and why."""


# Seconds the probe may take beyond its own waits: Python and Ray's import, ray.init, the reply.
PROBE_GRACE = 60
# How the probe's end by SIGALRM (its deadline) reads: docker exec's 128 + 14, or run_command's -14.
_DEADLINE_CODES = (142, -14)


def with_limit(params: t.Mapping[str, t.Any], waits: int) -> dict[str, t.Any]:
    """The probe's parameters with its deadline: its own waits (seconds) plus PROBE_GRACE."""
    return dict(params, limit=max(0, int(waits)) + PROBE_GRACE)


def parse_output(stdout: str, stderr: str, rc: int, where: str, limit: int = 0) -> dict[str, t.Any]:
    for line in reversed(stdout.splitlines()):
        if line.startswith(RESULT_MARKER):
            return json.loads(line[len(RESULT_MARKER):])
    if rc in _DEADLINE_CODES and limit:
        raise ProbeError(
            f"the Ray probe in {where} did not finish within its deadline of {limit} s: Ray's GCS accepted the "
            "connection but did not answer (a stopped or overloaded gcs_server). Fix: read `docker logs` of the Ray "
            "head's container; restart it with site.yml --tags ray_head -e vllm_cluster_restart=true"
        )
    tail = " | ".join((stderr or stdout).strip().splitlines()[-8:])
    raise ProbeError(f"the Ray probe in {where} exited {rc} without a result: {tail or 'no output'}")


def probe_args(params: t.Mapping[str, t.Any]) -> list[str]:
    return ["-c", PROBE_SOURCE, json.dumps(dict(params, marker=RESULT_MARKER))]


def run_in_container(client: t.Any, container: str, python: str, params: t.Mapping[str, t.Any]) -> dict[str, t.Any]:
    """Run the probe inside a running container through the docker CLI (a _docker_cli.DockerCli)."""
    from ansible_collections.inferops.vllm_cluster.plugins.module_utils._docker_cli import status

    state = status(client.inspect(container))
    if state == "absent":
        raise ProbeError(
            f"container {container!r} does not exist on this host; is the Ray head deployed (site.yml --tags ray_head)?"
        )
    if state != "running":
        raise ProbeError(
            f"container {container!r} is {state}, not running; see `docker logs {container}` and re-run site.yml --tags ray_head"
        )
    rc, out, err = client.exec(container, [python] + probe_args(params))
    return parse_output(out or "", err or "", rc, f"container {container}", params.get("limit", 0))


def run_locally(run_command: t.Callable[..., t.Any], python: str, params: t.Mapping[str, t.Any]) -> dict[str, t.Any]:
    """Run the probe with a local interpreter that can import ray."""
    rc, out, err = run_command([python] + probe_args(params))
    return parse_output(out, err, rc, f"local {python}", params.get("limit", 0))
