# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: engine_state
short_description: Whether a node's Docker engine answers, and F26 when it does not
version_added: 0.5.0
author: inferops engineering (@inferops)
description:
  - Reads the registered result of C(docker version --format {{.Server.Version}}) run on the node (failed_when
    false) and says whether the engine answered, its version, and the problem to report when it did not (F26,
    naming the node, the socket and the first fix; another sentence when the node has no docker command at all).
options:
  _input:
    description: The registered result of the command.
    type: dict
    required: true
  host:
    description: The node (C(inventory_hostname)).
    type: str
    required: true
  doc:
    description: The troubleshooting guide's address (C(vllm_cluster_troubleshooting_url)).
    type: str
    required: true
"""

EXAMPLES = r"""
- name: Read the engine's state
  ansible.builtin.set_fact:
    engine: "{{ read | inferops.vllm_cluster.engine_state(inventory_hostname, vllm_cluster_troubleshooting_url) }}"
"""

RETURN = r"""
_value:
  description: answers (bool), version (the engine's, when it answered), problem (the F26 sentence, or empty).
  type: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.inferops.vllm_cluster.plugins.module_utils import _engine


def engine_state(read, host, doc):
    try:
        return _engine.state(read or {}, str(host), str(doc))
    except (AttributeError, TypeError) as error:
        raise AnsibleFilterError(f"engine_state: not a command's result: {error}")


class FilterModule:
    def filters(self):
        return {"engine_state": engine_state}
