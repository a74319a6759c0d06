# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The controller side of module playbook_run: what the calling run was given on its command line (extra variables,
vault secrets, SSH user and key, privilege escalation, forks) is passed on to the inner run, which would otherwise
deploy without them (an API key given with -e @secrets.yml, a vault-encrypted inventory)."""

from __future__ import annotations

from ansible import context
from ansible.plugins.action import ActionBase
from ansible.utils.vars import merge_hash

from ansible_collections.inferops.vllm_cluster.plugins.module_utils import _upgrade


class ActionModule(ActionBase):
    _supports_check_mode = False
    _supports_async = True

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        del tmp
        cli = dict(context.CLIARGS)
        refused = _upgrade.prompts_asked(cli)
        if refused:
            result.update(failed=True, msg=refused)
            return result
        args = dict(self._task.args, caller_options=_upgrade.passed_on(cli), extra_vars=_upgrade.extra_vars(cli))
        wrap_async = self._task.async_val and not self._connection.has_native_async
        result = merge_hash(result, self._execute_module(module_name="inferops.vllm_cluster.playbook_run",
                                                         module_args=args, task_vars=task_vars, wrap_async=wrap_async))
        if not wrap_async:
            self._remove_tmp_path(self._connection._shell.tmpdir)
        return result
