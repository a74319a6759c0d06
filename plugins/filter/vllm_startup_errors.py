# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: vllm_startup_errors
short_description: The exception lines of a vLLM log that did not come up
version_added: 0.3.0
author: inferops engineering (@inferops)
description:
  - Reads the last lines of C(docker logs) of a vLLM server that did not come up and returns each exception line
    once, without vLLM's log prefixes, root cause first.
options:
  _input:
    description: The log lines.
    type: list
    elements: str
    required: true
"""

EXAMPLES = r"""
- name: Report why vLLM did not come up
  ansible.builtin.debug:
    msg: "{{ log_lines | inferops.vllm_cluster.vllm_startup_errors | join(' / ') }}"
"""

RETURN = r"""
_value:
  description: "The exception lines, e.g. C(ValueError: current platform cpu does not support ray.)"
  type: list
  elements: str
"""

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._vllm_serving import startup_errors


class FilterModule:
    def filters(self):
        return {"vllm_startup_errors": startup_errors}
