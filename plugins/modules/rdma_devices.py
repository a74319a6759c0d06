#!/usr/bin/python
# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
module: rdma_devices
short_description: The RDMA devices of a host and the GIDs of their ports, from /sys/class/infiniband
version_added: 0.3.0
author: inferops engineering (@inferops)
description:
  - Reads every RDMA device (HCA) under O(sysfs_root), each port's used GID table entries and their types
    (C(RoCE v2), C(IB/RoCE v1)), each port's state and the network interfaces behind each device, for the preflight
    check of what NCCL is told to use (F23).
  - Changes nothing.
options:
  sysfs_root:
    description: The directory listing the RDMA devices (a copy of it in tests).
    type: path
    default: /sys/class/infiniband
notes:
  - The preflight role compares the result with C(vllm_cluster_nccl_ib_hca) and C(vllm_cluster_nccl_ib_gid_index)
    through the P(inferops.vllm_cluster.hca_problems#filter) filter.
extends_documentation_fragment:
  - inferops.vllm_cluster.read_only
"""

EXAMPLES = r"""
- name: Read the host's RDMA devices
  inferops.vllm_cluster.rdma_devices:
  register: rdma
"""

RETURN = r"""
devices:
  description: Per device, per port, per used GID index, the GID and its type; empty when the host has no RDMA device.
  returned: always
  type: dict
  sample:
    rocep1s0f1:
      "1":
        "3": {"gid": "0000:0000:0000:0000:0000:ffff:c0a8:c80c", "type": "RoCE v2"}
links:
  description: Per device, the network interfaces behind it and each port's state as the kernel words it.
  returned: always
  type: dict
  sample:
    rocep1s0f1: {"netdevs": ["enp1s0f1np1"], "ports": {"1": "4: ACTIVE"}}
    rocep1s0f0: {"netdevs": ["enp1s0f0np0"], "ports": {"1": "1: DOWN"}}
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._rdma import read_devices, read_links


def main() -> None:
    module = AnsibleModule(argument_spec={"sysfs_root": {"type": "path", "default": "/sys/class/infiniband"}},
                           supports_check_mode=True)
    root = module.params["sysfs_root"]
    module.exit_json(changed=False, devices=read_devices(root), links=read_links(root))


if __name__ == "__main__":
    main()
