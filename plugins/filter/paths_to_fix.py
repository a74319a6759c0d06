# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: paths_to_fix
short_description: The paths a node holds otherwise than wanted, from one read of the node
version_added: 0.4.0
author: inferops engineering (@inferops)
description:
  - Keeps the entries of a list of wanted paths (C(path), C(mode), C(kind) default C(directory), owned by root) that
    M(inferops.vllm_cluster.node_state) found missing, of another kind (a link is never what is wanted), another
    mode or another owner; the file module then handles those alone.
options:
  _input:
    description: The wanted paths, each C({path, mode}) and optionally C(kind).
    type: list
    elements: dict
    required: true
  node:
    description: The result of M(inferops.vllm_cluster.node_state) that read every path in O(files).
    type: dict
    required: true
"""

EXAMPLES = r"""
- name: Create the node's directories that are missing or differ
  ansible.builtin.file:
    path: "{{ item.path }}"
    state: directory
    mode: "{{ item.mode }}"
  loop: "{{ wanted | inferops.vllm_cluster.paths_to_fix(node) }}"
"""

RETURN = r"""
_value:
  description: The entries of the input to hand to the file module, in their order.
  type: list
  elements: dict
"""

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._node_state import needs_fixing


def paths_to_fix(wanted, node):
    found = node.get("files") or {}
    return [entry for entry in wanted
            if needs_fixing(found.get(entry["path"]), entry.get("kind", "directory"), str(entry["mode"]))]


class FilterModule:
    def filters(self):
        return {"paths_to_fix": paths_to_fix}
