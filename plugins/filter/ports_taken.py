# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: ports_taken
short_description: The ports a node is about to listen on that something already listens on
version_added: 0.2.0
author: inferops engineering (@inferops)
description:
  - Reads the output of C(ss -Hltn) and returns C(name=port) for every wanted port already listened on.
options:
  _input:
    description: The output of C(ss -Hltn) on the node.
    type: str
    required: true
  wanted:
    description: The ports to check, by the variable that sets each.
    type: dict
    required: true
"""

EXAMPLES = r"""
- name: Ports taken before Ray starts
  ansible.builtin.debug:
    msg: "{{ ss.stdout | inferops.vllm_cluster.ports_taken({'vllm_cluster_ray_port': 6379}) }}"
"""

RETURN = r"""
_value:
  description: One C(name=port) per wanted port in use, lowest port first; empty when none.
  type: list
  elements: str
"""

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._network import ports_taken


class FilterModule:
    def filters(self):
        return {"ports_taken": ports_taken}
