# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: started_before
short_description: Whether a container started clearly before another one on another host
version_added: 0.2.0
author: inferops engineering (@inferops)
description:
  - Compares the C(State.StartedAt) of two containers (as M(community.docker.docker_container_info) returns them)
    on two hosts, correcting the second host's clock by O(clock_offset); differences within 5 s decide nothing.
  - A Ray worker started before the head's current start belongs to a cluster that no longer exists.
options:
  _input:
    description: >-
      The container that may be older: C(container) of M(community.docker.docker_container_info), or a container of
      M(inferops.vllm_cluster.node_state)'s C(containers).
    type: dict
    required: true
  other:
    description: The container on the other host.
    type: dict
    required: true
  clock_offset:
    description: The other host's clock minus this host's, in seconds, read at the same moment.
    type: float
    default: 0
"""

EXAMPLES = r"""
- name: Rejoin a worker left from an earlier head
  ansible.builtin.debug:
    msg: the worker must rejoin
  when: worker_info.container | inferops.vllm_cluster.started_before(head_info.container, 1.5)
"""

RETURN = r"""
_value:
  description: Whether the first container started more than 5 s before the second, on one clock.
  type: bool
"""

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._containers import started_before as _started_before


def _state(container):
    """docker inspect's State, or node_state's description of the container (its started_at)."""
    container = container or {}
    return container["State"] if "State" in container else {"StartedAt": container.get("started_at")}


def started_before(container, other, clock_offset=0.0):
    return _started_before(_state(container), _state(other), float(clock_offset or 0))


class FilterModule:
    def filters(self):
        return {"started_before": started_before}
