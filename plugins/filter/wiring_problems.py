# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: wiring_problems
short_description: What is wrong with one host's interconnect address and interface (F5, F7)
version_added: 0.3.0
author: inferops engineering (@inferops)
description:
  - Checks, from the host's gathered facts, that the interconnect CIDR does not cover its management address, that
    the host holds exactly one address inside it (or the configured one, inside the CIDR and assigned), and that
    the interconnect interface exists and carries that address.
  - Returns one sentence per problem, each naming the host, what was found and the fix; empty when the wiring is right.
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
    description: The host's interconnect address, derived or configured.
    type: str
    required: true
  interface:
    description: The host's interconnect interface, derived or configured.
    type: str
    required: true
  configured:
    description: Whether the inventory set C(vllm_cluster_node_ip) (then it is checked rather than derived).
    type: bool
    required: true
  ansible_host:
    description: The address Ansible reaches the host at (a management address when it is an IP).
    type: str
    required: true
  host:
    description: The inventory host, for the messages.
    type: str
    required: true
"""

EXAMPLES = r"""
- name: Check this host's interconnect wiring
  ansible.builtin.assert:
    that: _problems | length == 0
    fail_msg: "{{ _problems | join(' ') }}"
  vars:
    _problems: >-
      {{ ansible_facts | inferops.vllm_cluster.wiring_problems(vllm_cluster_interconnect_cidr, vllm_cluster_node_ip,
         vllm_cluster_interconnect_interface, false, ansible_host, inventory_hostname) }}
"""

RETURN = r"""
_value:
  description: One F5 or F7 sentence per problem.
  type: list
  elements: str
"""

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._preflight import wiring_problems


class FilterModule:
    def filters(self):
        return {"wiring_problems": wiring_problems}
