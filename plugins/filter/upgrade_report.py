# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: upgrade_report
short_description: The failure message of an upgrade that was rolled back, or whose way back failed too (F30)
version_added: 0.7.0
author: inferops engineering (@inferops)
description:
  - Names the new version, where it failed (deploying it, or its acceptance), why, the version restored and the
    logs of the inner runs.
options:
  _input:
    description: The plan (filter C(upgrade_plan)).
    type: dict
    required: true
  stage:
    description: Where the upgrade failed.
    type: str
    choices: [deploy, accept]
    required: true
  why:
    description: What failed, a line each.
    type: list
    elements: str
    required: true
  back_ok:
    description: Whether the way back deployed and answered.
    type: bool
    required: true
  back_why:
    description: What failed on the way back.
    type: list
    elements: str
    required: true
  restored:
    description: What the restored version answered (a sentence).
    type: str
    required: true
  logs:
    description: The inner runs' log files.
    type: list
    elements: str
    required: true
"""

EXAMPLES = r"""
- name: Fail with the report
  ansible.builtin.fail:
    msg: "{{ plan | inferops.vllm_cluster.upgrade_report('accept', why, true, [], 'serves again', logs) }}"
"""

RETURN = r"""
_value:
  description: The message.
  type: str
"""

from ansible_collections.inferops.vllm_cluster.plugins.module_utils import _upgrade


def upgrade_report(plan, stage, why, back_ok, back_why, restored, logs):
    return _upgrade.report(plan, stage, list(why), bool(back_ok), list(back_why), str(restored), list(logs))


class FilterModule:
    def filters(self):
        return {"upgrade_report": upgrade_report}
