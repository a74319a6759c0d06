# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: shared_addresses
short_description: Interconnect addresses held by more than one host of the cluster (F8)
version_added: 0.3.0
author: inferops engineering (@inferops)
description:
  - Groups the cluster's hosts by interconnect address and names every address two or more hosts share, in one
    F8 sentence; empty when every address is unique. Hosts without an address are left out.
options:
  _input:
    description: Host -> interconnect address, for every host of the cluster (C(--limit) or not).
    type: dict
    required: true
  cidr:
    description: C(vllm_cluster_interconnect_cidr), for the fix.
    type: str
    required: true
"""

EXAMPLES = r"""
- name: Check no two hosts share an interconnect address
  ansible.builtin.assert:
    that: _shared | length == 0
    fail_msg: "{{ _shared }}"
  vars:
    _shared: "{{ {'spark-1': '198.18.1.12', 'spark-2': '198.18.1.12'} | inferops.vllm_cluster.shared_addresses('198.18.1.0/24') }}"
"""

RETURN = r"""
_value:
  description: The F8 sentence, or an empty string.
  type: str
"""

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._preflight import shared_addresses


class FilterModule:
    def filters(self):
        return {"shared_addresses": shared_addresses}
