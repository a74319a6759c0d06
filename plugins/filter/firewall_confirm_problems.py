# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: firewall_confirm_problems
short_description: The firewall confirmation's settings that cannot work
version_added: 0.4.0
author: inferops engineering (@inferops)
description:
  - New firewall rules are put back unless the controller confirms them within C(ray_firewall_confirm_timeout). One
    sentence for a probe port that is no TCP port (0 turns the probe off) and one for a delay under 10 seconds.
options:
  _input:
    description: The inventory host the sentences name.
    type: str
    required: true
  port:
    description: C(ray_firewall_confirm_port).
    type: raw
    required: true
  seconds:
    description: C(ray_firewall_confirm_timeout).
    type: raw
    required: true
"""

EXAMPLES = r"""
- name: Refuse a confirmation that cannot work
  ansible.builtin.assert:
    that: problems | length == 0
    fail_msg: "{{ problems | join(' ') }}"
  vars:
    problems: "{{ inventory_hostname | inferops.vllm_cluster.firewall_confirm_problems(22, 30) }}"
"""

RETURN = r"""
_value:
  description: One sentence per problem; empty when none.
  type: list
  elements: str
"""

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._firewall import confirm_problems


class FilterModule:
    def filters(self):
        return {"firewall_confirm_problems": confirm_problems}
