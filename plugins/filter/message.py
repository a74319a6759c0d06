# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: message
short_description: A sentence of the collection's message tables, its fields filled
version_added: 0.4.0
author: inferops engineering (@inferops)
description:
  - For a task whose message needs no decision of its own (a failure that reports what a task found, a warning, a
    note), the sentence named C(TABLE.NAME) (C(runtime.NO_NVIDIA_CTK) is C(MESSAGES["NO_NVIDIA_CTK"]) of
    C(module_utils/_runtime.py)) with the fields given, citing the troubleshooting guide's section where it names a
    failure mode (C([F<n>])).
  - Fails when the key names no sentence, or the fields given are not exactly those the sentence asks for.
options:
  _input:
    description: The key, C(TABLE.NAME).
    type: str
    required: true
  fields:
    description: The sentence's fields, as keyword arguments (C(host=inventory_hostname)).
    type: dict
"""

EXAMPLES = r"""
- name: Fail without the NVIDIA Container Toolkit
  ansible.builtin.fail:
    msg: "{{ 'runtime.NO_NVIDIA_CTK' | inferops.vllm_cluster.message(host=inventory_hostname) }}"
"""

RETURN = r"""
_value:
  description: The sentence.
  type: str
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._messages import message as _message


def message(key, **fields):
    try:
        return _message(key, **fields)
    except ValueError as error:
        raise AnsibleFilterError(f"message: {error}") from None


class FilterModule:
    def filters(self):
        return {"message": message}
