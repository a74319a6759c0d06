# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: weights_moves
short_description: What the workers' staging plans ask of the run (which copy, whether anything changes)
version_added: 0.4.0
author: inferops engineering (@inferops)
description:
  - From each worker's plan (M(inferops.vllm_cluster.model_fetch) with C(plan_only), its C(fetch) answer), the
    workers that lack files (the head's staging server serves them), and whether any worker needs a change at all
    (files, or its ref moved to the head's revision).
options:
  _input:
    description: Each worker's C(fetch) answer, by worker; null where a worker made no plan.
    type: dict
    required: true
"""

EXAMPLES = r"""
- name: Decide what moves
  ansible.builtin.set_fact:
    moves: "{{ {'spark-2': plan.fetch} | inferops.vllm_cluster.weights_moves }}"
"""

RETURN = r"""
_value:
  description: What moves.
  type: dict
  contains:
    copiers:
      description: The workers that lack files.
      type: list
      elements: str
    copying:
      description: Whether any worker lacks files.
      type: bool
    changing:
      description: Whether any worker needs a change (files or its ref).
      type: bool
"""

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._weights import moves


class FilterModule:
    def filters(self):
        return {"weights_moves": moves}
