# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: runtime_prerequisite_problems
short_description: What the container runtime's layer lacks on a node, every problem at once
version_added: 0.4.0
author: inferops engineering (@inferops)
description:
  - One sentence, naming host, value and fix, for a node whose Python cannot import requests (community.docker's
    modules need it) where the role would not install it, and for an image archive that does not exist where the
    inventory says it is.
options:
  _input:
    description: The inventory host the sentences name.
    type: str
    required: true
  node:
    description:
      - C(python), C(requests), C(installs_requests), C(archive), C(archive_on_node), C(archive_found) and C(image), as
        the role read them (module C(node_state)) and the inventory sets them.
    type: dict
    required: true
"""

EXAMPLES = r"""
- name: Check the node has what the runtime's layer needs
  ansible.builtin.assert:
    that: problems | length == 0
    fail_msg: "{{ problems | join(' ') }}"
  vars:
    problems: >-
      {{ inventory_hostname | inferops.vllm_cluster.runtime_prerequisite_problems({'python': '/usr/bin/python3',
         'requests': true, 'archive': ''}) }}
"""

RETURN = r"""
_value:
  description: One sentence per problem; empty when none.
  type: list
  elements: str
"""

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._runtime import prerequisite_problems


class FilterModule:
    def filters(self):
        return {"runtime_prerequisite_problems": prerequisite_problems}
