# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: cluster_record
short_description: A record the collection keeps of a cluster on the controller, read back
version_added: 0.4.0
author: inferops engineering (@inferops)
description:
  - Reads a JSON record the collection writes in C(vllm_cluster_records_dir) on the controller, the link gate's
    (C(link-gate.json)), the burn-in's (C(burn-in.json)), a benchmark's (C(bench.json), C(bench-baseline.json)) or
    the last known good version (C(deployed.json)). A missing, unreadable or malformed file, or one not of
    its kind's form, reads as no record (the link gate then measures; diagnose says there is none).
options:
  _terms:
    description: The record file's path.
    type: list
    elements: str
    required: true
  kind:
    description: Which record the file must be.
    type: str
    required: true
    choices: [link_gate, burn_in, bench, deployed]
"""

EXAMPLES = r"""
- name: Show the last burn-in
  ansible.builtin.debug:
    msg: "{{ lookup('inferops.vllm_cluster.cluster_record', vllm_cluster_records_dir ~ '/burn-in.json', kind='burn_in') }}"
"""

RETURN = r"""
_raw:
  description: The record (a dict), or an empty dict.
  type: list
  elements: dict
"""

from ansible.plugins.lookup import LookupBase

from ansible_collections.inferops.vllm_cluster.plugins.module_utils import _records


class LookupModule(LookupBase):
    def run(self, terms, variables=None, **kwargs):
        self.set_options(var_options=variables, direct=kwargs)
        kind = self.get_option("kind")
        return [_records.read(path, kind) for path in terms]
