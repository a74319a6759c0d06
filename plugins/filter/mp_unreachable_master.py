# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: mp_unreachable_master
short_description: The F19 message for a node that cannot open TCP to vLLM's rendezvous
version_added: 0.3.0
author: inferops engineering (@inferops)
description:
  - Names the node, the master address and port, the head, the node's interconnect interface and address, and the fix.
options:
  _input:
    description: The node that could not connect.
    type: str
    required: true
  address:
    description: The master address.
    type: str
    required: true
  port:
    description: The master port.
    type: int
    required: true
  head:
    description: The head's inventory host (rank 0).
    type: str
    required: true
  interface:
    description: The node's interconnect interface.
    type: str
    required: true
  ip:
    description: The node's interconnect address.
    type: str
    required: true
  timeout:
    description: How long the node tried, in seconds.
    type: int
    required: true
  cidr:
    description: The interconnect CIDR.
    type: str
    required: true
"""

EXAMPLES = r"""
- name: Say why spark-2 cannot join
  ansible.builtin.debug:
    msg: "{{ 'spark-2' | inferops.vllm_cluster.mp_unreachable_master('192.168.200.12', 29501, 'spark-1', 'enp1s0f0np0',
          '192.168.200.13', 5, '192.168.200.0/24') }}"
"""

RETURN = r"""
_value:
  description: The F19 sentence.
  type: str
"""

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._mp_launcher import unreachable_master


class FilterModule:
    def filters(self):
        return {"mp_unreachable_master": unreachable_master}
