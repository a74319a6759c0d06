# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: metrics_targets
short_description: Where a Prometheus scrapes the cluster, as file_sd target groups
version_added: 0.4.0
author: inferops engineering (@inferops)
description:
  - One target group per metrics endpoint and node, from the port registry's rows that serve metrics under the
    backend (vLLM's API on the head; under the Ray backend Ray's metrics export on every node and its autoscaler and
    dashboard metrics on the head), labelled with C(job), C(cluster), C(node), C(endpoint) and C(network).
  - Ray's endpoints are listed at each node's interconnect address (the firewall admits them from the interconnect
    alone); vLLM's where clients reach its API. vLLM's /metrics needs no API key.
options:
  _input:
    description: The cluster's nodes (C(groups['vllm_cluster'])), in inventory order.
    type: list
    elements: str
    required: true
  ips:
    description: Each node's interconnect address (C(vllm_cluster_node_ip)), by name.
    type: dict
    required: true
  head:
    description: The head's name (C(vllm_cluster_head)).
    type: str
    required: true
  values:
    description: The port settings (C(vllm_cluster_port_values)).
    type: dict
    required: true
  traits:
    description: The backend's traits (C(vllm_cluster_backend_traits)).
    type: dict
    required: true
  cluster:
    description: The cluster's name (C(vllm_cluster_name)), as a label.
    type: str
    required: true
  api_url:
    description: vLLM's API as clients reach it (C(vllm_server_endpoint.url)).
    type: str
    required: true
  head_address:
    description: The head's management address, where a server bound to every address (C(0.0.0.0)) is listed.
    type: str
    default: ""
"""

EXAMPLES = r"""
- name: Write the targets file
  ansible.builtin.copy:
    content: >-
      {{ hosts | inferops.vllm_cluster.metrics_targets(ips, 'spark-1', values, traits, 'vllm-cluster', url) | to_nice_json }}
    dest: /etc/prometheus/file_sd/vllm-cluster.json
    mode: "0644"
"""

RETURN = r"""
_value:
  description: The target groups, C([{targets, labels}]), as Prometheus' file_sd_configs read them.
  type: list
  elements: dict
"""

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._metrics_targets import targets


def metrics_targets(hosts, ips, head, values, traits, cluster, api_url, head_address=""):
    return targets(hosts, ips, head, values, traits, cluster, api_url, head_address)


class FilterModule:
    def filters(self):
        return {"metrics_targets": metrics_targets}
