# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: container_read
short_description: What a container's start decision reads of the node (node_state's arguments)
version_added: 0.4.0
author: inferops engineering (@inferops)
description:
  - C(container_read) returns the M(inferops.vllm_cluster.node_state) arguments the start decision of
    C(_common/tasks/container.yml) needs (C(containers), C(images), C(files), C(records)), from the spec's
    C(name), C(image) and C(env_file) only, so that a layer can ask them in a read it makes anyway.
  - The P(inferops.vllm_cluster.container_read_covers#filter) filter says whether such a read answers all of them.
options:
  _input:
    description: The container's spec; only C(name), C(image) and C(env_file) are read.
    type: dict
    required: true
  token_path:
    description: The Ray token's path on the node (empty where none is used).
    type: str
    required: true
  config_dir:
    description: The collection's directory on the node, where each container's record lies.
    type: str
    required: true
"""

EXAMPLES = r"""
- name: Read the worker's container and what its start decision needs, in one call
  inferops.vllm_cluster.node_state:
    containers: "{{ reading.containers }}"
    images: "{{ reading.images }}"
    files: "{{ reading.files }}"
    records: "{{ reading.records }}"
  register: worker_read
  vars:
    reading: "{{ {'name': 'vllm-cluster-ray-worker', 'image': image, 'env_file': env_file}
                 | inferops.vllm_cluster.container_read(token_path, config_dir) }}"
"""

RETURN = r"""
_value:
  description: C({containers, images, files, records}), lists of names and paths.
  type: dict
"""

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._container_plan import reading


def container_read(spec, token_path, config_dir):
    return reading(spec, token_path, config_dir)


class FilterModule:
    def filters(self):
        return {"container_read": container_read}
