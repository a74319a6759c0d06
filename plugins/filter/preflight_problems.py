# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: preflight_problems
short_description: Every problem preflight's table of checks finds in the inventory's wiring and settings
version_added: 0.4.0
author: inferops engineering (@inferops)
description:
  - Runs the checks registered in the collection's preflight table (C(module_utils/_preflight.py), C(CHECKS)) of one
    scope. Scope C(node) runs each node check on every given host (its interconnect address and interface, F5 and
    F7; its ports); scope C(cluster) runs each cluster check once over all of them (addresses shared between
    hosts, F8; MTU, F12, with C(mtu_mismatch=fail); the mp backend's master address, F19); scope C(warning)
    what is only printed (MTU, F12, with C(mtu_mismatch=warn)); scope C(serving), run by vllm_server's
    preflight, the model and tensor x pipeline parallelism against the GPUs, and under the mp backend their even
    split between the nodes (F9).
  - Returns one sentence per problem, each naming the host, what was found and the fix, a sentence tagged
    C([F<n>]) ending with the link to its section of the troubleshooting guide; empty when all is well.
options:
  _input:
    description: The inventory hosts to check.
    type: list
    elements: str
    required: true
  hostvars:
    description:
      - C(hostvars). Each host's C(ansible_facts), C(vllm_cluster_node_ip), C(vllm_cluster_interconnect_interface),
        C(vllm_cluster_node_ip_pinned), C(vllm_cluster_interconnect_mtu) and C(ansible_host) are read.
    type: dict
    required: true
  settings:
    description:
      - The settings the scope's checks read, C(guide) (the troubleshooting guide's URL) always; C(cidr), C(ports)
        (variable name to port), C(min_worker_port), C(max_worker_port), C(mtu_mismatch) for C(node), C(cluster)
        and C(warning); C(backend), C(head), C(mp_master_address), C(mp_master_check) for C(cluster) (F19 under
        the mp backend); C(model), C(tensor_parallel_size), C(pipeline_parallel_size), C(gpus_per_node),
        C(backend) for C(serving).
    type: dict
    required: true
  scope:
    description: Which checks to run.
    type: str
    choices: [node, cluster, warning, serving]
    required: true
"""

EXAMPLES = r"""
- name: Check this host's wiring and ports
  ansible.builtin.assert:
    that: _problems | length == 0
    fail_msg: "{{ _problems | join(' ') }}"
  vars:
    _problems: "{{ [inventory_hostname] | inferops.vllm_cluster.preflight_problems(hostvars, _preflight_settings, 'node') }}"
"""

RETURN = r"""
_value:
  description: One sentence per problem.
  type: list
  elements: str
"""

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._preflight import preflight_problems


class FilterModule:
    def filters(self):
        return {"preflight_problems": preflight_problems}
