# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: upgrade_premeasure_problem
short_description: Whether the running version gave the benchmark an upgrade is judged against (F30)
version_added: 0.7.0
author: inferops engineering (@inferops)
description:
  - Before anything changes, an upgrade without a baseline of the running version measures it; the F30 message when
    that benchmark had problems (the new version could not be judged), empty otherwise.
options:
  _input:
    description: The benchmark's problems (role C(bench)'s C(bench_result.problems)).
    type: list
    elements: str
    required: true
  host:
    description: The head's inventory name.
    type: str
    required: true
"""

EXAMPLES = r"""
- name: Check the running version was measured
  ansible.builtin.assert:
    that: (bench_result.problems | inferops.vllm_cluster.upgrade_premeasure_problem(inventory_hostname)) | length == 0
"""

RETURN = r"""
_value:
  description: The F30 message, or an empty string.
  type: str
"""

from ansible_collections.inferops.vllm_cluster.plugins.module_utils import _upgrade


def upgrade_premeasure_problem(problems, host):
    return _upgrade.premeasure_problem(list(problems or []), str(host))


class FilterModule:
    def filters(self):
        return {"upgrade_premeasure_problem": upgrade_premeasure_problem}
