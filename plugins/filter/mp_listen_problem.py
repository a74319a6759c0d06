# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: mp_listen_problem
short_description: Whether the head could listen on vLLM's master address and port before the ranks start (F19)
version_added: 0.4.0
author: inferops engineering (@inferops)
description:
  - vllm_server's stand-in for rank 0 listens on the master address and port for a few seconds; where it could not
    bind, rank 0 could not either. Returns the F19 sentence with the listener's own error and the fix, or an empty
    string where it listened.
options:
  _input:
    description: The head.
    type: str
    required: true
  rc:
    description: The listener's exit status.
    type: int
    required: true
  error:
    description: What the listener wrote on stderr (why it could not bind).
    type: str
    required: true
  port:
    description: The master port (C(vllm_cluster_mp_master_port)).
    type: int
    required: true
"""

EXAMPLES = r"""
- name: Check the head could listen on the master address
  ansible.builtin.assert:
    that: _problem | length == 0
    fail_msg: "{{ [_problem] | inferops.vllm_cluster.with_guide }}"
  vars:
    _problem: "{{ 'spark-1' | inferops.vllm_cluster.mp_listen_problem(listener.rc, listener.stderr, 29511) }}"
"""

RETURN = r"""
_value:
  description: The F19 sentence, empty where the head listened.
  type: str
"""

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._mp_launcher import listen_problem


class FilterModule:
    def filters(self):
        return {"mp_listen_problem": listen_problem}
