# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: with_guide
short_description: Problems as one message that cites the troubleshooting guide's section of each failure mode
version_added: 0.4.0
author: inferops engineering (@inferops)
description:
  - Joins the problems with spaces and cites, at the end, the guide's section (C(#f<n>)) of each failure mode they
    name (C([F<n>])), once each, in the order they first appear. A section a problem already cites is not repeated.
  - The guide's address is written once, in the collection's Python (C(module_utils/_guide.py)); a task's message
    names no address of its own.
options:
  _input:
    description: The problems, each a sentence.
    type: list
    elements: str
    required: true
"""

EXAMPLES = r"""
- name: Fail on what the check found
  ansible.builtin.assert:
    that: _problems | length == 0
    fail_msg: "{{ _problems | inferops.vllm_cluster.with_guide }}"
  vars:
    _problems: ["[F18] spark-2: 3.1 GiB free, vLLM asks for 18.0 GiB."]
"""

RETURN = r"""
_value:
  description: The message, with C(See <guide>#f<n>) for each failure mode named.
  type: str
"""

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._guide import with_guide


class FilterModule:
    def filters(self):
        return {"with_guide": with_guide}
