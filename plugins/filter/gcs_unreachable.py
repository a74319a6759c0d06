# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: gcs_unreachable
short_description: The sentence for a Ray worker that cannot open TCP to the head's GCS (F6)
version_added: 0.4.0
author: inferops engineering (@inferops)
description:
  - Names the worker, the head's GCS address and port, the worker's interconnect interface and address, how long it
    tried, and the fix (the link, the firewall, the head's container).
options:
  _input:
    description: The worker.
    type: str
    required: true
  head:
    description: The Ray head.
    type: str
    required: true
  head_ip:
    description: The head's interconnect address.
    type: str
    required: true
  port:
    description: The GCS port.
    type: int
    required: true
  interface:
    description: The worker's interconnect interface.
    type: str
    required: true
  ip:
    description: The worker's interconnect address.
    type: str
    required: true
  timeout:
    description: Seconds the worker tried.
    type: int
    required: true
  cidr:
    description: The interconnect network.
    type: str
    required: true
"""

EXAMPLES = r"""
- name: Report the unreachable head
  ansible.builtin.fail:
    msg: >-
      {{ inventory_hostname | inferops.vllm_cluster.gcs_unreachable('spark-1', '198.18.1.12', 6379, 'ic0',
         '198.18.1.13', 30, '198.18.1.0/24') }}
"""

RETURN = r"""
_value:
  description: The F6 sentence.
  type: str
"""

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._ray_checks import gcs_unreachable


class FilterModule:
    def filters(self):
        return {"gcs_unreachable": gcs_unreachable}
