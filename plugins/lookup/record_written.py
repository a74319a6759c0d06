# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: record_written
short_description: Whether a record on the controller already holds what would be written
version_added: 0.4.0
author: inferops engineering (@inferops)
description:
  - True where the record file is a regular file (not a link) of exactly this content, mode C(0600), owned by the
    controller's user, in a directory of mode C(0700); false otherwise, a missing or unreadable file included.
  - Lets C(_common)'s C(controller_record) skip its writes on a run that changes nothing (two tasks on the
    controller, ~0.8 s); anything else found there is written as before, which puts it right.
options:
  _terms:
    description: The record file's path.
    type: list
    elements: str
    required: true
  content:
    description: What the writer would write.
    type: str
    required: true
"""

EXAMPLES = r"""
- name: Write the record only where it differs
  ansible.builtin.copy:
    content: "{{ record | to_nice_json }}\n"
    dest: "{{ path }}"
    mode: "0600"
  when: not lookup('inferops.vllm_cluster.record_written', path, content=(record | to_nice_json) ~ '\n')
"""

RETURN = r"""
_raw:
  description: One boolean a path.
  type: list
  elements: bool
"""

import os

from ansible.plugins.lookup import LookupBase

from ansible_collections.inferops.vllm_cluster.plugins.module_utils import _records


class LookupModule(LookupBase):
    def run(self, terms, variables=None, **kwargs):
        self.set_options(var_options=variables, direct=kwargs)
        content = self.get_option("content")
        # as the copy module on the controller reads it
        return [_records.already_written(os.path.expanduser(path), content) for path in terms]
