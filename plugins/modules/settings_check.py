#!/usr/bin/python
# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
module: settings_check
short_description: Every role's settings checked against their argument specs, once per run
version_added: 0.4.0
author: inferops engineering (@inferops)
description:
  - Checks the values the run has for the settings of every role of the collection (the C(settings) entry point of
    each C(roles/*/meta/argument_specs.yml)) in one task, where Ansible would check a role's C(main) entry point in
    every play that runs the role. Run by the vllm_cluster role once per run (C(tasks/derive.yml)).
  - The other roles' defaults and required settings are left out of the check (a role's defaults are its
    C(defaults/main.yml); a setting it requires has its own check there). What is checked is the type and choices
    of what the inventory and the command line set, and vllm_cluster's required settings. A value the first play
    cannot evaluate yet (it reads its role's default, or a fact a later layer sets) is left to its role.
  - A playbook's later plays are not checked again; role parameters and play variables given there are not
    checked by it.
  - Fails naming the host, every refused value and the README of each role concerned; the merged spec is not
    printed. Runs on the controller (an action plugin); changes nothing.
options:
  argument_spec:
    description: vllm_cluster's own settings options, evaluated (its choices come from the backend table), checked
      with their defaults.
    type: dict
    default: {}
extends_documentation_fragment:
  - inferops.vllm_cluster.read_only
"""

EXAMPLES = r"""
- name: Check every role's settings against its argument spec
  inferops.vllm_cluster.settings_check:
    argument_spec: "{{ _vllm_cluster_argument_specs.argument_specs.settings.options }}"
"""

RETURN = r"""
checked:
  description: How many settings the run had a value for, and so were checked.
  returned: success
  type: int
msg:
  description: What was checked; on failure, the host, every refused value (those of settings marked no_log masked)
    and the README of each role concerned.
  returned: always
  type: str
"""
