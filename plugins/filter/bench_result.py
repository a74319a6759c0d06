# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: bench_result
short_description: A benchmark run's figures, read back from its container's output, and what is wrong with them (F30)
version_added: 0.7.0
author: inferops engineering (@inferops)
description:
  - The marked result lines of the container's output, by concurrency, and a problem for each concurrency asked
    without a result or with failed requests.
options:
  _input:
    description: The container's output (a string or its lines).
    type: raw
    required: true
  concurrencies:
    description: The concurrencies asked.
    type: raw
    required: true
  host:
    description: The head's inventory name.
    type: str
    required: true
  status:
    description: The container's exit status.
    type: raw
    required: true
"""

EXAMPLES = r"""
- name: Read the figures
  ansible.builtin.debug:
    msg: "{{ output | inferops.vllm_cluster.bench_result([1, 4, 16], inventory_hostname, 0) }}"
"""

RETURN = r"""
_value:
  description: "{rows: [figures, by concurrency], problems: [sentences]}."
  type: dict
"""

from ansible_collections.inferops.vllm_cluster.plugins.module_utils import _bench


def bench_result(output, concurrencies, host, status):
    lines = output.splitlines() if isinstance(output, str) else list(output or [])
    rows = _bench.parse_output(lines)
    asked = _bench.concurrency_list(concurrencies)
    return {"rows": [rows[concurrency] for concurrency in asked if concurrency in rows],
            "problems": _bench.problems(rows, asked, str(host), status, lines)}


class FilterModule:
    def filters(self):
        return {"bench_result": bench_result}
