# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: firewall_problems
short_description: The firewall's settings that cannot work, every one at once
version_added: 0.4.0
author: inferops engineering (@inferops)
description:
  - One sentence, naming host, setting and fix, for each setting of the ray_firewall role that cannot work, checked in
    one task before anything changes. The table's name always (the rules are also removed by it); with the firewall on,
    the operator's sources that are no network, the boot unit on a host without systemd, the ports that are no ports
    (from C(firewall_admitted_ports)) and the confirmation's settings (as C(firewall_confirm_problems)).
options:
  _input:
    description: The inventory host the sentences name.
    type: str
    required: true
  settings:
    description:
      - C(table), C(enabled), C(allowed_cidrs), C(persist), C(service_mgr) (the host's fact), C(rules_file),
        C(admitted_problems), C(confirm_port) and C(confirm_timeout).
    type: dict
    required: true
"""

EXAMPLES = r"""
- name: Check the firewall's settings
  ansible.builtin.assert:
    that: problems | length == 0
    fail_msg: "{{ problems | join(' ') }}"
  vars:
    problems: >-
      {{ inventory_hostname | inferops.vllm_cluster.firewall_problems({'table': 'inferops_vllm_cluster_ray',
         'enabled': true, 'allowed_cidrs': ['198.51.100.0/24'], 'persist': false, 'confirm_port': 22,
         'confirm_timeout': 30}) }}
"""

RETURN = r"""
_value:
  description: One sentence per problem; empty when none.
  type: list
  elements: str
"""

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._firewall import settings_problems


class FilterModule:
    def filters(self):
        return {"firewall_problems": settings_problems}
