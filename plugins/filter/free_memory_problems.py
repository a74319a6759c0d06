# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: free_memory_problems
short_description: Which unified-memory nodes lack the free memory vLLM will ask for (F18)
version_added: 0.3.0
author: inferops engineering (@inferops)
description:
  - On unified memory (GB10) the GPU's free memory is the host's C(MemFree); vLLM refuses to start below
    C(gpu_memory_utilization) x C(MemTotal). Page cache is not free to it.
  - Returns one F18 message per node short of it, with both figures, the page cache and the fixes.
options:
  _input:
    description: The C(results) of M(ansible.builtin.slurp) of C(/proc/meminfo) delegated to each node (item = host).
    type: list
    elements: dict
    required: true
  utilization:
    description: C(vllm_server_gpu_memory_utilization).
    type: float
    required: true
"""

EXAMPLES = r"""
- name: Refuse to start vLLM without the memory it will ask for
  ansible.builtin.assert:
    that: _problems | length == 0
    fail_msg: "{{ _problems | join(' ') }}"
  vars:
    _problems: "{{ meminfo_reads.results | inferops.vllm_cluster.free_memory_problems(0.7) }}"
"""

RETURN = r"""
_value:
  description: One F18 message per node short of memory; empty when every node has enough.
  type: list
  elements: str
"""

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._memory import free_memory_problems


class FilterModule:
    def filters(self):
        return {"free_memory_problems": free_memory_problems}
