# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: interconnect_candidates
short_description: A host's addresses inside the interconnect CIDR, with interface and MTU
version_added: 0.1.0
author: inferops engineering (@inferops)
description:
  - Walks a host's gathered facts (every interface, primary and secondary IPv4 addresses) and
    returns those inside O(cidr). Loopback addresses never count.
  - The roles use it to derive C(vllm_cluster_node_ip) and C(vllm_cluster_interconnect_interface),
    and preflight uses it to fail when a host holds no or several interconnect addresses.
options:
  _input:
    description: The host's C(ansible_facts), gathered with at least the C(network) subset.
    type: dict
    required: true
  cidr:
    description: The interconnect network, for example C(192.168.200.0/24).
    type: str
    required: true
"""

EXAMPLES = r"""
- name: Derive this host's interconnect address
  ansible.builtin.set_fact:
    _candidates: "{{ ansible_facts | inferops.vllm_cluster.interconnect_candidates('192.168.200.0/24') }}"
"""

RETURN = r"""
_value:
  description: One entry per address inside the CIDR.
  type: list
  elements: dict
  contains:
    interface:
      description: Kernel name of the interface holding the address.
      type: str
      sample: enp1s0f1np1
    address:
      description: The IPv4 address.
      type: str
      sample: 192.168.200.12
    prefix:
      description: Prefix length of the address on that interface.
      type: str
      sample: "24"
    mtu:
      description: The interface's MTU.
      type: int
      sample: 9000
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._network import (
    interconnect_candidates as _interconnect_candidates,
)


def interconnect_candidates(facts, cidr):
    if not isinstance(facts, dict):
        raise AnsibleFilterError("interconnect_candidates expects a host's ansible_facts (a dict)")
    try:
        return _interconnect_candidates(facts, cidr)
    except ValueError as exc:
        raise AnsibleFilterError(f"interconnect_candidates: {exc}") from None


class FilterModule:
    def filters(self):
        return {"interconnect_candidates": interconnect_candidates}
