# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: supervisor_secret_source
short_description: Where a run takes the supervisors' shared secret from
version_added: 0.5.0
author: inferops engineering (@inferops)
description:
  - C(controller) where this controller keeps the secret (C(vllm_cluster_records_dir)/supervisor-secret); else
    C(head) where the head's supervisor directory holds a well-formed one (48 letters and digits), which a second
    copy of the inventory takes rather than make another that every supervisor would restart with; else C(new).
options:
  _input:
    description: Whether the controller has its copy of the secret.
    type: bool
    required: true
  head_secret:
    description: The head's secret file's text (empty where it has none).
    type: str
    required: true
"""

EXAMPLES = r"""
- name: Choose the secret's source
  ansible.builtin.set_fact:
    source: "{{ (path is file) | inferops.vllm_cluster.supervisor_secret_source(head_text) }}"
"""

RETURN = r"""
_value:
  description: C(controller), C(head) or C(new).
  type: str
"""

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._supervisor import secret_source


def supervisor_secret_source(controller_has_secret, head_secret):
    return secret_source(bool(controller_has_secret), str(head_secret or ""))


class FilterModule:
    def filters(self):
        return {"supervisor_secret_source": supervisor_secret_source}
