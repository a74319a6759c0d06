# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: container_read_covers
short_description: Whether an earlier read of the node answers everything a container's start decision asks
version_added: 0.4.0
author: inferops engineering (@inferops)
description:
  - True where the M(inferops.vllm_cluster.node_state) result holds every container, image, file and record that
    C(wanted) (what the P(inferops.vllm_cluster.container_read#filter) filter returns) names; a failed or skipped read, or
    none, answers nothing.
  - Whether nothing it read was written since is the caller's to know (C(_common)'s entry point C(container)).
options:
  _input:
    description: The earlier read (a registered node_state result), or null.
    type: raw
    required: true
  wanted:
    description: What the decision reads, as C(container_read) returns it.
    type: dict
    required: true
"""

EXAMPLES = r"""
- name: Whether the worker's own read answers its start decision
  ansible.builtin.debug:
    msg: "{{ worker_read | inferops.vllm_cluster.container_read_covers(reading) }}"
"""

RETURN = r"""
_value:
  description: Whether the read answers every question of C(wanted).
  type: bool
"""

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._container_plan import covers


def container_read_covers(node, wanted):
    return covers(node, wanted)


class FilterModule:
    def filters(self):
        return {"container_read_covers": container_read_covers}
