# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: firewall_confirm_message
short_description: What the play says when the controller could not reach a node after its firewall changed
version_added: 0.4.0
author: inferops engineering (@inferops)
description:
  - The firewall's rules are loaded with a guard that puts the previous rules back unless the controller opens a
    new connection to the node in time. This names the host, the address and port tried, the error, and whether
    the previous rules came back.
options:
  _input:
    description: The inventory host.
    type: str
    required: true
  address:
    description: The address the controller tried.
    type: str
    required: true
  port:
    description: The port the controller tried.
    type: raw
    required: true
  error:
    description: Why the connection failed.
    type: str
    required: true
  seconds:
    description: The guard's delay (C(ray_firewall_confirm_timeout)).
    type: raw
    required: true
  rolled_back:
    description: Whether the previous rules are in force again.
    type: bool
    required: true
  table:
    description: The firewall's nftables table.
    type: str
    required: true
  by_reconnection:
    description: Whether Ansible's reconnection failed (the controller's probe passed or did not run).
    type: bool
    default: false
"""

EXAMPLES = r"""
- name: Say the rules were rolled back
  ansible.builtin.fail:
    msg: "{{ inventory_hostname | inferops.vllm_cluster.firewall_confirm_message('198.18.0.180', 22, 'refused', 30, true, 'inferops_vllm_cluster_ray') }}"
"""

RETURN = r"""
_value:
  description: The sentence.
  type: str
"""

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._firewall import confirm_message


class FilterModule:
    def filters(self):
        return {"firewall_confirm_message": confirm_message}
