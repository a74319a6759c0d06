# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: env_problems
short_description: What an extra environment dict asks that an env file cannot carry safely
version_added: 0.2.0
author: inferops engineering (@inferops)
description:
  - One sentence per entry whose name is not a variable name, is reserved by the collection's pinning, or whose
    value holds a line break (it would start a variable of its own). Values are never quoted.
options:
  _input:
    description: The extra environment (e.g. C(vllm_cluster_extra_env)).
    type: dict
    required: true
  reserved:
    description: Names the collection sets itself.
    type: list
    elements: str
    required: true
  variable:
    description: The inventory variable's name, for the sentences.
    type: str
    required: true
"""

EXAMPLES = r"""
- name: Refuse extra environment that would override the pinning
  ansible.builtin.assert:
    that: vllm_cluster_extra_env | inferops.vllm_cluster.env_problems(['VLLM_HOST_IP'], 'vllm_cluster_extra_env') | length == 0
"""

RETURN = r"""
_value:
  description: One sentence per problem; empty when none.
  type: list
  elements: str
"""

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._env import env_problems


class FilterModule:
    def filters(self):
        return {"env_problems": env_problems}
