# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: mask_secrets
short_description: Mask secrets in a container's environment, command line or a message
version_added: 0.2.0
author: inferops engineering (@inferops)
description:
  - C(env) masks the value of every C(NAME=value) whose name ends like a secret's (KEY, TOKEN, SECRET, PASSWORD,
    PASSWD, CREDENTIAL(S)), and the password of any C(user:password@) in a URL.
  - C(argv) masks the value of every flag named like a secret (C(--api-key X), C(--hf-token=X)) and URL passwords.
  - C(text) masks URL passwords in a string.
options:
  _input:
    description: A list of C(NAME=value) strings (env), a command line (argv), or a string (text).
    type: raw
    required: true
  kind:
    description: What the input is.
    type: str
    choices: [env, argv, text]
    default: env
"""

EXAMPLES = r"""
- name: Show a container's environment, secrets masked
  ansible.builtin.debug:
    msg: "{{ info.container.Config.Env | inferops.vllm_cluster.mask_secrets }}"

- name: Show its command line, secrets masked
  ansible.builtin.debug:
    msg: "{{ info.container.Config.Cmd | inferops.vllm_cluster.mask_secrets('argv') }}"
"""

RETURN = r"""
_value:
  description: The same list (or string) with secrets replaced by C(****).
  type: raw
"""

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._secrets import mask_argv, mask_env, mask_text


def mask_secrets(value, kind="env"):
    if kind == "argv":
        return mask_argv(value)
    if kind == "text":
        return mask_text(value)
    return mask_env(value)


class FilterModule:
    def filters(self):
        return {"mask_secrets": mask_secrets}
