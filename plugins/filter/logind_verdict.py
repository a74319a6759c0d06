# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: logind_verdict
short_description: Whether systemd-logind's RemoveIPC can remove the cluster's IPC objects on a node (F13)
version_added: 0.3.0
author: inferops engineering (@inferops)
description:
  - RemoveIPC (on unless configured off) removes the System V IPC of a non-system user without linger when that
    user's last session ends. The cluster's containers are affected only where a rootless dockerd runs them as
    that user; under a rootful dockerd their processes belong to root.
  - Returns C(fail) (the containers are exposed), C(note) (the user is, the containers are not) or C(ok).
options:
  _input:
    description: The output of C(systemd-analyze cat-config systemd/logind.conf).
    type: str
    required: true
  uid:
    description: The connecting user's uid.
    type: int
    required: true
  linger:
    description: Whether that user lingers (C(loginctl show-user --property=Linger)).
    type: bool
    required: true
  rootless:
    description: Whether the node's dockerd runs rootless (C(docker info) lists C(name=rootless)).
    type: bool
    required: true
"""

EXAMPLES = r"""
- name: Decide F13
  ansible.builtin.set_fact:
    verdict: "{{ logind_config.stdout | inferops.vllm_cluster.logind_verdict(1000, false, false) }}"
"""

RETURN = r"""
_value:
  description: C(fail), C(note) or C(ok).
  type: str
"""

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._logind import logind_verdict


class FilterModule:
    def filters(self):
        return {"logind_verdict": logind_verdict}
