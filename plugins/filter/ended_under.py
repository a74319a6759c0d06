# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: ended_under
short_description: Whether a container ended on its own while the container under it kept running
version_added: 0.1.0
author: inferops engineering (@inferops)
description:
  - Compares two containers of one host from C(docker inspect) (as M(community.docker.docker_container_info)
    returns them), for example the vLLM server and the Ray head it is a driver of.
  - True when the first is not running, the second is, and the first finished after the second's current start.
    Then it ended by itself (crashed, or lost a rank); the collection stops vLLM with Ray or before it.
options:
  _input:
    description: The container that may have ended (C(container) of M(community.docker.docker_container_info)); null when absent.
    type: dict
    required: true
  under:
    description: The container it depends on, in the same form.
    type: dict
    required: true
"""

EXAMPLES = r"""
- name: Restart vLLM when it died under a running Ray head
  ansible.builtin.debug:
    msg: vLLM died on its own
  when: vllm_info.container | inferops.vllm_cluster.ended_under(head_info.container)
"""

RETURN = r"""
_value:
  description: Whether the first container ended on its own under the second.
  type: bool
"""

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._containers import ended_under as _ended_under


def ended_under(container, under):
    return _ended_under((container or {}).get("State"), (under or {}).get("State"))


class FilterModule:
    def filters(self):
        return {"ended_under": ended_under}
