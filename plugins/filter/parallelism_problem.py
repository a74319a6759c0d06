# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: parallelism_problem
short_description: Whether tensor x pipeline parallelism fits the inventory's GPUs (F9)
version_added: 0.3.0
author: inferops engineering (@inferops)
description:
  - Compares vLLM's world size (tensor x pipeline) with nodes x GPUs per node before anything starts.
options:
  _input:
    description: C(vllm_server_tensor_parallel_size).
    type: int
    required: true
  pp:
    description: C(vllm_server_pipeline_parallel_size).
    type: int
    required: true
  nodes:
    description: The number of nodes in the inventory.
    type: int
    required: true
  per_node:
    description: C(vllm_cluster_gpus_per_node).
    type: int
    required: true
"""

EXAMPLES = r"""
- name: Check the parallelism fits
  ansible.builtin.assert:
    that: _problem | length == 0
    fail_msg: "{{ _problem }}"
  vars:
    _problem: "{{ 4 | inferops.vllm_cluster.parallelism_problem(1, 2, 1) }}"
"""

RETURN = r"""
_value:
  description: The F9 sentence, or an empty string.
  type: str
"""

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._preflight import parallelism_problem


class FilterModule:
    def filters(self):
        return {"parallelism_problem": parallelism_problem}
