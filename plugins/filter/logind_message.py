# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: logind_message
short_description: What preflight says of systemd-logind's RemoveIPC on a node (F13)
version_added: 0.4.0
author: inferops engineering (@inferops)
description:
  - From P(inferops.vllm_cluster.logind_verdict#filter)'s answer, F13's sentence with its fix (C(fail)), the note
    that a rootful dockerd keeps the containers out of its reach (C(note)), or an empty string (C(ok)).
options:
  _input:
    description: C(fail), C(note) or C(ok).
    type: str
    required: true
  host:
    description: The node.
    type: str
    required: true
  user:
    description: The connecting user's name.
    type: str
    required: true
  uid:
    description: The connecting user's uid.
    type: int
    required: true
"""

EXAMPLES = r"""
- name: Say what RemoveIPC means here
  ansible.builtin.debug:
    msg: "{{ 'note' | inferops.vllm_cluster.logind_message(inventory_hostname, 'ubuntu', 1000) }}"
"""

RETURN = r"""
_value:
  description: The sentence, empty where RemoveIPC does not apply.
  type: str
"""

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._logind import logind_message


class FilterModule:
    def filters(self):
        return {"logind_message": logind_message}
