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
    description: Free bytes under Docker's data root.
    type: int
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
    that: (free | inferops.vllm_cluster.upgrade_disk_problem(inventory_hostname, '/var/lib/docker', 30)) == ""
"""

RETURN = r"""
_value:
  description: The F30 message, or an empty string.
  type: str
"""

from ansible_collections.inferops.vllm_cluster.plugins.module_utils import _upgrade


def upgrade_disk_problem(free_bytes, host, root, need_gib):
    return _upgrade.disk_problem(str(host), int(free_bytes), str(root), float(need_gib))


class FilterModule:
    def filters(self):
        return {"upgrade_disk_problem": upgrade_disk_problem}
