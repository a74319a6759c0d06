# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: pinned_env_drift
short_description: The pinned variables a container holds with another value than the inventory's
version_added: 0.2.0
author: inferops engineering (@inferops)
description:
  - Compares a container's environment (C(Config.Env) of C(docker inspect)) with the variables the collection pins
    (the interconnect address and interfaces). Something that overrode them would go unseen by every other check.
options:
  _input:
    description: The container's C(Config.Env) list (C(NAME=value) strings).
    type: list
    elements: str
    required: true
  expected:
    description: The pinned variables and their values.
    type: dict
    required: true
"""

EXAMPLES = r"""
- name: Pinned variables a container holds with another value
  ansible.builtin.debug:
    msg: "{{ info.container.Config.Env | inferops.vllm_cluster.pinned_env_drift({'VLLM_HOST_IP': '192.168.200.12'}) }}"
"""

RETURN = r"""
_value:
  description: "One C(NAME=actual (pinned: expected)) per variable that differs; empty when none."
  type: list
  elements: str
"""

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._env import pinned_env_drift


class FilterModule:
    def filters(self):
        return {"pinned_env_drift": pinned_env_drift}
