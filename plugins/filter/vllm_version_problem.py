# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: vllm_version_problem
short_description: Whether the runtime image's vLLM is older than the inventory requires (F24)
version_added: 0.3.0
author: inferops engineering (@inferops)
description:
  - Compares the vLLM version read from the runtime image with O(required) by release numbers
    (a pre-release or local build of a release counts as that release).
  - Returns the F24 message naming the host, the image, both versions and the fix, or an empty string.
options:
  _input:
    description: The vLLM version read from the image (empty when it could not be read).
    type: str
    required: true
  required:
    description: The lowest vLLM version the inventory accepts; empty asks nothing.
    type: str
    required: true
  host:
    description: The node, for the message.
    type: str
    required: true
  image:
    description: The image, for the message.
    type: str
    required: true
"""

EXAMPLES = r"""
- name: Refuse an image whose vLLM is too old for the model
  ansible.builtin.assert:
    that: _problem | length == 0
    fail_msg: "{{ _problem }}"
  vars:
    _problem: "{{ '0.10.1.1' | inferops.vllm_cluster.vllm_version_problem('0.17.0', inventory_hostname, 'nvcr.io/nvidia/vllm:25.09-py3') }}"
"""

RETURN = r"""
_value:
  description: The F24 message, or an empty string when the image's vLLM is new enough or nothing is required.
  type: str
"""

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._images import vllm_version_problem


class FilterModule:
    def filters(self):
        return {"vllm_version_problem": vllm_version_problem}
