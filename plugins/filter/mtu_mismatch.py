# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: mtu_mismatch
short_description: Whether the interconnect MTU differs between the cluster's nodes (F12)
version_added: 0.3.0
author: inferops engineering (@inferops)
description:
  - Returns one F12 sentence listing every node's interface and MTU when they are not all equal; empty otherwise.
options:
  _input:
    description: One C([host, interface, mtu]) row per node of the cluster, in inventory order.
    type: list
    elements: list
    required: true
"""

EXAMPLES = r"""
- name: Compare the interconnect MTU
  ansible.builtin.debug:
    msg: "{{ [['spark-1', 'eth1', 1500], ['spark-2', 'eth1', 1400]] | inferops.vllm_cluster.mtu_mismatch }}"
"""

RETURN = r"""
_value:
  description: The F12 sentence, or an empty string.
  type: str
"""

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._preflight import mtu_mismatch


class FilterModule:
    def filters(self):
        return {"mtu_mismatch": mtu_mismatch}
