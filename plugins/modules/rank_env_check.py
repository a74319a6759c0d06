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

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._direct import ModuleError
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._rank_env import ARGUMENT_SPEC, run


def main() -> None:
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    try:
        module.exit_json(**run(module.params, module))
    except ModuleError as error:
        module.fail_json(msg=f"{error}", **error.extra)


if __name__ == "__main__":
    main()
