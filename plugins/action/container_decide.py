# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Action of module container_decide (plugins/modules/container_decide.py documents it): _common's container entry
point's read of the node and its start decision in one task, where they took three (a set_fact of the spec, the
node_state read, a set_fact of the plan), each a task header and a worker per host on every run."""

from __future__ import annotations

from ansible.plugins.action import ActionBase
from ansible.utils.display import Display

from ansible_collections.inferops.vllm_cluster.plugins.module_utils import _container_plan
from ansible_collections.inferops.vllm_cluster.plugins.plugin_utils._direct_action import node_result

display = Display()

ARGUMENT_SPEC = {
    "spec": {"type": "dict", "required": True},
    "token_path": {"type": "str", "required": True},
    "config_dir": {"type": "str", "required": True},
    "read": {"type": "raw"},
}


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _supports_check_mode = True

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        del tmp
        _validation, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        spec = args["spec"]
        missing = [key for key in ("name", "image") if not spec.get(key)]
        if missing:
            result.update(failed=True, msg=f"container_decide: the spec has no {' and no '.join(missing)}")
            return result
        wanted = _container_plan.reading(spec, args["token_path"], args["config_dir"])
        node = args.get("read")
        # an earlier read of the layer stands where it asked everything (its caller passes it only where nothing of it
        # was written since); otherwise one node_state call asks all of it
        read_here = not _container_plan.covers(node, wanted)
        if read_here:
            node = node_result(self, "inferops.vllm_cluster.node_state", "_node_state", wanted, task_vars)
            if node.get("failed"):
                result.update(failed=True, msg=node.get("msg") or "node_state failed", read=True)
                return result
        decided = _container_plan.decision(spec, node, wanted, args["token_path"])
        # the reason, without the spec (its command and environment may hold secrets: the task runs under no_log)
        display.v(f"{task_vars.get('inventory_hostname', '')}: {spec['name']}: "
                  f"{'start or update' if decided['plan']['apply'] else 'leave'} ({decided['plan']['reason']})")
        result.update(changed=False, spec=spec, read=read_here, **decided)
        return result
