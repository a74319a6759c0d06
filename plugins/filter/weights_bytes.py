# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: weights_bytes
short_description: A byte count as people read it (decimal units, as df -H shows)
version_added: 0.4.0
author: inferops engineering (@inferops)
description:
  - A byte count as people read it (decimal units, as df -H shows).
options:
  _input:
    description: Bytes.
    type: raw
    required: true
"""

EXAMPLES = r"""
- name: Show it
  ansible.builtin.debug:
    msg: "{{ 1503300328 | inferops.vllm_cluster.weights_bytes }}"
"""

RETURN = r"""
_value:
  description: A byte count as people read it (decimal units, as df -H shows).
  type: str
"""

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._weights import human


class FilterModule:
    def filters(self):
        return {"weights_bytes": human}
