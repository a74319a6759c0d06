# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: burn_in_record
short_description: The last burn-in's record of a cluster, read on the controller
version_added: 0.6.0
author: inferops engineering (@inferops)
description:
  - Reads the JSON file the burn_in role writes on the controller (C(vllm_cluster_records_dir)/burn-in.json).
    A missing, unreadable or malformed file, or one not of the burn-in's form, reads as no record.
options:
  _terms:
    description: The record file's path.
    type: list
    elements: str
    required: true
"""

EXAMPLES = r"""
- name: Show the last burn-in
  ansible.builtin.debug:
    msg: "{{ lookup('inferops.vllm_cluster.burn_in_record', vllm_cluster_records_dir ~ '/burn-in.json') }}"
"""

RETURN = r"""
_raw:
  description: The record (a dict), or an empty dict.
  type: list
  elements: dict
"""

from ansible.plugins.lookup import LookupBase

from ansible_collections.inferops.vllm_cluster.plugins.module_utils import _burn_in, _records


class LookupModule(LookupBase):
    def run(self, terms, variables=None, **kwargs):
        return [_records.read(path, _burn_in.valid_record) for path in terms]
