# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: bench_verdict
short_description: A benchmark run against the cluster's baseline, the verdict and the figures side by side (F30)
version_added: 0.7.0
author: inferops engineering (@inferops)
description:
  - Passed unless output throughput at a concurrency both runs measured fell by more than O(max_slowdown); with
    no comparable baseline, passed and says why. The table shows each concurrency beside the baseline's.
options:
  _input:
    description: The run's record (as role bench writes it).
    type: dict
    required: true
  baseline:
    description: The baseline's record; empty where there is none.
    type: dict
    required: true
  max_slowdown:
    description: The largest accepted fall of output throughput (0.1 = 10 %).
    type: float
    required: true
  host:
    description: The head's inventory name.
    type: str
    required: true
"""

EXAMPLES = r"""
- name: Judge the run
  ansible.builtin.debug:
    msg: "{{ run | inferops.vllm_cluster.bench_verdict(baseline, 0.1, inventory_hostname) }}"
"""

RETURN = r"""
_value:
  description: "{passed, compared, reason, problem, slowdowns, table}."
  type: dict
"""

from ansible_collections.inferops.vllm_cluster.plugins.module_utils import _bench


def bench_verdict(run, baseline, max_slowdown, host):
    baseline = _bench.valid_record(baseline) if baseline else {}
    return dict(_bench.verdict(run, baseline, float(max_slowdown), str(host)), table=_bench.table(run, baseline))


class FilterModule:
    def filters(self):
        return {"bench_verdict": bench_verdict}
