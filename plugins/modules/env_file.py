#!/usr/bin/python
# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
module: env_file
short_description: A container's env file, root-only, with a diff that masks only the secrets
version_added: 0.4.0
author: inferops engineering (@inferops)
description:
  - Writes O(content) to O(path) (mode 0600, owned by the user Ansible runs as, root) when it, its mode or its owner
    differs, atomically (a new file renamed over the old).
  - With C(--diff) the change is shown line by line, names and values in clear but the values of secret names
    (named like one, V(KEY), V(TOKEN), V(SECRET), V(PASSWORD) at the end, or listed in O(masked_names)) and the
    credentials inside URLs. The old side shows in clear only the values of names the new side shows, so a name
    removed or marked secret since shows no value. The content itself is a no_log parameter.
  - Something other than a regular file at O(path) (a link, a folder) is refused, naming the host and the path.
options:
  path:
    description: The env file on the node.
    type: path
    required: true
  content:
    description: The whole file, as rendered (e.g. by the C(template) lookup).
    type: str
    required: true
  masked_names:
    description: Names whose values are masked in the diff besides those named like a secret.
    type: list
    elements: str
    default: []
attributes:
  check_mode:
    support: full
    description: In check mode nothing is written; changed and the diff say what would be.
  diff_mode:
    support: full
    description: The masked diff of the file.
"""

EXAMPLES = r"""
- name: Render a container's environment
  inferops.vllm_cluster.env_file:
    path: /etc/inferops-vllm-cluster/node.env
    content: "{{ lookup('ansible.builtin.template', 'cluster.env.j2') }}"
    masked_names: [MY_SERVICE_PASS]
"""

RETURN = r"""
path:
  description: The file written (or that would be).
  returned: always
  type: str
"""

import os
import stat

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._env_file import (
    MESSAGES,
    masked_diff,
    plan,
    read_existing,
    write_atomically,
)

MODE = 0o600


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "path": {"type": "path", "required": True},
            "content": {"type": "str", "required": True, "no_log": True},
            "masked_names": {"type": "list", "elements": "str", "default": []},
        },
        supports_check_mode=True,
    )
    path, content = module.params["path"], module.params["content"]
    try:
        before = read_existing(path)
    except ValueError as error:
        module.fail_json(msg=MESSAGES["NOT_A_FILE"].format(host=os.uname().nodename, path=path, what=error))
    info = os.lstat(path) if before is not None else None
    changed = plan(before, content, stat.S_IMODE(info.st_mode) if info else None, MODE,
                   info.st_uid if info else None, os.geteuid())
    result = {"changed": changed, "path": path}
    if module._diff and changed:  # pylint: disable=protected-access
        # Prepared by hand: a diff of before/after strings would be the no_log content itself, which Ansible then
        # replaces whole; each line here carries its +/-/space.
        result["diff"] = {"prepared": masked_diff(path, before, content, module.params["masked_names"])}
    if changed and not module.check_mode:
        try:
            write_atomically(path, content, MODE)
        except OSError as error:
            message = MESSAGES["NO_FOLDER"].format(host=os.uname().nodename, path=path, error=error.strerror or error)
            module.fail_json(msg=message)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
