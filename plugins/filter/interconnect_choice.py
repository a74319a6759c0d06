# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: interconnect_choice
short_description: The interconnect address, interface and MTU every layer of a host is pinned to
version_added: 0.3.0
author: inferops engineering (@inferops)
description:
  - A configured address or interface (host_vars) is kept as given (preflight checks it against the facts).
  - Otherwise the address is the host's one address inside O(cidr) (empty when it has none or several; preflight
    names which), and the interface the one carrying it.
options:
  _input:
    description: The host's C(ansible_facts) (network subset).
    type: dict
    required: true
  cidr:
    description: C(vllm_cluster_interconnect_cidr).
    type: str
    required: true
  node_ip:
    description: The configured C(vllm_cluster_node_ip); empty derives it.
    type: str
    default: ""
  interface:
    description: The configured C(vllm_cluster_interconnect_interface); empty derives it.
    type: str
    default: ""
"""

EXAMPLES = r"""
- name: Derive the interconnect of a host
  ansible.builtin.set_fact:
    choice: "{{ ansible_facts | inferops.vllm_cluster.interconnect_choice('192.168.200.0/24') }}"
"""

RETURN = r"""
_value:
  description: C(ip), C(interface), C(mtu), C(configured) (whether the address came from the inventory) and
    C(candidates) (every address inside the CIDR, with interface and MTU).
  type: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._network import (
    interconnect_choice as _interconnect_choice,
)


def interconnect_choice(facts, cidr, node_ip="", interface=""):
    if not isinstance(facts, dict):
        raise AnsibleFilterError("interconnect_choice expects a host's ansible_facts (a dict)")
    try:
        return _interconnect_choice(facts, cidr, node_ip, interface)
    except ValueError as exc:
        raise AnsibleFilterError(f"interconnect_choice: {exc}") from None


class FilterModule:
    def filters(self):
        return {"interconnect_choice": interconnect_choice}
