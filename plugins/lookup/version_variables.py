# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: version_variables
short_description: The variables that make a version of the cluster (what an upgrade changes and a rollback restores)
version_added: 0.7.0
author: inferops engineering (@inferops)
description:
  - The runtime image, the model and its revision, the serving settings (C(plugins/module_utils/_upgrade.py)); site.yml
    records their values as the last known good version, playbooks/upgrade.yml moves the cluster from those to the
    inventory's.
options: {}
"""

EXAMPLES = r"""
- name: Show this node's version
  ansible.builtin.debug:
    msg: >-
      {{ dict(query('inferops.vllm_cluster.version_variables')
              | zip(query('ansible.builtin.vars', *query('inferops.vllm_cluster.version_variables')))) }}
"""

RETURN = r"""
_raw:
  description: The variables' names.
  type: list
  elements: str
"""

from ansible.plugins.lookup import LookupBase

from ansible_collections.inferops.vllm_cluster.plugins.module_utils import _upgrade


class LookupModule(LookupBase):
    def run(self, terms, variables=None, **kwargs):
        return list(_upgrade.VERSION_VARIABLES)
