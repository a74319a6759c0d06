# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: upgrade_locked
short_description: Why an upgrade cannot take the cluster's upgrade lock on the controller (F30)
version_added: 0.7.0
author: inferops engineering (@inferops)
description:
  - The F30 message naming the lock (a directory an upgrade makes with C(mkdir), removed when it ends) and since
    when it exists (another upgrade of the cluster runs, or one was interrupted).
options:
  _input:
    description: The lock's path on the controller.
    type: str
    required: true
"""

EXAMPLES = r"""
- name: Say who holds the lock
  ansible.builtin.fail:
    msg: "{{ lock_path | inferops.vllm_cluster.upgrade_locked }}"
"""

RETURN = r"""
_value:
  description: The F30 message.
  type: str
"""

import os
import time

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._guide import TROUBLESHOOTING
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._upgrade import MESSAGES


def upgrade_locked(path):
    try:
        since = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(os.lstat(path).st_mtime))
    except OSError:
        since = "a moment ago"
    return MESSAGES["LOCKED"].format(path=path, since=since, doc=TROUBLESHOOTING)


class FilterModule:
    def filters(self):
        return {"upgrade_locked": upgrade_locked}
