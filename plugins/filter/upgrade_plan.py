# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: upgrade_plan
short_description: What an upgrade changes, from the last known good record to the inventory's values (F30)
version_added: 0.7.0
author: inferops engineering (@inferops)
description:
  - The changes (name, from, to), the extra variables of the way forward and of the way back, and whether there
    is anything to do; C(problem) instead when there is no record or the nodes disagree on a version variable.
options:
  _input:
    description: The last known good record (lookup C(cluster_record) kind C(deployed)).
    type: dict
    required: true
  values:
    description: Each node's version variables as this run resolves them (inventory name -> {name -> value}).
    type: dict
    required: true
  head:
    description: The head's inventory name.
    type: str
    required: true
  found:
    description: Each node's image ID under the target image name (empty where absent).
    type: dict
    required: true
  path:
    description: Where the record is (for the message when there is none).
    type: str
    required: true
  limit:
    description: The run's C(--limit) (C(ansible_limit)); an upgrade moves the whole cluster.
    type: str
    default: ""
"""

EXAMPLES = r"""
- name: Plan the upgrade
  ansible.builtin.debug:
    msg: "{{ record | inferops.vllm_cluster.upgrade_plan(values, 'spark-1', ids, record_path) }}"
"""

RETURN = r"""
_value:
  description: "{changes, nothing, forward, back, forward_hash, back_model, image_changes, describe_from, describe_to, problem}."
  type: dict
"""

from ansible_collections.inferops.vllm_cluster.plugins.module_utils import _upgrade
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._guide import TROUBLESHOOTING


def upgrade_plan(record, values, head, found, path, limit=""):
    if limit:
        return {"problem": _upgrade.MESSAGES["LIMIT"].format(limit=limit, doc=TROUBLESHOOTING)}
    if not record:
        return {"problem": _upgrade.MESSAGES["NO_RECORD"].format(path=path, doc=TROUBLESHOOTING)}
    try:
        target = _upgrade.version_values(values, head)
    except _upgrade.UpgradeError as refused:
        return {"problem": str(refused)}
    return dict(_upgrade.plan(record, target, {str(host): str(value or "") for host, value in found.items()}),
                problem="")


class FilterModule:
    def filters(self):
        return {"upgrade_plan": upgrade_plan}
