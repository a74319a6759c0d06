# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: weights_report
short_description: One line on a worker's weights staging (its plan, or what it received)
version_added: 0.4.0
author: inferops engineering (@inferops)
description:
  - One line on a worker's weights staging (its plan, or what it received).
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
  url:
    description: The staging server the copy came from; empty reports the plan.
    type: str
    default: ""
"""

EXAMPLES = r"""
- name: Show it
  ansible.builtin.debug:
    msg: "{{ plan.fetch | inferops.vllm_cluster.weights_report('spark-2', head.snapshot) }}"
"""

RETURN = r"""
_value:
  description: One line on a worker's weights staging (its plan, or what it received).
  type: str
"""

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._weights import report


class FilterModule:
    def filters(self):
        return {"weights_report": report}
