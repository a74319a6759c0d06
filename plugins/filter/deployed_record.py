# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: deployed_record
short_description: The cluster's last known good version, as site.yml records it after a run that deployed every node
version_added: 0.7.0
author: inferops engineering (@inferops)
description:
  - From each node's version variables and its runtime image (C(docker_runtime_image_found)), the record of what
    runs; the problem instead when the nodes disagree on a version variable or on the image.
options:
  _input:
    description: Each node's version variables (inventory name -> {name -> value}).
    type: dict
    required: true
  images:
    description: Each node's C(docker_runtime_image_found) (image_id, vllm_version, ray_version).
    type: dict
    required: true
  head:
    description: The head's inventory name.
    type: str
    required: true
  cluster:
    description: C(vllm_cluster_name).
    type: str
    required: true
  date:
    description: When (UTC, ISO 8601).
    type: str
    required: true
  previous:
    description: The record there is; when it names the same version, its date stays (a re-run changes no file).
    type: dict
    default: {}
"""

EXAMPLES = r"""
- name: Build the record
  ansible.builtin.debug:
    msg: "{{ values | inferops.vllm_cluster.deployed_record(images, 'spark-1', 'vllm-cluster', '2026-12-06T04:00:00Z') }}"
"""

RETURN = r"""
_value:
  description: "{record: the record or {}, problem: a sentence or empty}."
  type: dict
"""

from ansible_collections.inferops.vllm_cluster.plugins.module_utils import _upgrade


def deployed_record(values, images, head, cluster, date, previous=None):
    try:
        version = _upgrade.version_values(values, head)
        return {"record": _upgrade.deployed_record(version, images, cluster, date, previous or {}), "problem": ""}
    except _upgrade.UpgradeError as refused:
        return {"record": {}, "problem": str(refused)}


class FilterModule:
    def filters(self):
        return {"deployed_record": deployed_record}
