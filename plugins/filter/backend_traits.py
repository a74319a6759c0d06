# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: backend_traits
short_description: What the roles read of a backend (vllm_cluster_backend), its executor resolved
version_added: 0.4.0
author: inferops engineering (@inferops)
description:
  - One row of the collection's backend table (C(plugins/module_utils/_backends.py)) as a dictionary, so that roles
    branch on what a backend does, never on its name.
  - The executor is C(vllm_cluster_executor) where set (one the backend runs, or an error naming those it does),
    else the deprecated C(vllm_server_distributed_executor_backend) where the backend runs it (with a deprecation
    warning), else the backend's default.
options:
  _input:
    description: The backend's name (C(vllm_cluster_backend)); an unknown one is an error naming the known ones.
    type: str
    required: true
  executor:
    description: C(vllm_cluster_executor); empty for the backend's default.
    type: str
    default: ""
  legacy_executor:
    description: The deprecated C(vllm_server_distributed_executor_backend); empty when not set.
    type: str
    default: ""
"""

EXAMPLES = r"""
- name: Start Ray only where the backend runs it
  ansible.builtin.debug:
    msg: "{{ ('ray' | inferops.vllm_cluster.backend_traits).runs_ray }}"
"""

RETURN = r"""
_value:
  description:
    - name, summary, runs_ray (Ray containers, token, image check, ports), ranks_on (C(head) or C(every_node)),
      entry (vLLM's entry point, C({model}) for the model), executor, ray_driver (vLLM joins the Ray head's
      processes), validate (C(before_serving) or C(after_serving)), rendezvous (a master every rank dials at the
      head), group_restart (one rank restarting restarts them all).
  type: dict
"""

from ansible.errors import AnsibleFilterError
from ansible.utils.display import Display

from ansible_collections.inferops.vllm_cluster.plugins.module_utils import _backends


def backend_traits(name, executor="", legacy_executor=""):
    try:
        found = _backends.traits(str(name), executor, legacy_executor)
    except ValueError as error:
        raise AnsibleFilterError(str(error)) from error
    if str(legacy_executor or "").strip():
        Display().deprecated(_backends.MESSAGES["DEPRECATED"], version="0.5.0",
                             collection_name="inferops.vllm_cluster")
    return found


class FilterModule:
    def filters(self):
        return {"backend_traits": backend_traits}
