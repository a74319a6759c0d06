# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: free_memory_problem
short_description: Whether a unified-memory node has the free memory vLLM will ask for (F18)
version_added: 0.3.0
author: inferops engineering (@inferops)
description:
  - On unified memory (GB10) the GPU's free memory is the host's C(MemFree); vLLM refuses to start below
    C(gpu_memory_utilization) x C(MemTotal). Page cache is not free to it.
  - Returns the F18 message with both figures, the page cache and the fixes, or an empty string.
options:
  _input:
    description: The node's C(/proc/meminfo).
    type: str
    required: true
  utilization:
    description: C(vllm_server_gpu_memory_utilization).
    type: float
    required: true
  host:
    description: The node, for the message.
    type: str
    required: true
"""

EXAMPLES = r"""
- name: Refuse to start vLLM without the memory it will ask for
  ansible.builtin.assert:
    that: _problem | length == 0
    fail_msg: "{{ _problem }}"
  vars:
    _problem: "{{ meminfo.content | b64decode | inferops.vllm_cluster.free_memory_problem(0.7, inventory_hostname) }}"
"""

RETURN = r"""
_value:
  description: The F18 message, or an empty string when the node has enough free memory.
  type: str
"""

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._memory import free_memory_problem


class FilterModule:
    def filters(self):
        return {"free_memory_problem": free_memory_problem}
