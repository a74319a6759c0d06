# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Module settings_check, on the controller: every role's settings checked against their argument specs in one task
(plugins/module_utils/_settings.py says why). Like ansible.builtin.validate_argument_spec, but the play's message names
the host, every refused value and the roles' READMEs, without printing the merged spec (several hundred lines)."""

from __future__ import annotations

import pathlib

import yaml
from ansible.errors import AnsibleError
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.plugins.action import ActionBase

from ansible_collections.inferops.vllm_cluster.plugins.module_utils import _settings

# plugins/action/ -> the collection's root
ROLES = pathlib.Path(__file__).resolve().parents[2] / "roles"


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False
    _supports_check_mode = True

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        del tmp
        task_vars = task_vars or {}
        specs = {path.parent.parent.name: yaml.safe_load(path.read_text(encoding="utf-8"))
                 for path in sorted(ROLES.glob("*/meta/argument_specs.yml"))}
        try:
            options, owner = _settings.merged_options(specs, self._task.args.get("argument_spec") or {})
        except ValueError as error:
            result.update(failed=True, msg=str(error))
            return result
        # what is set, as ansible.builtin.validate_argument_spec reads it: each option the run has a value for, each
        # on its own: a value this play cannot evaluate yet (it reads its role's default, a fact a later layer sets, a
        # vault secret this run has no password for) is left to its role, which reads it in its own play
        given = {}
        for name in options:
            if name in task_vars:
                try:
                    given[name] = self._templar.template(task_vars[name])
                except AnsibleError:
                    continue
        checked = ArgumentSpecValidator(options).validate(given, validate_role_argument_spec=True)
        if checked.error_messages:
            # the values of settings marked no_log stay out of the message
            secrets = getattr(checked, "_no_log_values", set())
            message = _settings.problem(task_vars.get("inventory_hostname", "localhost"), checked.error_messages, owner,
                                        secrets)
            result.update(failed=True, msg=message)
            return result
        result.update(changed=False, checked=len(given), msg=f"{len(given)} settings checked against {len(options)} options")
        return result
