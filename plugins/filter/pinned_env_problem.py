# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: pinned_env_problem
short_description: Whether a container runs without the interconnect pinning its env file gives it (F7, F17)
version_added: 0.4.0
author: inferops engineering (@inferops)
description:
  - From M(inferops.vllm_cluster.node_state)'s C(pinned_env) answer for one container (whether it exists, the pinned
    variables it holds with another value), the F7 sentence naming the node, the container, each variable as it
    runs and as pinned, and the fix; with staged weights (offline), the F17 risk too.
  - An empty string where the container holds every pin or does not exist.
options:
  _input:
    description: node_state's C(pinned_env) entry for the container (C(exists), C(drift)).
    type: dict
    required: true
  host:
    description: The node.
    type: str
    required: true
  container:
    description: The container's name.
    type: str
    required: true
  interface:
    description: The node's interconnect interface.
    type: str
    required: true
  node_ip:
    description: The node's interconnect address.
    type: str
    required: true
  offline:
    description: Whether the weights are staged (the containers are pinned offline too).
    type: bool
    required: true
"""

EXAMPLES = r"""
- name: Check the container runs with the interconnect pinning
  ansible.builtin.assert:
    that: _problem | length == 0
    fail_msg: "{{ _problem }}"
  vars:
    _problem: >-
      {{ read.pinned_env['vllm-cluster-ray-head'] | inferops.vllm_cluster.pinned_env_problem(inventory_hostname,
         'vllm-cluster-ray-head', 'eth1', '198.18.1.12', false) }}
"""

RETURN = r"""
_value:
  description: The F7 sentence, empty where nothing drifted.
  type: str
"""

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._env import pinned_env_problem


class FilterModule:
    def filters(self):
        return {"pinned_env_problem": pinned_env_problem}
