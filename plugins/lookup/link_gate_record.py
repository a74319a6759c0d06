# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: link_gate_record
short_description: The last link gate's record of a cluster, read on the controller
version_added: 0.5.0
author: inferops engineering (@inferops)
description:
  - Reads the JSON file the link gate writes on the controller (C(vllm_cluster_records_dir)/link-gate.json).
    A missing, unreadable or malformed file, or one not of the gate's form, reads as no record (the gate then
    measures).
options:
  _terms:
    description: The record file's path.
    type: list
    elements: str
    required: true
"""

EXAMPLES = r"""
- name: Show the last gate
  ansible.builtin.debug:
    msg: "{{ lookup('inferops.vllm_cluster.link_gate_record', vllm_cluster_records_dir ~ '/link-gate.json') }}"
"""

RETURN = r"""
_raw:
  description: The record (a dict), or an empty dict.
  type: list
  elements: dict
"""

from ansible.plugins.lookup import LookupBase

from ansible_collections.inferops.vllm_cluster.plugins.module_utils import _link_gate, _records


class LookupModule(LookupBase):
    def run(self, terms, variables=None, **kwargs):
        return [_records.read(path, _link_gate.valid_record) for path in terms]
