# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: upgrade_trial_problem
short_description: Whether an upgrade's site.yml run recorded the version planned (F30)
version_added: 0.7.0
author: inferops engineering (@inferops)
description:
  - The F30 message when the way forward's record (the trial's, which becomes the last known good when accepted) is
    missing or names other settings than the plan's way forward; empty otherwise.
options:
  _input:
    description: The trial's record (lookup C(cluster_record) kind C(deployed)); empty where there is none.
    type: dict
    required: true
  plan:
    description: The plan (filter C(upgrade_plan)).
    type: dict
    required: true
  path:
    description: Where the trial's record was to be.
    type: str
    required: true
"""

EXAMPLES = r"""
- name: Check the trial
  ansible.builtin.assert:
    that: (trial | inferops.vllm_cluster.upgrade_trial_problem(upgrade_plan, path)) | length == 0
"""

RETURN = r"""
_value:
  description: The F30 message, or an empty string.
  type: str
"""

from ansible_collections.inferops.vllm_cluster.plugins.module_utils import _upgrade


def upgrade_trial_problem(trial, plan, path):
    return _upgrade.trial_problem(trial or {}, plan, str(path))


class FilterModule:
    def filters(self):
        return {"upgrade_trial_problem": upgrade_trial_problem}
