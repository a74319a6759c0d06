# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: cluster_ports
short_description: The ports one host opens under the cluster's backend, from the port registry
version_added: 0.4.0
author: inferops engineering (@inferops)
description:
  - Every row of the port registry (C(plugins/module_utils/_ports.py)) this host opens under the backend (its
    traits, C(vllm_cluster_backend_traits)), as variable name and port; a variable left empty or undefined takes its
    owning role's default.
options:
  _input:
    description: The values of the registry's variables (C(vllm_cluster_port_values)).
    type: dict
    required: true
  is_head:
    description: Whether the host is the head (only it opens the head's ports).
    type: bool
    default: true
  held:
    description: Owners already running here (C(ray), C(vllm), C(weights)), whose ports are theirs and left out.
    type: list
    elements: str
    default: []
  reach:
    description: Only the ports reached from there (C(interconnect), C(management), C(loopback)); empty for all.
    type: str
    default: ""
extends_documentation_fragment:
  - inferops.vllm_cluster.ports
"""

EXAMPLES = r"""
- name: Show what a worker opens
  ansible.builtin.debug:
    msg: "{{ vllm_cluster_port_values | inferops.vllm_cluster.cluster_ports(vllm_cluster_backend_traits, false) }}"
"""

RETURN = r"""
_value:
  description: variable name -> port.
  type: dict
"""

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._ports import opened


def cluster_ports(values, traits, is_head=True, weights_staged=False, held=(), reach=""):
    return opened(values, traits, bool(is_head), bool(weights_staged), held or (), reach)


class FilterModule:
    def filters(self):
        return {"cluster_ports": cluster_ports}
