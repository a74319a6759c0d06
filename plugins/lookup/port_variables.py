# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: port_variables
short_description: The variables that set the cluster's ports, from the collection's port registry
version_added: 0.4.0
author: inferops engineering (@inferops)
description:
  - Every variable of the port registry (C(plugins/module_utils/_ports.py)), Ray's workers' range included; the
    vllm_cluster role reads their values once (C(vllm_cluster_port_values)) for preflight, diagnose and the firewall.
options: {}
"""

EXAMPLES = r"""
- name: Show every port setting and its value
  ansible.builtin.debug:
    msg: >-
      {{ dict(query('inferops.vllm_cluster.port_variables')
              | zip(query('ansible.builtin.vars', *query('inferops.vllm_cluster.port_variables'), default=''))) }}
"""

RETURN = r"""
_raw:
  description: The variables' names, in the registry's order.
  type: list
  elements: str
"""

from ansible.plugins.lookup import LookupBase

from ansible_collections.inferops.vllm_cluster.plugins.module_utils import _ports


class LookupModule(LookupBase):
    def run(self, terms, variables=None, **kwargs):
        return _ports.variables()
