# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: link_gate_plan
short_description: Whether this run's link gate measures, and why
version_added: 0.5.0
author: inferops engineering (@inferops)
description:
  - Compares what the gate would measure with (every node's machine id and boot, serving image ID, interconnect
    interface, address, MTU and speed, the env file's names the collective reads, the gate's settings and program)
    with the record of the last gate.
  - Mode C(auto) measures when no record passed with the same inputs, so a run that changes nothing about images,
    nodes or the interconnect does not measure again; C(always) measures; C(off) never does.
options:
  _input:
    description: >-
      Host name to what the role read there: C(machine_id), C(boot_id), C(image_id), C(interface), C(address),
      C(mtu), C(speed), C(env_sha256) (module P(inferops.vllm_cluster.link_inputs#module) and the facts).
    type: dict
    required: true
  record:
    description: The last gate's record (lookup C(inferops.vllm_cluster.cluster_record), kind link_gate); empty for none.
    type: dict
    required: true
  mode:
    description: C(vllm_cluster_link_gate), one of auto, always, off.
    type: str
    required: true
  present:
    description: The hosts taking part in this run (C(ansible_play_hosts)); with one left out nothing is measured.
    type: list
    elements: str
    required: true
extends_documentation_fragment:
  - inferops.vllm_cluster.link_gate
"""

EXAMPLES = r"""
- name: Decide whether the gate measures
  ansible.builtin.set_fact:
    plan: "{{ inputs | inferops.vllm_cluster.link_gate_plan(_link_gate_settings, {}, 'auto', ansible_play_hosts) }}"
"""

RETURN = r"""
_value:
  description: >-
    measure (bool), reason (a sentence), fingerprint (of the inputs), problems (nodes without the serving image:
    the gate cannot run there).
  type: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.inferops.vllm_cluster.plugins.module_utils import _link_gate


def link_gate_plan(inputs, settings, record, mode, present):
    try:
        return _link_gate.plan(inputs, settings, record, mode, present)
    except (KeyError, TypeError, ValueError) as error:
        raise AnsibleFilterError(f"link_gate_plan: {error}")


class FilterModule:
    def filters(self):
        return {"link_gate_plan": link_gate_plan}
