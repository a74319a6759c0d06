# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: image_problems
short_description: What docker_runtime refuses of the runtime image on one node (F29, F11, F24)
version_added: 0.4.0
author: inferops engineering (@inferops)
description:
  - Each problem is a sentence naming the node, the image, the fix and the guide's section.
  - In the order they are judged, the image's name re-pointed since the last run that passed (F29, the sentence of
    P(inferops.vllm_cluster.image_repointed#filter), passed in); Ray not importable where the backend runs Ray
    (F11); vLLM older than the inventory requires (F24, P(inferops.vllm_cluster.vllm_version_problem#filter)).
options:
  _input:
    description: P(inferops.vllm_cluster.runtime_image#filter)'s answer for the node.
    type: dict
    required: true
  image:
    description: The runtime image's name.
    type: str
    required: true
  needs_ray:
    description: Whether the backend runs Ray (its C(runs_ray) trait).
    type: bool
    required: true
  min_version:
    description: The lowest vLLM version the inventory accepts (C(vllm_cluster_vllm_min_version)); empty asks nothing.
    type: str
    required: true
  repointed:
    description: F29's sentence, empty where the image's name still means the image last run.
    type: str
    default: ""
"""

EXAMPLES = r"""
- name: Check the image
  ansible.builtin.assert:
    that: _problems | length == 0
    fail_msg: "{{ _problems | join(' ') }}"
  vars:
    _problems: "{{ found | inferops.vllm_cluster.image_problems(vllm_cluster_image, true, '0.17.0') }}"
"""

RETURN = r"""
_value:
  description: The problems, empty where the image may run.
  type: list
  elements: str
"""

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._images import image_problems


class FilterModule:
    def filters(self):
        return {"image_problems": image_problems}
