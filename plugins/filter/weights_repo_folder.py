# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: weights_repo_folder
short_description: The hub cache folder of a model (models--ORG--NAME)
version_added: 0.4.0
author: inferops engineering (@inferops)
description:
  - The hub cache folder of a model (models--ORG--NAME).
options:
  _input:
    description: The model's hub id.
    type: raw
    required: true
"""

EXAMPLES = r"""
- name: Show it
  ansible.builtin.debug:
    msg: "{{ 'Qwen/Qwen3-0.6B' | inferops.vllm_cluster.weights_repo_folder }}"
"""

RETURN = r"""
_value:
  description: The hub cache folder of a model (models--ORG--NAME).
  type: str
"""

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._weights import repo_folder


class FilterModule:
    def filters(self):
        return {"weights_repo_folder": repo_folder}
