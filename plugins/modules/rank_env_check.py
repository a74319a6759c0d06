#!/usr/bin/python
# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
module: rank_env_check
short_description: Whether vLLM's ranks on a node run with the node's own pinning, and what the driver would carry (F7)
version_added: 0.4.0
author: inferops engineering (@inferops)
description:
  - Reads the environment of every vLLM rank process that Ray placed in O(container) (C(ray::RayWorker*)) and compares
    the pinned variables with this node's own (O(expected)). A rank holding the collection's secrets fails too.
  - With O(driver_container) (the vLLM server on the head, the Ray driver), also reads which of O(guarded) its
    processes hold and the non-carry-over list vLLM reads there (O(non_carry_over_file)). vLLM's Ray executor copies
    every such variable the list does not name into every rank on every node, inside the rank's process, where
    C(/proc) no longer shows it.
  - Secret values are never read out of the containers, only their names.
  - Changes nothing. Containers that do not run are skipped (no ranks to read).
options:
  container:
    description: This node's Ray container, where vLLM's ranks run as Ray actors.
    type: str
    required: true
  expected:
    description: The pinned variables and this node's values (the env file's interconnect pinning).
    type: dict
    required: true
  driver_container:
    description: The vLLM server's container on this node when it is the head; empty elsewhere.
    type: str
    default: ""
  guarded:
    description: The names vLLM must not carry from the driver into the ranks (the collection's list).
    type: list
    elements: str
    default: []
  non_carry_over_file:
    description: The list's path inside O(driver_container).
    type: str
    default: /root/.config/vllm/ray_non_carry_over_env_vars.json
  host:
    description: The inventory host the messages name (the node's own name when empty).
    type: str
    default: ""
  docker_host:
    description: The Docker engine to ask.
    type: str
    default: unix:///var/run/docker.sock
notes:
  - Needs C(python3) inside the containers (every image that runs Ray or vLLM has it).
extends_documentation_fragment:
  - inferops.vllm_cluster.read_only
"""

EXAMPLES = r"""
- name: Check the ranks on this node keep its pinning
  inferops.vllm_cluster.rank_env_check:
    container: vllm-cluster-ray-worker
    expected:
      NCCL_SOCKET_IFNAME: "=ic0"
      GLOO_SOCKET_IFNAME: ic0
"""

RETURN = r"""
ranks:
  description: Each rank process read, by pid, with its command line and its pinned variables.
  returned: always
  type: dict
  sample: {"175": {"cmdline": "ray::RayWorkerProc.run", "env": {"GLOO_SOCKET_IFNAME": "ic0"}}}
carried:
  description: The guarded names the driver holds that the list does not name (empty without O(driver_container)).
  returned: always
  type: list
  elements: str
"""

import json
import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._docker_cli import DockerCli, DockerError, status
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._rank_env import (
    MESSAGES,
    NON_CARRY_OVER_FILE,
    READ_PROCESSES,
    carried_names,
    carried_problems,
    parse_names,
    rank_problems,
    rank_processes,
)
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._secrets import SECRET_NAME_PATTERN


def read_processes(client: DockerCli, container: str, names: list[str]) -> dict | None:
    """READ_PROCESSES' answer from inside container; None when the container does not run (or stopped meanwhile).
    Asked straight away: the container's state is read only where the answer fails (a serving node's check is one
    docker CLI call a container, not two)."""
    rc, out, err = client.exec(container, ["python3", "-c", READ_PROCESSES, json.dumps(sorted(names)), SECRET_NAME_PATTERN])
    if rc != 0:
        if status(client.inspect(container)) != "running":
            return None
        # stderr only: stdout would hold the command lines of every process the reader saw
        raise DockerError(f"reading the processes of {container} failed ({rc}): {err.strip()[-300:]}")
    return json.loads(out)


def read_list(client: DockerCli, container: str, path: str) -> set[str]:
    """The names of the non-carry-over list as vLLM in container reads them; none when the file is absent."""
    rc, out, err = client.exec(container, ["cat", path])
    if rc == 0:
        return parse_names(out)
    # cat's own words for the list's path, not the docker CLI's for a socket that is gone (Docker 28 ends those in
    # "connect: no such file or directory" too)
    if f"{path}: no such file or directory".lower() in err.lower():
        return set()
    raise DockerError(f"reading {path} in {container} failed ({rc}): {err.strip()[-300:]}")


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "container": {"type": "str", "required": True},
            "expected": {"type": "dict", "required": True},
            "driver_container": {"type": "str", "default": ""},
            "guarded": {"type": "list", "elements": "str", "default": []},
            "non_carry_over_file": {"type": "str", "default": f"/root/.config/vllm/{NON_CARRY_OVER_FILE}"},
            "host": {"type": "str", "default": ""},
            "docker_host": {"type": "str", "default": "unix:///var/run/docker.sock"},
        },
        supports_check_mode=True,
    )
    p = module.params
    host = p["host"] or os.uname().nodename
    client = DockerCli(module.run_command, module.get_bin_path("docker", required=True), p["docker_host"], 60)
    problems, ranks, carried = [], {}, []
    try:
        processes = read_processes(client, p["container"], list(p["expected"]))
        if processes is not None:
            ranks = {pid: {"cmdline": info["cmdline"], "env": info["env"]}
                     for pid, info in rank_processes(processes).items()}
            problems += rank_problems(host, p["container"], processes, p["expected"])
        if p["driver_container"]:
            driver = read_processes(client, p["driver_container"], p["guarded"])
            if driver is not None:
                excluded = read_list(client, p["driver_container"], p["non_carry_over_file"])
                carried = carried_names(driver, p["guarded"], excluded)
                problems += carried_problems(host, p["driver_container"], carried, p["non_carry_over_file"])
    except (DockerError, ValueError) as exc:
        module.fail_json(msg=f"{host}: could not read what vLLM's ranks run with: {exc}", ranks=ranks, carried=[])
    if problems:
        module.fail_json(msg=" ".join(problems + [MESSAGES["fix"].format(list=p["non_carry_over_file"])]),
                         ranks=ranks, carried=carried)
    module.exit_json(changed=False, ranks=ranks, carried=carried)


if __name__ == "__main__":
    main()
