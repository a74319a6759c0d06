# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: ray_token_plan
short_description: Which Ray token a run places on the nodes, never replacing the cluster's by accident (F21)
version_added: 0.2.0
author: inferops engineering (@inferops)
description:
  - The head's token file is the truth. A controller without a token takes the head's (C(adopt)); one with the
    same token keeps it (C(keep)); one with another token is refused (C(refuse), with the F21 message) unless
    rotation is asked for (C(rotate)); a cluster without a token gets a new one (C(create)).
options:
  _input:
    description: The controller's token (C(vllm_cluster_ray_auth_token), else its token file's content); empty when none.
    type: str
    required: true
  head_token:
    description: The content of the head's token file; empty when it has none.
    type: str
    required: true
  from_inventory:
    description: Whether the controller's token came from C(vllm_cluster_ray_auth_token) (then no file is written).
    type: bool
    required: true
  rotate:
    description: Replace the cluster's token (C(vllm_cluster_ray_auth_rotate)).
    type: bool
    required: true
  head:
    description: The head's inventory name, for the message.
    type: str
    required: true
  head_file:
    description: The token file's path on the nodes, for the message.
    type: str
    required: true
  controller_file:
    description: The token file's path on the controller, for the message.
    type: str
    required: true
"""

EXAMPLES = r"""
- name: Decide the cluster's Ray token
  ansible.builtin.set_fact:
    token_plan: >-
      {{ controller_token | inferops.vllm_cluster.ray_token_plan(head_token, from_inventory=false, rotate=false,
         head='spark-1', head_file='/etc/inferops-vllm-cluster/ray_auth_token',
         controller_file='inventories/sparks/credentials/ray_auth_token') }}
  no_log: true
"""

RETURN = r"""
_value:
  description: action (keep, adopt, create, rotate, refuse), token, write_controller_file (bool), message (for refuse).
  type: dict
"""

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._ray_token import token_plan


def ray_token_plan(controller_token, head_token, from_inventory, rotate, head, head_file, controller_file):
    return token_plan(controller_token, head_token, from_inventory=bool(from_inventory), rotate=bool(rotate),
                      head=head, head_file=head_file, controller_file=controller_file)


class FilterModule:
    def filters(self):
        return {"ray_token_plan": ray_token_plan}
