# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: firewall_admitted_ports
short_description: The TCP ports the cluster's firewall admits from outside the interconnect
version_added: 0.4.0
author: inferops engineering (@inferops)
description:
  - Everything of the cluster listens on TCP, on every interface or on ports picked at random, and Linux answers
    for the interconnect address on the management port too. The firewall therefore admits from outside the
    interconnect only new connections to these ports (and from the operator's networks).
  - Returns the ports and one sentence per value that is no TCP port.
options:
  _input:
    description: The inventory host the sentences name.
    type: str
    required: true
  ports:
    description: Named ports (variable name -> port); an empty value leaves the port out.
    type: dict
    required: true
  extra:
    description: The operator's own ports (C(ray_firewall_management_ports)).
    type: list
    default: []
"""

EXAMPLES = r"""
- name: The ports admitted on the head
  ansible.builtin.debug:
    msg: "{{ inventory_hostname | inferops.vllm_cluster.firewall_admitted_ports({'ray_firewall_ssh_port': 22, 'vllm_server_port': 8000}, [9100]) }}"
"""

RETURN = r"""
_value:
  description: C(ports), sorted, and C(problems), one sentence per value that is no port.
  type: dict
"""

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._firewall import admitted_ports


class FilterModule:
    def filters(self):
        return {"firewall_admitted_ports": admitted_ports}
