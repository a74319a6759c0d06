# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: hca_problems
short_description: What NCCL is told about RDMA that the host cannot give it (F23)
version_added: 0.3.0
author: inferops engineering (@inferops)
description:
  - Every device C(NCCL_IB_HCA) names must exist on the host (an exclusion list, C(^...), names none).
  - A forced C(NCCL_IB_GID_INDEX) must hold a RoCE v2 GID on every port of every named device.
  - Returns one F23 sentence per problem, naming the host, the device, what was found and the fix.
options:
  _input:
    description: The C(devices) result of M(inferops.vllm_cluster.rdma_devices).
    type: dict
    required: true
  gid_index:
    description: The forced GID index (C(vllm_cluster_nccl_ib_gid_index)); empty leaves it to NCCL.
    type: str
    required: true
extends_documentation_fragment:
  - inferops.vllm_cluster.rdma
"""

EXAMPLES = r"""
- name: Check the HCAs NCCL is told to use
  ansible.builtin.assert:
    that: _problems | length == 0
    fail_msg: "{{ _problems | join(' ') }}"
  vars:
    _problems: "{{ rdma.devices | inferops.vllm_cluster.hca_problems('rocep1s0f1,roceP2p1s0f1', '', inventory_hostname) }}"
"""

RETURN = r"""
_value:
  description: One message per problem; empty when NCCL gets what it is told to use.
  type: list
  elements: str
"""

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._rdma import hca_problems


class FilterModule:
    def filters(self):
        return {"hca_problems": hca_problems}
