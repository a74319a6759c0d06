# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: hca_link_problems
short_description: HCAs NCCL is told to use that carry no link, or none behind the interconnect interface (F23)
version_added: 0.6.0
author: inferops engineering (@inferops)
description:
  - Every port of every device C(NCCL_IB_HCA) names must be C(ACTIVE) (all four RoCE functions of a ConnectX-7 exist
    whether a cable is plugged or not).
  - At least one named device must be behind the interconnect interface, the one the interconnect CIDR chose.
  - Returns one F23 sentence per problem, naming the host, the device, what was found and the fix.
options:
  _input:
    description: The C(links) result of M(inferops.vllm_cluster.rdma_devices).
    type: dict
    required: true
  interface:
    description: The interconnect interface (C(vllm_cluster_interconnect_interface)); empty skips that check.
    type: str
    required: true
extends_documentation_fragment:
  - inferops.vllm_cluster.rdma
"""

EXAMPLES = r"""
- name: Check the HCAs NCCL is told to use carry the interconnect's link
  ansible.builtin.assert:
    that: _problems | length == 0
    fail_msg: "{{ _problems | join(' ') }}"
  vars:
    _problems: "{{ rdma.links | inferops.vllm_cluster.hca_link_problems('rocep1s0f1,roceP2p1s0f1', 'enp1s0f1np1', inventory_hostname) }}"
"""

RETURN = r"""
_value:
  description: One message per problem; empty when every named HCA has a link and one is the interconnect's.
  type: list
  elements: str
"""

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._rdma import link_problems


class FilterModule:
    def filters(self):
        return {"hca_link_problems": link_problems}
