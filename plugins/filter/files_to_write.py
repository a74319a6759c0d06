# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: files_to_write
short_description: The files a node holds otherwise than wanted, from one read of the node
version_added: 0.4.0
author: inferops engineering (@inferops)
description:
  - Keeps the entries of a list of wanted root-owned files (C(dest), C(content), C(mode)) that
    M(inferops.vllm_cluster.node_state) found missing, of another kind (a link is never what is wanted), another mode
    or owner, or whose sha256 is not the content's (UTF-8, as M(ansible.builtin.copy) writes it).
options:
  _input:
    description: The wanted files, each C({dest, content, mode}).
    type: list
    elements: dict
    required: true
  node:
    description: The result of M(inferops.vllm_cluster.node_state) that read every C(dest) in O(files).
    type: dict
    required: true
"""

EXAMPLES = r"""
- name: Write the files that differ
  ansible.builtin.copy:
    content: "{{ item.content }}"
    dest: "{{ item.dest }}"
    mode: "{{ item.mode }}"
  loop: "{{ wanted | inferops.vllm_cluster.files_to_write(node) }}"
"""

RETURN = r"""
_value:
  description: The entries of the input to hand to the copy module, in their order.
  type: list
  elements: dict
"""

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._node_state import content_differs


def files_to_write(wanted, node):
    found = node.get("files") or {}
    return [entry for entry in wanted if content_differs(found.get(entry["dest"]), str(entry["content"]), str(entry["mode"]))]


class FilterModule:
    def filters(self):
        return {"files_to_write": files_to_write}
