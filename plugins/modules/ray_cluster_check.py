#!/usr/bin/python
# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
module: ray_cluster_check
short_description: Fail when a formed Ray cluster is not where vLLM needs it, before vLLM loads a model
version_added: 0.1.0
author: inferops engineering (@inferops)
description:
  - Asks Ray itself (C(ray.nodes())), inside the container where Ray runs or with a local C(ray), and waits
    (bounded) until the expected nodes are alive, one per address (a node restarted without a clean stop
    shows twice at its address until Ray declares the previous raylet dead).
  - Fails, with one message per problem naming the inventory host, the address, the interconnect and the fix,
    when an alive node registered an address outside O(interconnect_cidr) (head F1, worker F4; loopback and
    C(127.0.1.1) count as outside), when a node's C(node:<ip>) resource is not that host's C(VLLM_HOST_IP) (F2),
    when two alive nodes share an address (F8), when expected nodes or GPUs are missing (F14), when a node died
    and nothing replaced it (F15), and when tensor x pipeline parallelism exceeds the GPUs Ray sees (F9).
  - When the node table is sound, runs two dry-runs of what vLLM does next (O(dry_run)) and fails on them too. First,
    the placement group vLLM requests (one 1-GPU bundle per rank, bundle 0 pinned to C(node:<driver ip>)) is
    created, awaited and removed (F2). Second, every worker, through a Ray task carrying a 2 MB object, opens TCP
    to a listener on the driver's address at an ephemeral port, as torch c10d does (F3, F4).
  - When O(vllm_container) runs on this host, or ended on its own while the Ray head kept running, checks the vLLM
    server (F20). With the Ray executor (O(vllm_executor)), the ranks of vLLM's newest Ray driver are read from Ray's actor table. A rank
    that died is named at once (host, address, rank, pid, and Ray's cause); fewer alive ranks than tensor x pipeline are
    reported only after O(vllm_timeout). Then C(/health) must answer 200 and one short completion must return tokens,
    both within O(vllm_timeout). The address, port and model are read from the container's own command line. A vLLM
    container stopped on purpose (with Ray, or before it) is reported, not judged.
  - Changes nothing. The placement group and listener of the dry-runs are removed before it returns.
  - Bounded as a whole. What never heals by waiting (an address outside the interconnect, one address held by two
    machines) ends the wait for nodes at once. Each probe in the container has a deadline of its own waits plus
    60 s, so a Ray that accepts connections and never answers fails the call with a message. The call returns
    within O(timeout) + 2 x O(dry_run_timeout) + O(vllm_timeout) + a few minutes.
options:
  interconnect_cidr:
    description: The interconnect network every node must have registered in.
    type: str
    required: true
  expected_node_ips:
    description:
      - The inventory's view, inventory host name to interconnect address (its C(VLLM_HOST_IP)). Failures name
        these hosts; a missing address is reported as a missing host.
    type: dict
    default: {}
  expected_nodes:
    description: Alive nodes to wait for. Defaults to the number of O(expected_node_ips).
    type: int
  expected_gpus:
    description: Minimum GPUs Ray must see on alive nodes.
    type: int
  tensor_parallel_size:
    description: vLLM's tensor parallel size; with O(pipeline_parallel_size) the GPUs vLLM will need (F9).
    type: int
  pipeline_parallel_size:
    description: vLLM's pipeline parallel size.
    type: int
    default: 1
  container:
    description:
      - Name of the container where Ray runs (the Ray head's). The probe runs there through the docker CLI (C(docker exec)).
      - Empty runs the probe with O(python) on the host itself, which must be able to C(import ray).
    type: str
    default: ""
  python:
    description: Python interpreter that can import ray, inside O(container) or on the host.
    type: str
    default: python3
  docker_host:
    description: Docker daemon to reach when O(container) is set (the docker CLI's C(--host)).
    type: str
    default: unix:///var/run/docker.sock
  timeout:
    description: Seconds to wait for the expected nodes to be alive, one per address, before judging the table.
    type: int
    default: 60
  dry_run:
    description: Run the placement and rendezvous dry-runs when the node table is sound.
    type: bool
    default: true
  dry_run_timeout:
    description: Seconds each dry-run may take before it counts as failed.
    type: int
    default: 30
  driver_ip:
    description: Address vLLM's driver will use (the head's C(VLLM_HOST_IP)). Empty reads C(VLLM_HOST_IP) in the probe's environment.
    type: str
    default: ""
  vllm_container:
    description:
      - Name of the vLLM server container on this host. Empty (or a container that does not run) skips the vLLM checks.
    type: str
    default: ""
  vllm_executor:
    description:
      - vLLM's distributed executor. With C(ray) every rank is a Ray actor, and O(tensor_parallel_size) x
        O(pipeline_parallel_size) of them must be alive; vLLM's other executors keep no rank in Ray.
    type: str
    choices: [ray, mp, uni]
    default: ray
  vllm_api_key_file:
    description: File holding the API key vLLM requires (root-only on the node); read when it exists, never returned.
    type: path
    default: ""
  vllm_timeout:
    description: Seconds the vLLM checks may take in all (ranks appearing, /health, one completion).
    type: int
    default: 60
  unknown_nodes:
    description:
      - What to do with an alive node in the interconnect that is no host of O(expected_node_ips) (a decommissioned
        box still joined, F22). C(fail) names it, C(warn) only reports it. Its GPUs never count either way.
    type: str
    choices: [fail, warn]
    default: fail
attributes:
  check_mode:
    support: full
    description: Read-only; the dry-runs leave nothing behind, so they run in check mode too.
  diff_mode:
    support: none
    description: Nothing to diff; the module never changes anything.
requirements:
  - The docker CLI and coreutils' C(timeout) on the host when O(container) is set (not the Docker SDK for Python).
  - Ray in the container (or on the host when O(container) is empty).
notes:
  - Every failure message links the matching section of the collection's docs/troubleshooting.md.
seealso:
  - name: Troubleshooting guide
    description: Each check, the error users see without it, and the fix.
    link: https://github.com/inferops/vllm_cluster/blob/main/docs/troubleshooting.md
"""

EXAMPLES = r"""
- name: Check the cluster formed on the interconnect before starting vLLM
  inferops.vllm_cluster.ray_cluster_check:
    container: vllm-cluster-ray-head
    interconnect_cidr: 192.168.200.0/24
    expected_node_ips:
      spark-1: 192.168.200.12
      spark-2: 192.168.200.13
    tensor_parallel_size: 2
    timeout: 120

- name: Check a serving cluster too, every vLLM rank alive and one completion answered (F20)
  inferops.vllm_cluster.ray_cluster_check:
    container: vllm-cluster-ray-head
    interconnect_cidr: 192.168.200.0/24
    expected_node_ips:
      spark-1: 192.168.200.12
      spark-2: 192.168.200.13
    tensor_parallel_size: 2
    vllm_container: vllm-cluster-vllm
    vllm_api_key_file: /etc/inferops-vllm-cluster/vllm_api_key
    vllm_timeout: 120

- name: Only read the node table (no dry-runs), from a host with Ray installed
  inferops.vllm_cluster.ray_cluster_check:
    interconnect_cidr: 192.168.200.0/24
    expected_nodes: 2
    dry_run: false
  register: ray_view

- name: Show it
  ansible.builtin.debug:
    var: ray_view.table
"""

RETURN = r"""
nodes:
  description: Ray's node table, dead nodes included, each mapped to its inventory host where possible.
  returned: when Ray answered
  type: list
  elements: dict
  sample:
    - node_id: 6b1c3f0e2a9d4c55b1e3e4c0f6a2d9b8e1f0c3a7d5b2e9f1c4a6b8d0
      address: 192.168.200.12
      hostname: spark-1
      host: spark-1
      alive: true
      head: true
      gpus: 1
      resources: {"GPU": 1.0, "node:192.168.200.12": 1.0, "node:__internal_head__": 1.0}
table:
  description: The node table as readable lines, one per node.
  returned: when Ray answered
  type: list
  elements: str
  sample: ["spark-1      192.168.200.12   head   alive gpus=1 hostname=spark-1 id=6b1c3f0e2a9d"]
violations:
  description: Every problem found, in the order to fix them. Empty when the cluster is sound.
  returned: always
  type: list
  elements: dict
  sample:
    - check: F1
      host: spark-1
      address: 10.1.230.180
      message: "[F1] spark-1: the Ray head registered 10.1.230.180, outside the interconnect 192.168.200.0/24 ..."
unknown_nodes:
  description: Alive nodes in the interconnect that no host of O(expected_node_ips) accounts for (F22), as violations.
  returned: when Ray answered
  type: list
  elements: dict
  sample:
    - check: F22
      host: 192.168.200.14
      address: 192.168.200.14
      message: "[F22] 192.168.200.14: an alive Ray node that is not in the inventory (hostname spark-old, ...) ..."
dry_run:
  description: What the placement and rendezvous dry-runs found.
  returned: when the dry-runs ran
  type: dict
  sample:
    driver_ip: 192.168.200.12
    placement: {"status": "ok", "bundles": 2, "driver_ip": "192.168.200.12", "detail": "placed"}
    rendezvous:
      - {"node_id": "9d0e...", "address": "192.168.200.13", "driver_ip": "192.168.200.12", "port": 41877, "status": "ok", "bytes": 2097152}
vllm:
  description:
    - What the vLLM checks found; C(status) is C(not running) when O(vllm_container) does not run (nothing checked),
      C(ok) or C(failed) otherwise.
  returned: when O(vllm_container) is set and the node table is sound
  type: dict
  sample:
    status: ok
    url: http://10.1.230.180:8000
    model: qwen
    completion_tokens: 4
    waited: 0.3
    ranks:
      - {"name": "vllm_Worker_ab12_TP0", "state": "ALIVE", "address": "192.168.200.12", "pid": 411}
      - {"name": "vllm_Worker_ab12_TP1", "state": "ALIVE", "address": "192.168.200.13", "pid": 97}
    rank_table: ["TP0      spark-1      192.168.200.12   ALIVE    pid=411"]
waited:
  description: Seconds spent waiting for the expected nodes.
  returned: when Ray answered
  type: float
  sample: 0.4
"""

import atexit
import time

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._containers import ended_under
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._docker_cli import (
    ENGINE_ANSWER_TIMEOUT,
    DockerCli,
    DockerError,
    status,
)
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._network import parse_cidr
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._ray_checks import (
    check_dry_run,
    check_nodes,
    Violation,
    check_vllm_server,
    node_table,
    parse_nodes,
    rank_table,
    unknown_node_violations,
)
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._ray_probe import (
    PROBE_GRACE,
    ProbeError,
    container_session,
    run_locally,
    with_limit,
)
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._vllm_serving import (
    answer_message,
    check_container_answers,
)

PROBE_ERRORS = (ProbeError, DockerError)


def main() -> None:
    module = AnsibleModule(
        argument_spec=dict(
            interconnect_cidr=dict(type="str", required=True),
            expected_node_ips=dict(type="dict", default={}),
            expected_nodes=dict(type="int"),
            expected_gpus=dict(type="int"),
            tensor_parallel_size=dict(type="int"),
            pipeline_parallel_size=dict(type="int", default=1),
            container=dict(type="str", default=""),
            python=dict(type="str", default="python3"),
            docker_host=dict(type="str", default="unix:///var/run/docker.sock"),
            timeout=dict(type="int", default=60),
            dry_run=dict(type="bool", default=True),
            dry_run_timeout=dict(type="int", default=30),
            driver_ip=dict(type="str", default=""),
            vllm_container=dict(type="str", default=""),
            vllm_executor=dict(type="str", default="ray", choices=["ray", "mp", "uni"]),
            vllm_api_key_file=dict(type="path", default=""),
            vllm_timeout=dict(type="int", default=60),
            unknown_nodes=dict(type="str", default="fail", choices=["fail", "warn"]),
        ),
        supports_check_mode=True,
    )
    p = module.params
    try:
        parse_cidr(p["interconnect_cidr"])
    except ValueError as exc:
        module.fail_json(msg=f"interconnect_cidr: {exc}", violations=[])
    expected_ips = {str(k): str(v) for k, v in p["expected_node_ips"].items()}

    if p["vllm_container"] and not p["container"]:
        module.fail_json(msg="vllm_container needs container (the Ray head's): the vLLM checks read both through Docker",
                         violations=[])
    client = None
    if p["container"]:
        docker = module.get_bin_path("docker")
        if not docker:
            module.fail_json(msg="The docker CLI is not on this host's PATH: the checks run inside the Ray head's container "
                                 "through it (the Docker engine's package brings it).", violations=[])
        # every call is bounded; the longest is a probe's exec, with its own deadline inside
        longest = max(p["timeout"], 2 * p["dry_run_timeout"], p["vllm_timeout"]) + PROBE_GRACE + 30
        client = DockerCli(module.run_command, docker, p["docker_host"], longest)

        # one probe process answers the check's every step (table, dry-run, vLLM's ranks): Ray's import and
        # ray.init once. Ended when the module ends, however it ends. The session's first call (the head's
        # `docker inspect`, bounded as `docker version` would be) is what tells an engine that does not answer: no
        # call of its own for that (each docker CLI call inside a node costs 0.05-0.1 s on the lab).
        sessions = []

        def probe(params):
            if not sessions:
                try:
                    session = container_session(client, p["container"], p["python"], 3 * longest,
                                                inspect_timeout=min(longest, ENGINE_ANSWER_TIMEOUT))
                except DockerError as exc:
                    module.fail_json(msg=f"Could not reach the Docker daemon at {p['docker_host']}: {exc}",
                                     violations=[])
                sessions.append(session)
                atexit.register(sessions[0].close)
            return sessions[0].ask(params)
    else:
        def probe(params):
            return run_locally(module.run_command, p["python"], params)

    try:
        raw = probe(with_limit({
            "mode": "table",
            "timeout": p["timeout"],
            "wait_for_count": p["expected_nodes"] or len(expected_ips),
            "wait_for_ips": sorted(expected_ips.values()),
            "cidr": p["interconnect_cidr"],
        }, p["timeout"]))
    except PROBE_ERRORS as exc:
        module.fail_json(msg=f"Could not read Ray's node table: {exc}", violations=[])

    nodes = parse_nodes(raw["nodes"], expected_ips)
    result = {
        "changed": False,
        "nodes": [n.as_dict() for n in nodes],
        "table": node_table(nodes),
        "waited": raw.get("waited"),
    }
    violations = check_nodes(
        nodes,
        p["interconnect_cidr"],
        expected_ips,
        expected_nodes=p["expected_nodes"],
        expected_gpus=p["expected_gpus"],
        tensor_parallel_size=p["tensor_parallel_size"],
        pipeline_parallel_size=p["pipeline_parallel_size"],
        timeout=p["timeout"],
        unknown_nodes=p["unknown_nodes"],
    )
    result["unknown_nodes"] = [v.as_dict() for v in unknown_node_violations(nodes, p["interconnect_cidr"], expected_ips)]
    if p["unknown_nodes"] == "warn":
        for unknown in result["unknown_nodes"]:
            module.warn(unknown["message"])

    if not violations and p["dry_run"]:
        head = next((n for n in nodes if n.alive and n.head), None)
        world = (p["tensor_parallel_size"] or 0) * (p["pipeline_parallel_size"] or 1)
        try:
            dry = probe(with_limit({
                "mode": "dryrun",
                "timeout": p["dry_run_timeout"],
                "driver_ip": p["driver_ip"],
                "bundles": world,
            }, 2 * p["dry_run_timeout"]))
        except PROBE_ERRORS as exc:
            module.fail_json(msg=f"Could not run the dry-runs: {exc}", violations=[], **result)
        result["dry_run"] = dry
        violations = check_dry_run(dry, nodes, (head.host if head and head.host else "head"), p["dry_run_timeout"])

    if not violations and p["vllm_container"]:
        vllm, vllm_violations = check_vllm(module, p, client, probe, nodes)
        result["vllm"] = vllm
        violations = vllm_violations

    result["violations"] = [v.as_dict() for v in violations]
    if violations:
        module.fail_json(msg=" ".join(v.message for v in violations), **result)
    module.exit_json(**result)


def check_vllm(module, p, client, probe, nodes):
    """F20: every rank alive in Ray, then /health and one completion, all within vllm_timeout."""
    name = p["vllm_container"]
    head = next((n.host for n in nodes if n.alive and n.head and n.host), "head")
    try:
        server = client.inspect(name)
        if server is None:
            return {"status": "not running", "detail": f"no container {name}"}, []
        state = server.get("State") or {}
        running = status(server) == "running"
        # the head's own state only matters for a server that ended (did it end under a running head?)
        ray_head = None if running else client.inspect(p["container"])
    except DockerError as exc:
        module.fail_json(msg=f"Could not read container {name}: {exc}", violations=[])
    died_under_ray = ended_under(state, (ray_head or {}).get("State"))
    status_ = {"running": running, "died_under_ray": died_under_ray, "finished": (state.get("FinishedAt") or "")[:19],
               "exit_code": state.get("ExitCode")}
    if not running and not died_under_ray:
        return {"status": "not running", "detail": f"container {name} is {status(server)}"}, []
    deadline = time.monotonic() + p["vllm_timeout"]
    vllm = {"ranks": [], "rank_table": []}
    violations = []
    ray_ranks = (p["tensor_parallel_size"] or 1) * (p["pipeline_parallel_size"] or 1) if p["vllm_executor"] == "ray" else 0
    if ray_ranks or not running:
        while True:
            try:
                ranks = probe(with_limit({"mode": "table", "timeout": 0, "vllm_ranks": True}, 0)).get("vllm_ranks") or []
            except PROBE_ERRORS as exc:
                module.fail_json(msg=f"Could not read vLLM's ranks from Ray: {exc}", violations=[])
            violations = check_vllm_server(status_, ranks, nodes, ray_ranks, head, name, timeout=p["vllm_timeout"])
            # A dead rank never comes back by waiting; too few ranks may be a vLLM still starting.
            if not violations or any(v.host != "cluster" for v in violations) or time.monotonic() >= deadline:
                break
            time.sleep(2)
        vllm.update(ranks=ranks, rank_table=rank_table(ranks, nodes))
    if violations:
        return dict(vllm, status="failed"), violations
    outcome = check_container_answers(server.get("Args") or [], p["vllm_api_key_file"], max(1.0, deadline - time.monotonic()))
    vllm.update(outcome)
    if outcome["status"] != "ok":
        return vllm, [Violation("F20", head, outcome["url"], answer_message(head, name, outcome, p["vllm_timeout"]))]
    return vllm, []


if __name__ == "__main__":
    main()
