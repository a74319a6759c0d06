# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: hub_model_id
short_description: Whether a model is named by its hub id (ORG/NAME), so its weights can be staged
version_added: 0.4.0
author: inferops engineering (@inferops)
description:
  - Whether a model is named by its hub id (ORG/NAME), so its weights can be staged.
options:
  _input:
    description: The model (vllm_server_model).
    type: raw
    required: true
"""

EXAMPLES = r"""
- name: Show it
  ansible.builtin.debug:
    msg: "{{ vllm_server_model | inferops.vllm_cluster.hub_model_id }}"
"""

RETURN = r"""
_value:
  description: Whether a model is named by its hub id (ORG/NAME), so its weights can be staged.
  type: bool
"""

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._weights import is_hub_id


class FilterModule:
    def filters(self):
        return {"hub_model_id": is_hub_id}
