# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: link_gate_verdict
short_description: The link gate's verdict over every rank's answer (F25), its table and its record
version_added: 0.5.0
author: inferops engineering (@inferops)
description:
  - Reads each rank's answer from its container's output and judges them together, F25 for each finding (a link
    below C(vllm_cluster_min_bus_bandwidth), naming the node pair; a rank without an answer; NCCL on sockets where
    C(vllm_cluster_rdma) asks for RDMA; NCCL builds that differ between nodes).
options:
  _input:
    description: >-
      Host name to what the wait for its gate container returned (the async_status result of
      community.docker.docker_container): the container's output (C(container.Output)), else the failure's C(msg).
    type: dict
    required: true
  inputs:
    description: Host name to the inputs it was measured with (as for C(link_gate_plan)).
    type: dict
    required: true
  date:
    description: When it was measured (ISO 8601), for the record.
    type: str
    required: true
  cluster:
    description: C(vllm_cluster_name), for the record.
    type: str
    required: true
extends_documentation_fragment:
  - inferops.vllm_cluster.link_gate
"""

EXAMPLES = r"""
- name: Judge the gate
  ansible.builtin.set_fact:
    verdict: "{{ answers | inferops.vllm_cluster.link_gate_verdict(_link_gate_settings, inputs, now, 'lab') }}"
"""

RETURN = r"""
_value:
  description: passed (bool), problems (F25 sentences), table (lines, as nccl-tests prints), record (what the controller keeps).
  type: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.inferops.vllm_cluster.plugins.module_utils import _link_gate


def link_gate_verdict(outputs, settings, inputs, date, cluster):
    try:
        answers = {}
        for host in settings["hosts"]:
            given = outputs.get(host) or {}
            output = (given.get("container") or {}).get("Output") or given.get("msg") or ""
            answer = _link_gate.parse(output)
            if answer is None and not given.get("finished", True):
                answer = {"ok": False, "error": "deadline: the rank had not finished when the wait for it ended"}
            elif answer is None and output:
                answer = {"ok": False, "error": str(output).strip()[-600:]}
            answers[host] = answer
        judged = _link_gate.verdict(answers, settings)
        kept = _link_gate.record(judged, settings, inputs, date, cluster)
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        raise AnsibleFilterError(f"link_gate_verdict: {error}")
    return {"passed": judged["passed"], "problems": judged["problems"], "table": kept["table"], "record": kept}


class FilterModule:
    def filters(self):
        return {"link_gate_verdict": link_gate_verdict}
