# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: upgrade_answer_problems
short_description: Whether each fixed prompt of an upgrade's acceptance got a well-formed answer (F30)
version_added: 0.7.0
author: inferops engineering (@inferops)
description:
  - From the C(uri) results of the fixed prompts, a line for each answer that is not HTTP 200 with a non-empty
    completion, a finish reason and at least one completion token.
options:
  _input:
    description: The C(uri) loop's results.
    type: list
    elements: dict
    required: true
  host:
    description: The head's inventory name.
    type: str
    required: true
"""

EXAMPLES = r"""
- name: Judge the answers
  ansible.builtin.assert:
    that: (prompts.results | inferops.vllm_cluster.upgrade_answer_problems(inventory_hostname)) == []
"""

RETURN = r"""
_value:
  description: The problems, a line each.
  type: list
"""

from ansible_collections.inferops.vllm_cluster.plugins.module_utils import _upgrade


def upgrade_answer_problems(results, host):
    return _upgrade.answer_problems(list(results), str(host))


class FilterModule:
    def filters(self):
        return {"upgrade_answer_problems": upgrade_answer_problems}
