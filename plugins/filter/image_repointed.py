# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: image_repointed
short_description: Whether a node holds another image under the name the cluster last ran and passed with (F29)
version_added: 0.7.0
author: inferops engineering (@inferops)
description:
  - The F29 message when the last known good record names this image and a node holds another image ID under it;
    empty otherwise (no record, another image name, which is an upgrade, or the same ID).
options:
  _input:
    description: The last known good record (lookup C(cluster_record) kind C(deployed)); empty where there is none.
    type: dict
    required: true
  image:
    description: The image name the run deploys (C(vllm_cluster_image)).
    type: str
    required: true
  found:
    description: Each node's image ID under that name (inventory name -> ID; empty where absent).
    type: dict
    required: true
"""

EXAMPLES = r"""
- name: Check the tag
  ansible.builtin.assert:
    that: (record | inferops.vllm_cluster.image_repointed(vllm_cluster_image, found)) | length == 0
"""

RETURN = r"""
_value:
  description: The F29 message, or an empty string.
  type: str
"""

from ansible_collections.inferops.vllm_cluster.plugins.module_utils import _upgrade


def image_repointed(record, image, found):
    return _upgrade.repointed(record or {}, str(image), {str(host): str(value or "") for host, value in found.items()})


class FilterModule:
    def filters(self):
        return {"image_repointed": image_repointed}
