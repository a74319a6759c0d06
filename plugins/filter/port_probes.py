# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: port_probes
short_description: What diagnose probes at each other node's interconnect address, from the port registry
version_added: 0.4.0
author: inferops engineering (@inferops)
description:
  - For each target host, every port of the registry (C(plugins/module_utils/_ports.py)) it opens for the
    interconnect under the backend; the API (on the management address) and Ray's dashboard (loopback) are not
    probed there.
  - Returns the probes module C(tcp_reach) takes; a host without an address in O(addresses) (an unreachable node
    derived none) is left out.
options:
  _input:
    description: The hosts to probe.
    type: list
    elements: str
    required: true
  values:
    description: C(vllm_cluster_port_values).
    type: dict
    required: true
  head:
    description: C(vllm_cluster_head).
    type: str
    required: true
  addresses:
    description: Each host's interconnect address, by inventory name.
    type: dict
    required: true
extends_documentation_fragment:
  - inferops.vllm_cluster.ports
"""

EXAMPLES = r"""
- name: Probe the other nodes
  inferops.vllm_cluster.tcp_reach:
    probes: >-
      {{ groups['vllm_cluster'] | difference([inventory_hostname]) | inferops.vllm_cluster.port_probes(
           vllm_cluster_port_values, vllm_cluster_backend_traits, vllm_cluster_head,
           addresses={'spark-2': '198.18.1.13'}) }}
"""

RETURN = r"""
_value:
  description: "{target, address, name, port, transient} for each port of each host with an address; transient
    ports answer only while something runs."
  type: list
  elements: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._ports import probes


def port_probes(targets, values, traits, head, weights_staged=False, addresses=None):
    if addresses is None:
        raise AnsibleFilterError("port_probes needs addresses= (each host's interconnect address, by name)")
    return [dict(probe, target=host, address=addresses[host])
            for host in targets if addresses.get(host)
            for probe in probes(values, traits, host == head, bool(weights_staged))]


class FilterModule:
    def filters(self):
        return {"port_probes": port_probes}
