# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: runtime_image
short_description: The runtime image on a node, its ID and the Ray and vLLM versions it carries
version_added: 0.4.0
author: inferops engineering (@inferops)
description:
  - From M(inferops.vllm_cluster.node_state)'s read of the node (the image's ID, the versions recorded for an image
    ID) and, where it ran, the throwaway container that prints the versions the image carries.
  - An image ID names its content, so a complete record of this ID stands and RV(_value.needs_reading) is false.
options:
  _input:
    description: node_state's read of the node, with O(image) among its C(images) and O(record) among its C(records).
    type: dict
    required: true
  image:
    description: The runtime image's name (C(vllm_cluster_image)).
    type: str
    required: true
  record_path:
    description: The path of the node's record of the image's versions.
    type: str
    required: true
  host:
    description: The node, for the messages that name it.
    type: str
    required: true
  after:
    description: node_state's read of the image once it was put on the node; read only where O(_input) found none.
    type: dict
  probe:
    description: The M(community.docker.docker_container) result of the container that printed the versions.
    type: dict
"""

EXAMPLES = r"""
- name: Keep the image's ID and versions
  ansible.builtin.set_fact:
    found: "{{ node_read | inferops.vllm_cluster.runtime_image('vllm/vllm-openai:v0.32.0', '/etc/x/versions.json',
               inventory_hostname, after_read, versions_container) }}"
"""

RETURN = r"""
_value:
  description: What is known of the image on the node.
  type: dict
  contains:
    host:
      description: The node.
      type: str
    image_id:
      description: The image's ID; empty where the node holds no such image.
      type: str
    needs_reading:
      description: Whether its versions must be read from the image (no complete record of this ID).
      type: bool
    versions:
      description: The versions (and import errors) recorded or read.
      type: dict
    ray_version:
      description: Ray's version; empty where it did not import.
      type: str
    vllm_version:
      description: vLLM's version; empty where it could not be read.
      type: str
    detail:
      description: The container's last line where it printed no versions (why).
      type: str
    record:
      description: What to record on the node (image ID and versions) where the container answered; null otherwise.
      type: dict
"""

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._images import runtime_image


class FilterModule:
    def filters(self):
        return {"runtime_image": runtime_image}
