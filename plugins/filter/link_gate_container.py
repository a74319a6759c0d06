# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: link_gate_container
short_description: What the link gate's container runs on one node
version_added: 0.5.0
author: inferops engineering (@inferops)
description:
  - The entrypoint and command of the gate's container on one node (C(python3 -c) with the collection's measuring
    program and its parameters) and the environment it adds to the node's pinned one (under NCCL, C(NCCL_DEBUG=INFO)
    for the INIT and NET subsystems, into a file the program reads back).
options:
  _input:
    description: This node's rank (its place in the gate's C(hosts), the head first).
    type: int
    required: true
extends_documentation_fragment:
  - inferops.vllm_cluster.link_gate
"""

EXAMPLES = r"""
- name: Show what rank 1 runs
  ansible.builtin.debug:
    msg: "{{ 1 | inferops.vllm_cluster.link_gate_container(_link_gate_settings) }}"
"""

RETURN = r"""
_value:
  description: entrypoint (a list), command (a list), env (a dict).
  type: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.inferops.vllm_cluster.plugins.module_utils import _link_gate


def link_gate_container(rank, settings):
    try:
        return _link_gate.container(int(rank), settings)
    except (KeyError, IndexError, TypeError, ValueError) as error:
        raise AnsibleFilterError(f"link_gate_container: settings incomplete or rank {rank!r} out of range: {error}")


class FilterModule:
    def filters(self):
        return {"link_gate_container": link_gate_container}
