# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: outside_images
short_description: The runtime image ID and recorded Ray version of nodes a run does not target (--limit)
version_added: 0.2.0
author: inferops engineering (@inferops)
description:
  - Joins the loop results of M(community.docker.docker_image_info) and M(ansible.builtin.slurp) of the Ray version
    record, both delegated to the cluster's nodes outside the run, into one row per node that holds the image.
  - A record names the image ID it was read from; one for another image gives no version.
options:
  _input:
    description: The C(results) of the delegated docker_image_info loop (item = host).
    type: list
    elements: dict
    required: true
  records:
    description: The C(results) of the delegated slurp loop of the record (item = host).
    type: list
    elements: dict
    required: true
"""

EXAMPLES = r"""
- name: Rows of the nodes outside --limit
  ansible.builtin.debug:
    msg: "{{ image_info.results | inferops.vllm_cluster.outside_images(record_reads.results) }}"
"""

RETURN = r"""
_value:
  description: One dict per node holding the image, with host, image_id and ray_version (empty when unrecorded).
  type: list
  elements: dict
"""

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._images import outside_images


class FilterModule:
    def filters(self):
        return {"outside_images": outside_images}
