# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: mp_rank_problems
short_description: The vLLM ranks that do not run, under vLLM's own multi-node launcher (F20)
version_added: 0.3.0
author: inferops engineering (@inferops)
description:
  - Every rank's container must run; a dead headless rank leaves rank 0 answering C(/health) while completions fail.
  - Nothing is reported when no rank's container exists (not started yet).
options:
  _input:
    description: Inventory host -> its vLLM container as M(community.docker.docker_container_info) returns it (null when absent).
    type: dict
    required: true
  ranks:
    description: Inventory host -> node rank (C(vllm_cluster_mp_ranks)).
    type: dict
    required: true
  name:
    description: The vLLM container's name.
    type: str
    required: true
"""

EXAMPLES = r"""
- name: Fail on a dead rank
  ansible.builtin.assert:
    that: problems | length == 0
  vars:
    problems: "{{ containers | inferops.vllm_cluster.mp_rank_problems(vllm_cluster_mp_ranks, 'vllm-cluster-vllm') }}"
"""

RETURN = r"""
_value:
  description: One F20 sentence per rank whose container does not run.
  type: list
  elements: str
"""

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._mp_launcher import rank_problems


class FilterModule:
    def filters(self):
        return {"mp_rank_problems": rank_problems}
