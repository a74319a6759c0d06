# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: container_plan
short_description: Whether a container of the cluster must go to docker_container, decided from one read of the node
version_added: 0.4.0
author: inferops engineering (@inferops)
description:
  - Computes the digest of what the container is made from (the spec less C(restart) and C(pull), the image's ID, the
    sha256 of each file its processes read at start) and compares it, and the container's ID, with the record the
    last start left.
  - C(apply) is false only when the recorded container runs, made from the same digest, and no restart is asked.
options:
  _input:
    description: The container's spec (the community.docker.docker_container parameters).
    type: dict
    required: true
  node:
    description: The result of M(inferops.vllm_cluster.node_state) that read the container, its image, the files and the record.
    type: dict
    required: true
  record:
    description: The path of the container's record on the node.
    type: str
    required: true
  start_files:
    description: The files the container's processes read when they start (its env file, the Ray token).
    type: list
    elements: str
    required: true
"""

EXAMPLES = r"""
- name: Decide whether the head's container must be started or updated
  ansible.builtin.set_fact:
    head_plan: "{{ spec | inferops.vllm_cluster.container_plan(node, record_path, [env_file, token_path]) }}"
"""

RETURN = r"""
_value:
  description: C({apply, reason, digest, id, started_at}); C(reason) says why it goes to docker_container.
  type: dict
"""

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._container_plan import from_read


def container_plan(spec, node, record, start_files):
    return from_read(spec, node, record, start_files)


class FilterModule:
    def filters(self):
        return {"container_plan": container_plan}
