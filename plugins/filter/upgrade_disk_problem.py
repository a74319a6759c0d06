# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: upgrade_disk_problem
short_description: Whether a node has the disk space an upgrade's new image needs beside the kept one (F30)
version_added: 0.7.0
author: inferops engineering (@inferops)
description:
  - The F30 message when the free space under Docker's data root is below what the new image needs; empty otherwise.
options:
  _input:
    description: The output of C(df -P -B1) on Docker's data root.
    type: str
    required: true
  host:
    description: The node's inventory name.
    type: str
    required: true
  root:
    description: Docker's data root on the node.
    type: str
    required: true
  need_gib:
    description: GiB the new image needs.
    type: float
    required: true
"""

EXAMPLES = r"""
- name: Check the space
  ansible.builtin.assert:
    that: (df.stdout | inferops.vllm_cluster.upgrade_disk_problem(inventory_hostname, '/var/lib/docker', 30)) == ""
"""

RETURN = r"""
_value:
  description: The F30 message, or an empty string.
  type: str
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.inferops.vllm_cluster.plugins.module_utils import _upgrade


def upgrade_disk_problem(df_output, host, root, need_gib):
    try:
        free_bytes = _upgrade.df_available(df_output)
    except _upgrade.UpgradeError as unreadable:
        raise AnsibleFilterError(f"upgrade_disk_problem: {host}: {unreadable}")
    return _upgrade.disk_problem(str(host), free_bytes, str(root), float(need_gib))


class FilterModule:
    def filters(self):
        return {"upgrade_disk_problem": upgrade_disk_problem}
