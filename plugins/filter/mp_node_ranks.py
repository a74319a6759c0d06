# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: mp_node_ranks
short_description: Each host's node rank under vLLM's own multi-node launcher
version_added: 0.3.0
author: inferops engineering (@inferops)
description:
  - With C(vllm_cluster_backend=mp), the Ray head's host is rank 0 (it serves the API) and the workers follow in
    inventory order.
options:
  _input:
    description: The head's inventory host.
    type: str
    required: true
  workers:
    description: The workers' inventory hosts, in inventory order.
    type: list
    elements: str
    required: true
"""

EXAMPLES = r"""
- name: Show the ranks
  ansible.builtin.debug:
    msg: "{{ groups['ray_head'][0] | inferops.vllm_cluster.mp_node_ranks(groups['ray_workers']) }}"
"""

RETURN = r"""
_value:
  description: Inventory host -> node rank.
  type: dict
"""

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._mp_launcher import node_ranks


class FilterModule:
    def filters(self):
        return {"mp_node_ranks": node_ranks}
