# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: ray_non_carry_over
short_description: The variables vLLM's Ray executor must not copy from the driver into its ranks
version_added: 0.4.0
author: inferops engineering (@inferops)
description:
  - vLLM's Ray executor copies the driver's environment into every rank on every node, except the names of
    C($VLLM_CONFIG_ROOT/ray_non_carry_over_env_vars.json). This is that list, every variable the env file pins per
    node (the interconnect's address and interfaces, the RDMA devices), the secrets the collection knows
    (C(VLLM_API_KEY), the hub and Ray tokens), every name of C(vllm_cluster_extra_env) (each container has its own
    node's value) and every secret-named variable of C(vllm_server_env) (its other variables reach the ranks).
options:
  _input:
    description: The names the env file pins per node (the keys of C(vllm_cluster_interconnect_env)).
    type: list
    elements: str
    required: true
  node_env_names:
    description: The names of C(vllm_cluster_extra_env), which every container reads from its own node's env file.
    type: list
    elements: str
    default: []
  server_env_names:
    description: The names of C(vllm_server_env), which only the vLLM server's container holds.
    type: list
    elements: str
    default: []
"""

EXAMPLES = r"""
- name: Write the list vLLM reads
  ansible.builtin.copy:
    content: "{{ vllm_cluster_interconnect_env.keys() | list | inferops.vllm_cluster.ray_non_carry_over([], ['WANDB_API_KEY']) | to_json }}"
    dest: /etc/inferops-vllm-cluster/ray_non_carry_over_env_vars.json
    mode: "0600"
"""

RETURN = r"""
_value:
  description: The names, sorted.
  type: list
  elements: str
"""

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._rank_env import non_carry_over


class FilterModule:
    def filters(self):
        return {"ray_non_carry_over": non_carry_over}
