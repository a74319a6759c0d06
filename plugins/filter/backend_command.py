# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: backend_command
short_description: How one node's vLLM starts under a backend, before the settings every backend shares
version_added: 0.4.0
author: inferops engineering (@inferops)
description:
  - The backend's entry point with the model, then what this node adds for the backend's launcher (under C(mp),
    C(--nnodes), C(--node-rank), C(--master-addr), C(--master-port) and C(--headless) but on rank 0; under C(ray),
    nothing). The vllm_server role appends the arguments every backend shares.
options:
  _input:
    description: The backend's name (C(vllm_cluster_backend)).
    type: str
    required: true
  model:
    description: C(vllm_server_model).
    type: str
    required: true
  node_rank:
    description: This node's rank (C(vllm_cluster_mp_ranks)).
    type: int
    required: true
  nodes:
    description: How many nodes take part.
    type: int
    required: true
  master_address:
    description: Where ranks meet, for a backend with a rendezvous.
    type: str
    required: true
  master_port:
    description: The rendezvous port.
    type: int
    required: true
"""

EXAMPLES = r"""
- name: Show rank 1's start under the mp backend
  ansible.builtin.debug:
    msg: "{{ 'mp' | inferops.vllm_cluster.backend_command('org/model', 1, 2, '192.168.200.12', 29501) }}"
"""

RETURN = r"""
_value:
  description: entry (the entry point with the model) and launcher_args (this node's launcher arguments).
  type: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.inferops.vllm_cluster.plugins.module_utils import _backends


def backend_command(name, model, node_rank, nodes, master_address, master_port):
    try:
        return {"entry": _backends.entry(str(name), model),
                "launcher_args": _backends.launcher_args(str(name), int(node_rank), int(nodes), str(master_address),
                                                         int(master_port))}
    except ValueError as error:
        raise AnsibleFilterError(str(error)) from error


class FilterModule:
    def filters(self):
        return {"backend_command": backend_command}
