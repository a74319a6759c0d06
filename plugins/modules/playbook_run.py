#!/usr/bin/python
# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
module: playbook_run
short_description: One run of the collection's site.yml on the controller, for an upgrade or its way back (F30)
version_added: 0.7.0
author: inferops engineering (@inferops)
description:
  - Runs C(ansible-playbook) with the same Python as the calling run, on the same inventories, with its command-line
    options, the version under test or the one to go back to as extra variables from files, its output into O(log) (owner only,
    never through a link), and returns its exit status and the messages of what failed in it.
  - Run on the controller (C(delegate_to=localhost)) with C(async) by role C(upgrade); its action plugin passes on
    the calling run's own command-line options (O(caller_options)). The inner run's ANSIBLE_* environment is the caller's,
    with the default callback's results as one JSON line each so that its failures can be read back.
  - Changes what the inner run changes; fails itself only when the run cannot be started.
options:
  python:
    description: The Python that runs Ansible (C(ansible_playbook_python)).
    type: path
    required: true
  playbook:
    description: The playbook to run.
    type: path
    required: true
  inventories:
    description: The inventory sources (C(ansible_inventory_sources)).
    type: list
    elements: str
    required: true
  caller_options:
    description: The calling run's own command-line options, as its action plugin reads them (vault identities and
      password files, the connection's key, user, arguments, timeout and password file, privilege escalation, forks);
      set by the action plugin.
    type: list
    elements: str
    default: []
  extra_vars:
    description: The calling run's extra variables as given (they may carry secrets, never shown); set by the action
      plugin, passed before O(var_files), which win.
    type: list
    elements: str
    default: []
  var_files:
    description: Files of extra variables, later ones winning.
    type: list
    elements: path
    default: []
  verbosity:
    description: The calling run's verbosity.
    type: int
    default: 0
  config:
    description: The calling run's ansible.cfg (C(ansible_config_file)); empty for Ansible's own search.
    type: str
    default: ""
  chdir:
    description: Where the inner run starts (relative inventory paths are read from there).
    type: path
    required: true
  log:
    description: The file the inner run's output goes to, created owner only (replaced when it exists).
    type: path
    required: true
  lock:
    description: A file held locked while the inner run runs (owner only), so that a second upgrade of the cluster
      meanwhile fails at once instead of deploying beside it.
    type: path
    required: true
"""

EXAMPLES = r"""
- name: Deploy the new version with site.yml
  inferops.vllm_cluster.playbook_run:
    python: "{{ ansible_playbook_python }}"
    playbook: "{{ playbook_dir }}/../site.yml"
    inventories: "{{ ansible_inventory_sources }}"
    var_files: [/home/me/.cache/inferops-vllm-cluster/upgrade/forward.json]
    chdir: "{{ lookup('ansible.builtin.env', 'PWD') }}"
    log: /home/me/.cache/inferops-vllm-cluster/upgrade/forward.log
    lock: /home/me/.cache/inferops-vllm-cluster/upgrade/lock
  delegate_to: localhost
  async: 7200
  poll: 0
  register: upgrade_forward_job
"""

RETURN = r"""
rc:
  description: The inner run's exit status.
  returned: always
  type: int
failures:
  description: What failed in it, a line per failed result (host, message, task), at most three.
  returned: always
  type: list
  elements: str
busy:
  description: Another run holds O(lock) (nothing was run).
  returned: failure
  type: bool
tail:
  description: Its last 20 lines of output.
  returned: always
  type: list
  elements: str
"""

import fcntl
import os
import subprocess

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.inferops.vllm_cluster.plugins.module_utils import _upgrade


def main() -> None:
    module = AnsibleModule(argument_spec={"python": {"type": "path", "required": True},
                                          "playbook": {"type": "path", "required": True},
                                          "inventories": {"type": "list", "elements": "str", "required": True},
                                          "caller_options": {"type": "list", "elements": "str", "default": []},
                                          "extra_vars": {"type": "list", "elements": "str", "default": [],
                                                         "no_log": True},
                                          "var_files": {"type": "list", "elements": "path", "default": []},
                                          "verbosity": {"type": "int", "default": 0},
                                          "config": {"type": "str", "default": ""},
                                          "chdir": {"type": "path", "required": True},
                                          "log": {"type": "path", "required": True},
                                          "lock": {"type": "path", "required": True}})
    params = module.params
    argv = _upgrade.playbook_argv(params["python"], params["playbook"], params["inventories"], params["caller_options"],
                                  params["var_files"], params["verbosity"], params["extra_vars"])
    # the caller's tag selection from the environment would leave layers out of a run that deploys the whole cluster
    env = {name: value for name, value in os.environ.items() if name not in ("ANSIBLE_RUN_TAGS", "ANSIBLE_SKIP_TAGS")}
    env = dict(env, ANSIBLE_STDOUT_CALLBACK="default", ANSIBLE_CALLBACK_RESULT_FORMAT="json",
               ANSIBLE_CALLBACK_FORMAT_PRETTY="false", ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0",
               PYTHONUNBUFFERED="1")
    if params["config"]:
        env["ANSIBLE_CONFIG"] = params["config"]
    try:
        lock = os.open(params["lock"], os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as error:
        module.fail_json(msg=f"another upgrade of this cluster is running (lock {params['lock']}: {error}); wait for "
                             f"it, or read its log in {os.path.dirname(params['log'])}", busy=True)
    try:
        if os.path.lexists(params["log"]):
            os.unlink(params["log"])
        descriptor = os.open(params["log"], os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except OSError as error:
        module.fail_json(msg=f"cannot write the run's log {params['log']}: {error}")
    with os.fdopen(descriptor, "w+", encoding="utf-8", errors="replace") as log:
        try:
            rc = subprocess.call(argv, cwd=params["chdir"], env=env, stdin=subprocess.DEVNULL, stdout=log,
                                 stderr=subprocess.STDOUT)
        except OSError as error:
            module.fail_json(msg=f"cannot start {argv[0]}: {error}")
        # read back through the descriptor written, not the name
        log.seek(0)
        lines = log.read().splitlines()
    module.exit_json(changed=rc == 0, rc=rc, failures=_upgrade.failures(lines), tail=lines[-20:])


if __name__ == "__main__":
    main()
