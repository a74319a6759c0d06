# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: backends
short_description: The names of the collection's backends (the values vllm_cluster_backend takes)
version_added: 0.4.0
author: inferops engineering (@inferops)
description:
  - Read from the collection's backend table (C(plugins/module_utils/_backends.py)); the vllm_cluster role's
    argument spec takes its choices from it, so a backend added to the table is accepted without another edit.
options: {}
"""

EXAMPLES = r"""
- name: Show the backends
  ansible.builtin.debug:
    msg: "{{ query('inferops.vllm_cluster.backends') }}"
"""

RETURN = r"""
_raw:
  description: The backends' names, in the table's order.
  type: list
  elements: str
"""

from ansible.plugins.lookup import LookupBase

from ansible_collections.inferops.vllm_cluster.plugins.module_utils import _backends


class LookupModule(LookupBase):
    def run(self, terms, variables=None, **kwargs):
        return list(_backends.BACKENDS)
