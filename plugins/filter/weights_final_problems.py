# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: weights_final_problems
short_description: What still differs on a worker after staging (files, revision), as F17 messages
version_added: 0.4.0
author: inferops engineering (@inferops)
description:
  - Files that still differ from the head's manifest, and a ref naming another revision than the head's.
options:
  _input:
    description: The fetch result of M(inferops.vllm_cluster.model_fetch).
    type: raw
    required: true
  host:
    description: The worker's inventory host.
    type: str
    required: true
  snapshot:
    description: The head's snapshot (M(inferops.vllm_cluster.model_snapshot)).
    type: dict
    required: true
  head:
    description: The head's inventory host.
    type: str
    required: true
"""

EXAMPLES = r"""
- name: Show it
  ansible.builtin.debug:
    msg: "{{ plan.fetch | inferops.vllm_cluster.weights_final_problems('spark-2', head.snapshot, 'spark-1') }}"
"""

RETURN = r"""
_value:
  description: The F17 messages; empty when the worker holds the head's snapshot.
  type: list
"""

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._weights import final_problems


class FilterModule:
    def filters(self):
        return {"weights_final_problems": final_problems}
