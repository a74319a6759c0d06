# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: ports_free_report
short_description: Which of the ports a node is about to open another process holds, from module port_holders' read
version_added: 0.4.0
author: inferops engineering (@inferops)
description:
  - Judges what M(inferops.vllm_cluster.port_holders) read on one node against the ports the node opens under the
    backend (the port registry, leaving out those whose owner already runs).
  - A port counts as taken only where both of its reads saw it held. A user who may not ask Docker cannot tell the
    cluster's own containers from another process, so then nothing is refused and a note says so.
options:
  _input:
    description: The result of M(inferops.vllm_cluster.port_holders) on the node.
    type: dict
    required: true
  values:
    description: Every port setting and its value (C(vllm_cluster_port_values)).
    type: dict
    required: true
  traits:
    description: The backend's traits (C(vllm_cluster_backend_traits)).
    type: dict
    required: true
  is_head:
    description: Whether the node is the head.
    type: bool
    required: true
  weights_staged:
    description: Whether the collection stages the weights.
    type: bool
    required: true
  containers:
    description: Owner (C(ray), C(vllm), C(supervisor)) to the name of the container holding its ports on the node.
    type: dict
    required: true
  host:
    description: The node's inventory name, for the sentences.
    type: str
    required: true
  user:
    description: The user the node's facts name (after become), for the note of a user who may not ask Docker.
    type: str
    default: ""
"""

EXAMPLES = r"""
- name: Fail on a port already taken by another process
  ansible.builtin.assert:
    that: _report.problem | length == 0
    fail_msg: "{{ _report.problem }}"
  vars:
    _report: >-
      {{ holders | inferops.vllm_cluster.ports_free_report(vllm_cluster_port_values, vllm_cluster_backend_traits,
         true, true, {'ray': 'vllm-cluster-ray-head'}, inventory_hostname) }}
"""

RETURN = r"""
_value:
  description:
    - C(notes), sentences to show (a check that stood aside, the collection's staging server on the weights port);
      C(taken), C(name=port) for each port another process holds, lowest first; C(engine_down), ports held while the
      Docker engine does not answer (F26); C(problem), the refusal, empty when none.
  type: dict
"""

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._ports_free import report


def ports_free_report(holders, values, traits, is_head, weights_staged, containers, host, user=""):
    return report(holders, values, traits, bool(is_head), bool(weights_staged), containers, host, user)


class FilterModule:
    def filters(self):
        return {"ports_free_report": ports_free_report}
