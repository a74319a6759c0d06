# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: mp_launcher_args
short_description: The arguments one node adds to C(vllm serve) under vLLM's own multi-node launcher
version_added: 0.3.0
author: inferops engineering (@inferops)
description:
  - C(--nnodes), C(--node-rank), C(--master-addr) and C(--master-port); C(--headless) for every rank but 0, which
    serves the API.
options:
  _input:
    description: This node's rank.
    type: int
    required: true
  nodes:
    description: How many nodes take part.
    type: int
    required: true
  master_address:
    description: Where the ranks meet (the head's interconnect address).
    type: str
    required: true
  master_port:
    description: The rendezvous port on the master.
    type: int
    required: true
"""

EXAMPLES = r"""
- name: Show rank 1's arguments
  ansible.builtin.debug:
    msg: "{{ 1 | inferops.vllm_cluster.mp_launcher_args(2, '192.168.200.12', 29501) }}"
"""

RETURN = r"""
_value:
  description: The arguments, in order.
  type: list
  elements: str
"""

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._mp_launcher import launcher_args


class FilterModule:
    def filters(self):
        return {"mp_launcher_args": launcher_args}
