# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: port_problems
short_description: Ports that are no TCP port, given twice, or inside Ray's worker range
version_added: 0.3.0
author: inferops engineering (@inferops)
description:
  - Checks every port the cluster listens on (variable name -> value) at once, so that every wrong one is named.
  - A value that is not a TCP port (1-65535) is reported first (nothing else is checked then); then a worker
    range whose low end is not below its high end; then each port given twice (once per port) and each single
    port inside the workers' range.
options:
  _input:
    description: Variable name -> port, including C(vllm_cluster_ray_min_worker_port) and C(vllm_cluster_ray_max_worker_port).
    type: dict
    required: true
  min_worker:
    description: The low end of Ray's worker port range.
    type: int
    required: true
  max_worker:
    description: The high end of Ray's worker port range.
    type: int
    required: true
"""

EXAMPLES = r"""
- name: Check the ports
  ansible.builtin.assert:
    that: _problems | length == 0
    fail_msg: "{{ _problems | join(' ') }}"
  vars:
    _problems: "{{ {'vllm_server_port': 8000, 'vllm_cluster_ray_port': 8000} | inferops.vllm_cluster.port_problems(10002, 19999) }}"
"""

RETURN = r"""
_value:
  description: One sentence per wrong port.
  type: list
  elements: str
"""

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._preflight import port_problems


class FilterModule:
    def filters(self):
        return {"port_problems": port_problems}
