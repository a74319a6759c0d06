# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: inventory_problems
short_description: What is wrong with the inventory's interconnect network and groups, before anything runs
version_added: 0.4.0
author: inferops engineering (@inferops)
description:
  - The interconnect must be an IPv4 network in CIDR form (F5); the C(ray_head) group must hold exactly one host,
    never also in C(ray_workers); every host of C(vllm_cluster) must be in one of the two.
  - Returns one sentence per problem, each with its fix, or an empty list.
options:
  _input:
    description: C(vllm_cluster_interconnect_cidr), as the inventory sets it.
    type: raw
    required: true
  groups:
    description: The inventory's groups (Ansible's C(groups)).
    type: dict
    required: true
"""

EXAMPLES = r"""
- name: Check the inventory's shape
  ansible.builtin.assert:
    that: _problems | length == 0
    fail_msg: "{{ _problems | join(' ') }}"
  vars:
    _problems: "{{ vllm_cluster_interconnect_cidr | inferops.vllm_cluster.inventory_problems(groups) }}"
"""

RETURN = r"""
_value:
  description: The problems, empty where the inventory's shape is sound.
  type: list
  elements: str
"""

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._inventory import inventory_problems


class FilterModule:
    def filters(self):
        return {"inventory_problems": inventory_problems}
