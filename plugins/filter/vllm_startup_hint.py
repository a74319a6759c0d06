# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: vllm_startup_hint
short_description: A hint for a known first-run mistake in a vLLM log
version_added: 0.3.0
author: inferops engineering (@inferops)
description:
  - Names a first-run mistake the log shows (a model path that does not exist inside the container), with its fix;
    empty otherwise.
options:
  _input:
    description: C(vllm_server_model).
    type: str
    required: true
  lines:
    description: The log lines.
    type: list
    elements: str
    required: true
"""

EXAMPLES = r"""
- name: Report why vLLM did not come up
  ansible.builtin.debug:
    msg: "{{ vllm_server_model | inferops.vllm_cluster.vllm_startup_hint(log_lines) }}"
"""

RETURN = r"""
_value:
  description: The hint, or an empty string.
  type: str
"""

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._vllm_serving import startup_hint


class FilterModule:
    def filters(self):
        return {"vllm_startup_hint": startup_hint}
