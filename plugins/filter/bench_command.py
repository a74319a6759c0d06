# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: bench_command
short_description: The command of the benchmark's container (sh -c and its arguments)
version_added: 0.7.0
author: inferops engineering (@inferops)
description:
  - C(vllm bench serve) once per concurrency, the API key read from its file inside the container; the settings
    are positional arguments, never spliced into the script.
options:
  _input:
    description: The benchmark's settings (concurrencies, input_len, output_len, prompts_per_concurrency, key_file, url,
      model, served_model_name).
    type: dict
    required: true
"""

EXAMPLES = r"""
- name: Show the command
  ansible.builtin.debug:
    msg: "{{ _bench_settings | inferops.vllm_cluster.bench_command }}"
"""

RETURN = r"""
_value:
  description: The container's command (a list, after the C(sh) entrypoint).
  type: list
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.inferops.vllm_cluster.plugins.module_utils import _bench


def bench_command(settings):
    try:
        return _bench.script_args(settings)
    except (_bench.BenchError, KeyError) as refused:
        raise AnsibleFilterError(f"bench_command: {refused}")


class FilterModule:
    def filters(self):
        return {"bench_command": bench_command}
