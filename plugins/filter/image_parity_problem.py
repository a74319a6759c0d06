# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: image_parity_problem
short_description: Whether the cluster's nodes run different runtime images or Ray versions (F10)
version_added: 0.4.0
author: inferops engineering (@inferops)
description:
  - Every node must run the same image ID and Ray version; a node whose Ray version is unrecorded compares by its
    image ID alone. Returns the F10 sentence listing every node, or an empty string.
options:
  _input:
    description: One row per node (host, image_id, ray_version), this run's and those outside it
      (P(inferops.vllm_cluster.outside_images#filter)).
    type: list
    elements: dict
    required: true
  image:
    description: The runtime image's name, for the message.
    type: str
    required: true
"""

EXAMPLES = r"""
- name: Check every node runs the same image
  ansible.builtin.assert:
    that: _problem | length == 0
    fail_msg: "{{ _problem }}"
  vars:
    _problem: "{{ rows | inferops.vllm_cluster.image_parity_problem(vllm_cluster_image) }}"
"""

RETURN = r"""
_value:
  description: The F10 sentence, empty where every node agrees.
  type: str
"""

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._images import image_parity_problem


class FilterModule:
    def filters(self):
        return {"image_parity_problem": image_parity_problem}
